"""The testbed registry declares each testbed once; the config schema, schedules, costs, figure
and table order are derived from it (issue 20)."""

from __future__ import annotations

from typing import Any

import pytest

from coopeval.studies.gossip.catalog import table_stems
from coopeval.studies.gossip.config import load_schema
from coopeval.studies.gossip.study import GossipStudy
from coopeval.studies.gossip.testbeds import COOPERATIVE_ACTIONS, REGISTRY, TESTBEDS, make_testbed
from coopeval.studies.gossip.testbeds import testbed_entry as entry_of

STUDY = GossipStudy()

# The hand-written schema of c0a5a29 (config.schema.yaml), which the registry now produces.
_N = {"type": "integer", "minimum": 2, "maximum": 12}
_GAMMA = {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}
_HORIZON = {"enum": ["infinite", "finite"]}
OLD_PARAMS: dict[str, dict[str, Any]] = {
    "donation": {"n": _N, "b": {"type": "number"}, "c": {"type": "number"}, "gamma": _GAMMA, "horizon": _HORIZON,
                 "initial_resources": {"type": "number"}},
    "pd": {"n": _N, "b": {"type": "number"}, "c": {"type": "number"}, "gamma": _GAMMA, "horizon": _HORIZON,
           "initial_resources": {"type": "number"}},
    "trust": {"n": _N, "multiplier": {"type": "number", "exclusiveMinimum": 0}, "gamma": _GAMMA, "horizon": _HORIZON,
              "initial_resources": {"type": "number", "minimum": 0}},
    "market": {"n_sellers": {"type": "integer", "minimum": 1, "maximum": 6}, "n_buyers": {"type": "integer", "minimum": 1, "maximum": 6},
               "gamma": _GAMMA, "horizon": _HORIZON},
}


def _without_descriptions(schema: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if k != "description"}


def test_schema_enum_and_params_come_from_the_registry() -> None:
    props = load_schema()["properties"]
    assert props["testbeds"]["items"] == {"enum": ["donation", "pd", "trust", "market"]}
    derived = props["testbed_params"]["properties"]
    assert list(derived) == list(OLD_PARAMS)
    for key, params in OLD_PARAMS.items():
        assert derived[key]["additionalProperties"] is False
        assert {name: _without_descriptions(s) for name, s in derived[key]["properties"].items()} == params
    assert derived["donation"]["properties"]["b"]["description"] == "units"


def test_entries_carry_parameters_roles_and_order() -> None:
    assert TESTBEDS == ("donation", "pd", "trust", "market")
    assert REGISTRY["donation"].parameters()["n"] == (9, "agents")
    assert REGISTRY["trust"].parameters()["initial_resources"] == (5.0, "units")
    assert REGISTRY["market"].parameters()["price_c"] == (3.0, "units")
    assert [REGISTRY[k].roles for k in TESTBEDS] == [
        ("donor", "recipient"), ("player_1", "player_2"), ("investor", "trustee"), ("seller", "buyer"),
    ]
    assert [REGISTRY[k].prompt_roles for k in TESTBEDS] == [
        ("donor", "recipient"), ("player", "player"), ("investor", "responder"), ("seller", "buyer"),
    ]
    assert [REGISTRY[k].simultaneous for k in TESTBEDS] == [False, True, False, True]
    assert COOPERATIVE_ACTIONS == ("cooperate", "C", "H")
    assert make_testbed("pd", n=4).n == 4
    with pytest.raises(ValueError, match="unknown testbed 'chess'; known: donation, pd, trust, market"):
        entry_of("chess")


def test_table_stems_follow_registry_order() -> None:
    assert table_stems(["market", "donation", "trust"]) == ["gossip_donation", "gossip_trust", "gossip_market"]


@pytest.mark.parametrize(
    "testbed, condition, expected",
    [
        # rounds x (actions + witnesses) per round, as the study declared them at c0a5a29:
        ("donation", "align", 36 * 2), ("donation", "no_gossip", 36 * 1), ("pd", "align", 10 * 4), ("trust", "align", 10 * 4),
        ("market", "align", 36 * 3), ("market", "no_gossip", 36 * 2), ("donation", "reflection_call", 36 * 2 * 2),
        # Max: only the honest side of Max's 8 (donation, n = 9) or 4 (PD, n = 5) rounds calls the model
        ("donation", "max", 8), ("pd", "max", 4 * 2), ("pd", "max_no_gossip", 4),
    ],
)
def test_cost_from_registry(testbed: str, condition: str, expected: int) -> None:
    cells = STUDY.cells({"seed": 1, "gossip": {"testbeds": [testbed], "conditions": [condition], "models": [{"model": "local/smollm2-135m"}]}})
    assert STUDY.cost(cells[0]) == expected


def test_testbeds_play_the_engines_stage_games() -> None:
    """Each testbed is an engine stage game plus population parameters (issue 20 item 2): its
    payoffs are the engine class's, and only the trust game renames a role (ALIGN's responder)."""
    from coopeval.games.donation import BinaryDonationGame, DonationPrisonersDilemma
    from coopeval.games.market import ProductChoiceMarket
    from coopeval.games.trust import SequentialTrustGame

    engine = {"donation": BinaryDonationGame, "pd": DonationPrisonersDilemma, "trust": SequentialTrustGame, "market": ProductChoiceMarket}
    for key, stage in engine.items():
        game = REGISTRY[key].game
        assert issubclass(game, stage) and game.payoff is stage.payoff
        assert REGISTRY[key].prompt_roles == (stage.roles if key != "trust" else ("investor", "responder"))
        assert game.roles == stage.roles and game.simultaneous == stage.simultaneous  # declared once, by the stage game
    assert SequentialTrustGame.roles == ("investor", "trustee")


def test_every_testbed_declares_two_distinct_roles() -> None:
    """The store's columns are named after the roles (issue 20 item 2), so the two roles of every
    testbed are distinct lower-case identifiers, derived from its stage game: a symmetric game's
    shared role numbered (the PD's player_1, player_2)."""
    from coopeval.games.roles import role_names

    for key in TESTBEDS:
        first, second = REGISTRY[key].roles
        assert first != second and first.isidentifier() and second.isidentifier(), key
        assert (first, second) == role_names(REGISTRY[key].game)
    assert REGISTRY["pd"].game.roles == ("player", "player") and REGISTRY["pd"].simultaneous
    assert make_testbed("donation", b=3.0, c=0.5).payoff("cooperate") == (-0.5, 3.0)
    assert make_testbed("trust", multiplier=2.0).payoff(1.0, 0.5) == (-0.5, 1.5)


def test_rounds_view_names_columns_by_role_and_refuses_clashing_roles(monkeypatch: pytest.MonkeyPatch) -> None:
    from coopeval.studies.gossip import records

    view = records.rounds_view("trust")
    assert view.where == ("testbed", "trust")
    assert view.columns["investor"] == "first_agent" and view.columns["trustee_amount"] == "second_amount"
    assert view.columns["investor_tone"] == "first_tone" and view.columns["cost"] == "cost"
    assert "first_role" not in view.columns.values()
    assert records.role_column("second_gossip_justification", ("player_1", "player_2")) == "player_2_gossip_justification"
    monkeypatch.setattr(REGISTRY["pd"].game, "roles", ("round", "status"))  # "round" would be both the round and player 1
    with pytest.raises(ValueError, match="testbed 'pd': its roles \\('round', 'status'\\) rename two gossip_rounds columns alike"):
        records.rounds_view("pd")
