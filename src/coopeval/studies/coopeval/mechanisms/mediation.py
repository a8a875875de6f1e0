"""Mediation: a voted mediator plays for the players who delegate to it.

CoopEval (arXiv 2604.15267) docs/protocol/answers.md#parsing and docs/protocol/mechanisms.md#mediation. The game gains the extra action ``A{n}``
("delegate to the mediator", n = number of base actions). Each seated agent designs one
mediator ``{"1": "A?", …, "N": "A?"}`` (number of delegators → base action) per cell; each
matchup votes over its N designs and plays one round. With d ≥ 1 delegators, every delegator
plays mapping[d]; payoffs are base payoffs of the resolved profile. A delegated move is
recorded with its resolved base action and ``mediated = True``. Stored discount 1.0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from coopeval.agents.protocol import Agent
from coopeval.decisions.formats import AnswerFormat, ApprovalVote, MediatorDesign, MediatorVote
from coopeval.games.base import Game
from coopeval.games.designs import mediator_ns, mediator_wd
from coopeval.studies.coopeval.mechanisms.base import CellContext, CellRecords, bot_state
from coopeval.studies.coopeval.mechanisms.design_vote import DesignVoteMechanism
from coopeval.studies.coopeval.mechanisms.selection import Design, Selection


def enforcing_mediator(game: Game) -> dict[str, str]:
    """The cooperation-enforcing mediator of ``game`` (CoopEval Theorem 1; docs/protocol/games.md#theorem-1).

    mapping[N] = the cooperative action (everyone delegated), mapping[d < N] = the Nash-baseline
    action (grim trigger against anyone who acts alone). Against the base game this design is
    Nash-stable (docs/protocol/design-checks.md#ns-wd) in the PD, Public Goods, Traveller's Dilemma, Trust Game and Stag Hunt,
    and also weakly dominant in the PD and Public Goods; in Matching Pennies no mediator is
    Nash-stable.

    Raises
    ------
    ValueError
        If the seats do not share one cooperative and one baseline action.
    """
    if len(set(game.cooperative_profile)) != 1 or len(set(game.nash_profile)) != 1:
        raise ValueError(f"{game.name}: a mediator plays one action for all delegators; the seats' "
                         "cooperative and baseline actions must coincide")
    n = game.n_players
    coop, base = game.tokens[game.cooperative_action], game.tokens[game.baseline_action]
    return {str(d): (coop if d == n else base) for d in range(1, n + 1)}


def enforcing_mediator_quality(game: Game) -> dict[str, bool]:
    """NS and WD of :func:`enforcing_mediator` (docs/protocol/design-checks.md#ns-wd checks)."""
    mapping = enforcing_mediator(game)
    return {"NS": mediator_ns(game, mapping), "WD": mediator_wd(game, mapping)}


def resolve_delegation(
    game: Game, mapping: Mapping[str, str], drawn: Sequence[int]
) -> tuple[list[int], list[float], list[float], list[bool]]:
    """Resolve a sampled profile over A0..A{n} (A{n} = delegate) (docs/protocol/mechanisms.md#mediation step 6).

    Returns (resolved base actions, points, base points, mediated flags); under Mediation the
    points are the base payoffs of the resolved profile.

    Raises
    ------
    ValueError
        If an index is outside 0..n or the mapping lacks a needed delegator count.
    """
    delegate = game.n_actions
    if any(not 0 <= a <= delegate for a in drawn):
        raise ValueError(f"drawn actions {list(drawn)} outside 0..{delegate}")
    d = sum(1 for a in drawn if a == delegate)
    mediated_action = -1  # used only when d ≥ 1
    if d:
        token = mapping[str(d)]
        if token not in game.tokens:
            raise ValueError(f"mapping[{d}] = {token!r} is not a base action of {game.name}")
        mediated_action = game.tokens.index(token)
    resolved = [mediated_action if a == delegate else a for a in drawn]
    payoffs = list(game.payoffs(tuple(resolved)))
    return resolved, payoffs, list(payoffs), [a == delegate for a in drawn]


class Mediation(DesignVoteMechanism):
    """Mediation (CoopEval docs/protocol/answers.md#parsing; docs/protocol/mechanisms.md#mediation): design, approval vote, play with delegation.

    No parameters. Bots receive ``enforcing_design`` (:func:`enforcing_mediator`), the vote
    ``options``, and for the action ``delegate_token`` and ``mediator_enforcing`` (whether the
    selected mediator equals the enforcing one).
    """

    vote_format: ClassVar[type[ApprovalVote]] = MediatorVote
    templates: ClassVar[tuple[str, ...]] = ("mediation_play", "mediation_rule_one", "mediation_rule_many")

    def design_format(self, ctx: CellContext) -> AnswerFormat:
        return MediatorDesign.for_players(ctx.game.n_players, ctx.game.tokens)

    def enforcing_design(self, ctx: CellContext) -> Design:
        return enforcing_mediator(ctx.game)

    def rules_text(self, ctx: CellContext) -> str:
        return ctx.prompts.render("mediation_rules")

    def design_task(self, ctx: CellContext, fmt: AnswerFormat) -> str:
        return ctx.prompts.render(
            "mediation_design",
            n_players=ctx.game.n_players,
            base_tokens=", ".join(ctx.game.tokens),
            keys=", ".join(f'"{k}"' for k in fmt.keys),
            example="{" + ", ".join(f'"{k}": "<ACTION>"' for k in fmt.keys) + "}",
        )

    def design_hints(self, ctx: CellContext, fmt: AnswerFormat) -> dict[str, str]:
        """Per key d (a number of delegating players), what its action is: the one the mediator
        plays for every delegator when d players delegate (docs/protocol/mechanisms.md#mediation)."""
        n = ctx.game.n_players
        return {
            str(d): (f"If {d} of the {n} players delegate{'s' if d == 1 else ''} to the mediator: the action it plays for "
                     f"{'that player' if d == 1 else f'each of the {d}'}")
            for d in range(1, n + 1)
        }  # fmt: skip

    def describe_option(self, ctx: CellContext, design: Design) -> str:
        game = ctx.game
        lines = []
        for d in range(1, game.n_players + 1):
            token = str(design[str(d)])
            label = game.actions[game.tokens.index(token)]
            rule = "mediation_rule_one" if d == 1 else "mediation_rule_many"
            lines.append(ctx.prompts.render(rule, d=d, token=token, label=label))
        return "\n".join(lines)

    async def after_vote(
        self, ctx: CellContext, seated: tuple[Agent, ...], mid: str, selection: Selection, records: CellRecords
    ) -> str:
        game = ctx.game
        self.append_selection(ctx, mid, selection, records)
        delegate = f"A{game.n_actions}"
        tokens = (*game.tokens, delegate)
        enforcing = selection.design == self.enforcing_design(ctx)
        proposer = selection.designer.rsplit("#P", 1)[1]
        section = ctx.prompts.render(
            "mediation_play",
            proposer=proposer,
            mapping=self.describe_option(ctx, selection.design),
            delegate_token=delegate,
        )
        states = [
            bot_state(ctx, seat, [], delegate_token=delegate, mediator_enforcing=enforcing, mediator=selection.design)
            for seat in range(game.n_players)
        ]
        return await self.play_round(
            ctx,
            seated,
            mid,
            tokens,
            [section] * game.n_players,
            states,
            lambda drawn: resolve_delegation(game, selection.design, drawn),
            records,
        )
