"""The six CoopEval games with their exact payoffs (CoopEval, arXiv 2604.15267, §2 / docs/protocol/games.md).

Each function returns a :class:`~coopeval.games.base.Game`. Payoff descriptions are rendered
per seat from the payoff table, so every seat is told its own payoffs (docs/protocol/games.md#matching-pennies, our default).
Their wording is in the templates ``games/prompts/*.txt`` (:data:`GAME_TEXTS`); the rendered
texts are part of each cell's game fingerprint, so rewording one re-runs the cells of that game.
"""

from __future__ import annotations

from pathlib import Path

from coopeval.core.prompts import TemplateFolder, number_text
from coopeval.games.base import (
    Game,
    Profile,
    action_token,
    symmetric_two_player_table,
    table_from_function,
)

GAME_TEXTS = TemplateFolder(Path(__file__).resolve().parent / "prompts")
"""The payoff descriptions' wording (outcome lines, the Public Goods and Traveller's Dilemma rules)."""


def _two_player_rules(table: dict[Profile, tuple[float, ...]], actions: tuple[str, ...]) -> tuple[str, ...]:
    """One outcome line per profile, written from each seat's own perspective."""
    rules = []
    for seat in range(2):
        other = 1 - seat
        lines = []
        for mine in range(len(actions)):
            for theirs in range(len(actions)):
                profile = (mine, theirs) if seat == 0 else (theirs, mine)
                pay = table[profile]
                lines.append(
                    GAME_TEXTS.render(
                        "outcome_line", mine=action_token(mine), theirs=action_token(theirs), my_points=_fmt(pay[seat]),
                        their_points=_fmt(pay[other]),
                    )
                )
        rules.append("\n".join(lines))
    return tuple(rules)


def _fmt(x: float) -> str:
    return number_text(x)


def _two_player_game(
    name: str,
    key: str,
    title: str,
    actions: tuple[str, ...],
    table: dict[Profile, tuple[float, ...]],
    cooperative: int = 0,
    nash: int = 1,
    rules_prefix: str = "",
    **options: object,
) -> Game:
    """A 2-player game whose seats share the cooperative and Nash actions."""
    return Game(
        name=name,
        key=key,
        title=title,
        n_players=2,
        actions=actions,
        payoff_table=table,
        cooperative_profile=(cooperative, cooperative),
        nash_profile=(nash, nash),
        seat_rules=tuple(rules_prefix + r for r in _two_player_rules(table, actions)),
        **options,  # type: ignore[arg-type]
    )


def prisoners_dilemma() -> Game:
    """Prisoner's Dilemma: C/D with (R, S, T, P) = (2, 0, 3, 1); NE (D, D) = 1, cooperative 2."""
    table = symmetric_two_player_table([[2, 0], [3, 1]])
    return _two_player_game(
        "PrisonersDilemma", "prisoners_dilemma", "Prisoner's Dilemma", ("Cooperate", "Defect"), table
    )


PUBLIC_GOODS_MAX_PLAYERS = 10
"""Largest Public Goods group: the payoff table holds every one of the 2^N profiles (1024 at
N = 10), and the metagame tensor S^N cells (docs/protocol/games.md#public-goods)."""


def _count_word(n: int) -> str:
    """``n`` as the prompts write a count of players: a word up to ten (``three``), digits above."""
    words = GAME_TEXTS.render("number_words").split()
    return words[n] if n < len(words) else str(n)


def public_goods(multiplier: float = 1.5, endowment: float = 1.0, players: int = 3) -> Game:
    """Public Goods with N = ``players`` seats (CoopEval, arXiv 2604.15267, §2, plays N = 3;
    docs/protocol/games.md#public-goods): with k contributors out of N, a contributor gets
    multiplier·endowment·k/N and a free-rider endowment + multiplier·endowment·k/N (points).
    NE all free-ride (endowment), cooperative all contribute (multiplier·endowment); a social
    dilemma while 1 < multiplier < N.

    Raises
    ------
    ValueError
        If ``players`` is not an integer in 2..:data:`PUBLIC_GOODS_MAX_PLAYERS`.
    """
    if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= PUBLIC_GOODS_MAX_PLAYERS:
        raise ValueError(
            f"public_goods: players = {players!r}; expected an integer from 2 to {PUBLIC_GOODS_MAX_PLAYERS}"
        )
    n = players
    actions = ("Contribute", "Free-ride")

    def payoff(profile: Profile) -> tuple[float, ...]:
        k = sum(1 for a in profile if a == 0)
        share = multiplier * endowment * k / n
        return tuple(share if a == 0 else endowment + share for a in profile)

    # The stated numbers come from the payoff function itself: with k contributors a contributor
    # gets share·k/N and a free-rider base + share·k/N, share = a contributor's payoff when all
    # contribute, base = a free-rider's payoff when nobody does (issue 13 kind 11b).
    share = payoff((0,) * n)[0]
    base = payoff((1,) * n)[0]
    others = n - 1
    rule = GAME_TEXTS.render(
        "public_goods_rules",
        others_sentence=GAME_TEXTS.render("public_goods_others_one")
        if others == 1
        else GAME_TEXTS.render("public_goods_others_many", others=_count_word(others)),
        endowment=_fmt(endowment),
        point_word=GAME_TEXTS.render("point_one" if endowment == 1 else "point_many"),
        multiplier=_fmt(multiplier),
        among=GAME_TEXTS.render("public_goods_among_two")
        if n == 2
        else GAME_TEXTS.render("public_goods_among_many", players=_count_word(n)),
        share=_fmt(share),
        base=_fmt(base),
        n=n,
    )
    return Game(
        name="PublicGoods",
        key="public_goods",
        title="Public Goods",
        n_players=n,
        actions=actions,
        payoff_table=table_from_function(n, 2, payoff),
        cooperative_profile=(0,) * n,
        nash_profile=(1,) * n,
        seat_rules=(rule,) * n,
        extra={"multiplier": multiplier, "endowment": endowment},
    )


