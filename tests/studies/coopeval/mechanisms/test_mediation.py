"""Mediation transcripts (docs/protocol/mechanisms.md#mediation): scripted bots in; designs, votes, selection, delegation,
resolved actions and payoffs out, with hand-computed values."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

import polars as pl
import pytest

from coopeval.agents.bots import AlwaysCooperate, Bot, make_bot
from coopeval.core.rng import rng_for
from coopeval.decisions.formats import AnswerFormat, MediatorDesign, MediatorVote
from coopeval.decisions.reask import MAX_ATTEMPTS
from coopeval.games import get_game
from coopeval.games.designs import mediator_ns, mediator_wd
from coopeval.studies.coopeval.mechanisms.mediation import enforcing_mediator, resolve_delegation
from coopeval.studies.coopeval.mechanisms.selection import select_winner
from coopeval.studies.coopeval.parse import matchup_scores
from tests.studies.coopeval.mechanisms.design_vote_helpers import (
    bots,
    moves,
    play_design_cell,
    selection,
)


class GenerousMediator(AlwaysCooperate):
    """Test bot: proposes a mediator that contributes whenever at least two delegate, approves
    exactly that design, and always delegates."""

    bot_name = "generous-mediator"
    DESIGN: ClassVar[dict[str, str]] = {"1": "A1", "2": "A0", "3": "A0"}

    def opinion(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, Any] | None:
        if isinstance(fmt, MediatorDesign):
            return dict(self.DESIGN)
        if isinstance(fmt, MediatorVote):
            return {key: state["options"][i] == self.DESIGN for i, key in enumerate(fmt.keys)}
        return super().opinion(fmt, state)

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        return {t: (100 if t == state["delegate_token"] else 0) for t in fmt.keys}


def play(roster: list[Bot], game: str, seed: int = 42) -> dict[str, pl.DataFrame]:
    return play_design_cell("Mediation", roster, game, seed)


# ------------------------------------------------------------------------------------------------
# The enforcing mediator and its NS/WD (reasoned by hand in the comments)


@pytest.mark.parametrize(
    ("game", "mapping", "ns", "wd"),
    [
        # PD: others delegating, deviating alone triggers D against you (1 < 2); against a base
        # action, delegating = D, which is a best reply; strict when the other delegates.
        ("prisoners_dilemma", {"1": "A1", "2": "A0"}, True, True),
        # PG: free-riding is dominant and mapping[1] = mapping[2] = F, so delegating ≥ any base action.
        ("public_goods", {"1": "A1", "2": "A1", "3": "A0"}, True, True),
        # TD: delegating alone claims 2, but against a base claim of 4 claiming 3 pays 5 > 4.
        ("travellers_dilemma", {"1": "A0", "2": "A3"}, True, False),
        # Trust: P1 delegating alone plays Keep (6) while Give pays 10 against a base Give.
        ("trust_game", {"1": "A1", "2": "A0"}, True, False),
        # Stag Hunt: delegating alone hunts hare (3) while stag pays 5 against a base stag.
        ("stag_hunt", {"1": "A1", "2": "A0"}, True, False),
        # Matching Pennies: seat 2 deviating alone always mismatches the lone delegator: no NS.
        ("matching_pennies", {"1": "A1", "2": "A0"}, False, False),
    ],
)
def test_enforcing_mediator(game: str, mapping: dict[str, str], ns: bool, wd: bool) -> None:
    g = get_game(game)
    assert enforcing_mediator(g) == mapping
    assert (mediator_ns(g, mapping), mediator_wd(g, mapping)) == (ns, wd)


def test_resolution_two_of_three_delegate_uses_mapping_2() -> None:
    pg = get_game("public_goods")
    generous = {"1": "A1", "2": "A0", "3": "A0"}
    # Seats 1 and 2 draw A2 (delegate), seat 3 free-rides: d = 2 → delegators play mapping[2] = A0.
    # k = 2 contributors: contributors 0.5·2 = 1.0, free-rider 1 + 1.0 = 2.0.
    assert resolve_delegation(pg, generous, [2, 2, 1]) == ([0, 0, 1], [1.0, 1.0, 2.0], [1.0, 1.0, 2.0], [True, True, False])
    # One delegator: mapping[1] = A1; with two contributors acting alone: k = 2.
    assert resolve_delegation(pg, generous, [0, 2, 0]) == ([0, 1, 0], [1.0, 2.0, 1.0], [1.0, 2.0, 1.0], [False, True, False])
    # Nobody delegates: the drawn actions stand.
    assert resolve_delegation(pg, generous, [1, 1, 1])[0] == [1, 1, 1]
    with pytest.raises(ValueError):
        resolve_delegation(pg, generous, [3, 0, 0])


# ------------------------------------------------------------------------------------------------
# Transcripts


def test_public_goods_two_of_three_delegate_to_the_enforcing_mediator() -> None:
    tables = play(bots("always-cooperate", "tit-for-tat", "always-defect"), "public_goods")
    mid = "bot/always-cooperate|bot/tit-for-tat|bot/always-defect"
    # Everyone proposes the enforcing design; the defector approves nothing → approvals 2, 2, 2.
    sel = selection(tables, mid)
    assert sel["approvals"] == [2, 2, 2] and sel["tied_options"] == [1, 2, 3]
    assert sel["design"] == {"1": "A1", "2": "A1", "3": "A0"}
    m = moves(tables, mid)
    assert m["parsed"].to_list() == [
        json.dumps({"A0": 0, "A1": 0, "A2": 100}),
        json.dumps({"A0": 0, "A1": 0, "A2": 100}),
        json.dumps({"A0": 0, "A1": 100, "A2": 0}),
    ]
    # d = 2 → mapping[2] = A1: everyone free-rides, 1.0 each.
    assert m["action_token"].to_list() == ["A1", "A1", "A1"]
    assert m["mediated"].to_list() == [True, True, False]
    assert m["points"].to_list() == [1.0, 1.0, 1.0]
    assert m["base_points"].to_list() == [1.0, 1.0, 1.0]
    # All three cooperative bots delegate: d = 3 → mapping[3] = A0, 1.5 each.
    full = moves(tables, "bot/tit-for-tat|bot/always-cooperate|bot/tit-for-tat")
    assert full["action_token"].to_list() == ["A0"] * 3 and full["points"].to_list() == [1.5] * 3
    assert full["mediated"].to_list() == [True] * 3


def test_public_goods_generous_mediator_two_delegate() -> None:
    tables = play([GenerousMediator(), make_bot("always-defect")], "public_goods")
    mid = "bot/generous-mediator|bot/generous-mediator|bot/always-defect"
    sel = selection(tables, mid)
    # M1, M2 (generous) get 2 approvals each, M3 (the defector's enforcing design) none.
    assert sel["approvals"] == [2, 2, 0] and sel["tied_options"] == [1, 2]
    assert sel["selected_index"] in (1, 2) and sel["design"] == GenerousMediator.DESIGN
    m = moves(tables, mid)
    # Two delegate → mapping[2] = A0 for both; the defector free-rides: k = 2 → 1.0, 1.0, 2.0.
    assert m["action"].to_list() == [0, 0, 1]
    assert m["mediated"].to_list() == [True, True, False]
    assert m["points"].to_list() == [1.0, 1.0, 2.0]
    votes = tables["votes"].filter(pl.col("matchup_id") == mid).sort(["voter_seat", "option"])
    assert votes["approve"].to_list() == [True, True, False, True, True, False, False, False, False]
    scores = matchup_scores(tables["decisions"], tables["matchups"]).filter(pl.col("matchup_id") == mid).sort("seat")
    assert scores["score"].to_list() == [1.0, 1.0, 2.0]  # one round, discount 1.0


def test_prisoners_dilemma_transcript_and_stored_designs() -> None:
    tables = play(bots("tit-for-tat", "always-defect"), "prisoners_dilemma")
    designs = tables["designs"].sort("designer")
    assert designs["designer"].to_list() == [
        "bot/always-defect#P1", "bot/always-defect#P2", "bot/tit-for-tat#P1", "bot/tit-for-tat#P2"
    ]
    assert set(designs["design"].to_list()) == {json.dumps({"1": "A1", "2": "A0"})}
    assert set(designs["design_kind"].to_list()) == {"mediator"} and set(designs["status"].to_list()) == {"ok"}
    # TFT delegates (enforcing mediator), the defector plays D: d = 1 → TFT plays mapping[1] = D.
    m = moves(tables, "bot/tit-for-tat|bot/always-defect")
    assert m["action_token"].to_list() == ["A1", "A1"] and m["points"].to_list() == [1.0, 1.0]
    assert m["mediated"].to_list() == [True, False]
    both = moves(tables, "bot/tit-for-tat|bot/tit-for-tat")
    assert both["action_token"].to_list() == ["A0", "A0"] and both["points"].to_list() == [2.0, 2.0]
    # The play prompt offers A2 = delegate and lists the mapping.
    call = tables["llm_calls"].filter(
        (pl.col("matchup_id") == "bot/tit-for-tat|bot/tit-for-tat") & (pl.col("kind") == "action") & (pl.col("seat") == 1)
    )
    text = json.loads(call["prompt"][0])[0]["content"]
    assert 'Action A2 means "delegate to the mediator"' in text
    assert "- if 1 player delegates: the mediator plays A1 (Defect) for that player" in text
    assert "- if 2 players delegate: the mediator plays A0 (Cooperate) for each of them" in text
    assert "exactly A0, A1, A2" in text
    assert (tables["matchups"]["discount"] == 1.0).all() and (tables["matchups"]["n_rounds"] == 1).all()


def test_call_counts() -> None:
    s = 3
    for game, n in (("prisoners_dilemma", 2), ("public_goods", 3)):
        tables = play(bots("always-cooperate", "tit-for-tat", "always-defect"), game)
        kinds = tables["decisions"].group_by("kind").len().sort("kind")
        counts = dict(zip(kinds["kind"].to_list(), kinds["len"].to_list(), strict=True))
        matchups = s**n
        assert counts == {
            "mediator_design": s * n,  # one design per seated agent
            "mediator_vote": n * matchups,  # N votes per matchup
            "action": n * matchups,
        }
        assert tables["llm_calls"].height == s * n + 2 * n * matchups  # bots answer on the first attempt
        assert tables["votes"].height == n * n * matchups  # voter × option
        assert tables["selections"].height == matchups
        assert tables["matchups"].height == matchups and (tables["matchups"]["status"] == "complete").all()


# ------------------------------------------------------------------------------------------------
# Tie-breaking


def test_select_winner() -> None:
    assert select_winner([1, 3, 3], lambda k: 0) == (2, [2, 3])
    assert select_winner([1, 3, 3], lambda k: k - 1) == (3, [2, 3])
    assert select_winner([0, 0], lambda k: 1) == (2, [1, 2])  # nobody approves: all tied
    assert select_winner([2, 0, 1], lambda k: 0) == (1, [1])


def test_vote_tiebreak_is_deterministic_per_seed() -> None:
    roster = ("always-cooperate", "tit-for-tat", "always-defect")

    def chosen(seed: int) -> dict[str, int]:
        tables = play(bots(*roster), "public_goods", seed=seed)
        rows = tables["selections"]
        return dict(zip(rows["matchup_id"], rows["selected_index"], strict=True))

    first, again, other = chosen(7), chosen(7), chosen(8)
    assert first == again
    assert first != other  # 27 matchups, all with ties: a different seed changes some picks
    for mid, index in first.items():
        # Every matchup ties all three options (all designs equal; every voter approves all or none).
        rng = rng_for(7, "public_goods", "Mediation", 1, mid, "vote_tiebreak")
        assert index == [1, 2, 3][int(rng.integers(3))]


# ------------------------------------------------------------------------------------------------
# Failures


def test_malformed_designs_fail_their_matchups_and_are_never_defaulted() -> None:
    tables = play(bots("always-cooperate", "malformed"), "prisoners_dilemma")
    designs = tables["designs"].sort("designer")
    assert designs["status"].to_list() == ["ok", "ok", "failed", "failed"]
    assert designs["design"].to_list()[2:] == [None, None]
    failed = tables["decisions"].filter(pl.col("status") == "failed")
    assert failed["kind"].to_list() == ["mediator_design", "mediator_design"]
    assert failed["n_attempts"].to_list() == [MAX_ATTEMPTS, MAX_ATTEMPTS]
    assert failed["parsed"].null_count() == 2 and (failed["error"] != "").all()
    calls = tables["llm_calls"].filter(pl.col("agent") == "bot/malformed")
    assert calls.height == 2 * MAX_ATTEMPTS and (calls["error"] != "").all()
    assert "Your previous answer" in json.loads(calls.filter(pl.col("attempt") == 1)["prompt"][0])[0]["content"]
    status = dict(zip(tables["matchups"]["matchup_id"], tables["matchups"]["status"], strict=True))
    assert status == {
        "bot/always-cooperate|bot/always-cooperate": "complete",
        "bot/always-cooperate|bot/malformed": "failed",
        "bot/malformed|bot/always-cooperate": "failed",
        "bot/malformed|bot/malformed": "failed",
    }
    # No vote or action was asked in a matchup with a failed design.
    asked = tables["decisions"].filter(pl.col("matchup_id").is_not_null())
    assert set(asked["matchup_id"].to_list()) == {"bot/always-cooperate|bot/always-cooperate"}
    scores = matchup_scores(tables["decisions"], tables["matchups"])
    assert scores["matchup_id"].unique().to_list() == ["bot/always-cooperate|bot/always-cooperate"]
