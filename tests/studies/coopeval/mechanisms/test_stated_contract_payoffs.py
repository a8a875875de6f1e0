"""A contract's description states what the engine pays under it (issue 13 kind 11b).

The option text is parsed back ("receives X points, paid in equal shares by the other players"
/ "pays X points, shared equally among the other players" / "no payment"), the transfers it
describes are computed from that wording, and base payoff + described transfer must equal the
engine's post-contract points for every profile and seat, for random contracts in every game.
"""

from __future__ import annotations

import itertools
import math
import re
from types import SimpleNamespace

from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.core.prompts import PromptLibrary
from coopeval.games import GAME_FACTORIES, get_game
from coopeval.studies.coopeval.mechanisms import get_mechanism
from coopeval.studies.coopeval.mechanisms.contracting import contract_points
from tests.shared_data import PROMPTS_DIR

PROMPTS = PromptLibrary(PROMPTS_DIR)
LINE = re.compile(r"^- (A\d+) \([^)]*\): (.*)$", re.M)


def described_transfers(text: str, tokens: tuple[str, ...], profile: tuple[int, ...]) -> list[float]:
    """Each seat's net transfer under the contract as the text words it."""
    value: dict[str, float] = {}
    for token, effect in LINE.findall(text):
        if effect == "no payment":
            value[token] = 0.0
        elif m := re.match(r"the player who plays it receives (\S+) points?, paid (?:by the other player|in equal shares by the other players)$", effect):
            value[token] = float(m.group(1))
        elif m := re.match(r"the player who plays it pays (\S+) points?, (?:which go to the other player|shared equally among the other players)$", effect):
            value[token] = -float(m.group(1))
        else:
            raise AssertionError(f"unparsed contract line: {effect!r}")
    assert sorted(value) == sorted(tokens)
    n = len(profile)
    net = [0.0] * n
    for i, a in enumerate(profile):
        x = value[tokens[a]]
        net[i] += x  # receives X (or pays |X|) ...
        for j in range(n):
            if j != i:
                net[j] -= x / (n - 1)  # ... from (to) the others in equal shares
    return net


@settings(max_examples=80, deadline=None)
@given(key=st.sampled_from(sorted(GAME_FACTORIES)), data=st.data())
def test_contract_text_states_the_paid_points(key: str, data: st.DataObject) -> None:
    game = get_game(key)
    contract = {t: data.draw(st.integers(-30, 30), label=t) for t in game.tokens}
    ctx = SimpleNamespace(game=game, prompts=PROMPTS, compat={})
    text = get_mechanism("Contracting").describe_option(ctx, contract)  # type: ignore[arg-type]
    for profile in itertools.product(range(game.n_actions), repeat=game.n_players):
        _, points, base, _ = contract_points(game, contract, True, profile)
        stated = [b + t for b, t in zip(base, described_transfers(text, game.tokens, profile), strict=True)]
        assert all(math.isclose(s, p, rel_tol=1e-9, abs_tol=1e-9) for s, p in zip(stated, points, strict=True)), (profile, text)
