"""CoopEval's rows of one decision (:meth:`CellRecords.record`) through the engine's recorder:
1-based seat, the played-move columns null until the move resolves, one call row per attempt."""

from __future__ import annotations

from coopeval.agents.bots import make_bot
from coopeval.agents.maker import DecisionOutcome
from coopeval.decisions.formats.action import ActionDistribution
from coopeval.studies.coopeval.mechanisms.base import CellRecords

ATTEMPT = {"decision_id": "d", "attempt": 0, "agent": "bot/tit-for-tat", "model": "bot/tit-for-tat", "kind": "action", "finish_reason": "stop"}
OUTCOME = DecisionOutcome("d", "ok", {"A0": 100, "A1": 0}, '{"A0": 100, "A1": 0}', "", [ATTEMPT], 0)


def test_void_move_has_null_played_columns_and_one_based_seat() -> None:
    records = CellRecords()
    records.record(OUTCOME, make_bot("tit-for-tat"), ActionDistribution(("A0", "A1")), "a|b", 4, 1)
    (row,) = records.decisions
    assert (row["matchup_id"], row["round"], row["seat"], row["agent"], row["kind"]) == ("a|b", 4, 2, "bot/tit-for-tat", "action")
    assert row["parsed"] == '{"A0": 100, "A1": 0}'
    assert {k: row[k] for k in ("draw", "action", "action_token", "points", "base_points", "mediated")} == dict.fromkeys(
        ("draw", "action", "action_token", "points", "base_points", "mediated")
    )
    assert "match_id" not in row
    assert records.llm_calls == [{"matchup_id": "a|b", "round": 4, "seat": 2, **ATTEMPT}]


def test_played_move_columns_are_the_given_ones() -> None:
    records = CellRecords()
    played = {"match_id": "r4m0", "draw": 0.25, "action": 0, "action_token": "A0", "points": 3.0, "base_points": 3.0, "mediated": False}
    records.record(OUTCOME, make_bot("tit-for-tat"), ActionDistribution(("A0", "A1")), "a|b", 4, 0, **played)
    (row,) = records.decisions
    assert {k: row[k] for k in played} == played
    assert row["seat"] == 1