def travellers_dilemma(min_claim: int = 2, n_claims: int = 4, spacing: int = 1, bonus: int = 2,
                       penalty: bool = True) -> Game:
    """Traveller's Dilemma: claims min_claim + spacing·i. Equal claims X: both get X; otherwise,
    with m the lower claim, the lower claimant gets m + bonus and the higher m − bonus
    (``penalty=False``: the higher gets m, the degenerate variant of docs/protocol/games.md#travellers-dilemma).
    NE both claim the minimum (2); cooperative both claim the maximum (5).
    """
    claims = [min_claim + spacing * i for i in range(n_claims)]
    actions = tuple(f"Claim {c}" for c in claims)

    def payoff(profile: Profile) -> tuple[float, ...]:
        x, y = claims[profile[0]], claims[profile[1]]
        if x == y:
            return (x, y)
        m = min(x, y)
        high = m - bonus if penalty else m
        return (m + bonus, high) if x < y else (high, m + bonus)

    table = table_from_function(2, n_claims, payoff)
    summary = GAME_TEXTS.render("travellers_rules", bonus=bonus, sign="-" if penalty else "+", higher_change=bonus if penalty else 0) + "\n"
    return _two_player_game(
        "TravellersDilemma",
        "travellers_dilemma",
        "Traveller's Dilemma",
        actions,
        table,
        cooperative=n_claims - 1,
        nash=0,
        rules_prefix=summary,
        extra={"claims": claims, "penalty": penalty},
    )


def trust_game() -> Game:
    """Simultaneous Trust Game (asymmetric). Seat 1 trustor, seat 2 trustee; Give/Keep.
    (G,G) = (10,10), (G,K) = (0,20), (K,G) = (6,2), (K,K) = (4,4). NE (K,K) = 4; cooperative 10.
    """
    table = {(0, 0): (10.0, 10.0), (0, 1): (0.0, 20.0), (1, 0): (6.0, 2.0), (1, 1): (4.0, 4.0)}
    return _two_player_game("TrustGame", "trust_game", "Trust Game", ("Give", "Keep"), table, symmetric=False)


def stag_hunt() -> Game:
    """Stag Hunt: SS (5,5), SH (0,3), HS (3,0), HH (3,3). Baseline hare-hare 3; cooperative 5."""
    table = symmetric_two_player_table([[5, 0], [3, 3]])
    return _two_player_game("StagHunt", "stag_hunt", "Stag Hunt", ("Stag", "Hare"), table)


def matching_pennies(symmetric_description: bool = False) -> Game:
    """Matching Pennies (zero-sum): P1 wins 1 on a match, P2 on a mismatch. Heads is the
    arbitrary 'cooperative' action. The equilibrium is mixed, so normalisation values are
    declared: −1 → 0, 0 → 1 (docs/protocol/games.md#normalisation). ``symmetric_description`` reproduces the reference
    bug of telling seat 2 seat 1's payoffs (``compat.mp_symmetric_description``).
    """
    actions = ("Heads", "Tails")
    table = {(0, 0): (1.0, -1.0), (0, 1): (-1.0, 1.0), (1, 0): (-1.0, 1.0), (1, 1): (1.0, -1.0)}
    rules = _two_player_rules(table, actions)
    if symmetric_description:
        rules = (rules[0], rules[0])
    return Game(
        name="MatchingPennies",
        key="matching_pennies",
        title="Matching Pennies",
        n_players=2,
        actions=actions,
        payoff_table=table,
        cooperative_profile=(0, 0),
        nash_profile=(1, 1),
        seat_rules=rules,
        symmetric=False,
        declared_ne_value=-1.0,
        declared_coop_value=0.0,
    )
