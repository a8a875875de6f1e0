"""The one recorder (:mod:`coopeval.agents.recorder`): a decision outcome plus a study's own
columns become the ``decisions`` row and the ``llm_calls`` rows, compared with rows written
out by hand."""

from __future__ import annotations

import pytest

from coopeval.agents.maker import DecisionOutcome
from coopeval.agents.recorder import DECISION_COLUMNS, call_rows, record_decision, released_decision
from coopeval.core.schemas import SCHEMAS


def _attempt(n: int, response: str, error: str, finish: str, truncated: bool) -> dict[str, object]:
    # The columns DecisionMaker.decide writes per attempt (a subset is enough for the recorder).
    return {
        "decision_id": "d1",
        "attempt": n,
        "agent": "m(IO)",
        "model": "m",
        "kind": "action",
        "response": response,
        "error": error,
        "finish_reason": finish,
        "truncated": truncated,
    }


OK = DecisionOutcome(
    decision_id="d1",
    status="ok",
    parsed={"A0": 30, "A1": 70},
    response='{"A0": 30, "A1": 70}',
    error="",
    attempts=[_attempt(0, "no json", "no JSON object", "length", True), _attempt(1, '{"A0": 30, "A1": 70}', "", "stop", False)],
    answer_offset=0,
    reasoning_truncated=False,
)

FAILED = DecisionOutcome(
    decision_id="d2",
    status="failed",
    parsed=None,
    response="?",
    error="no JSON object",
    attempts=[_attempt(0, "?", "no JSON object", "stop", False)],
)


def test_decision_row_and_call_rows_match_hand_written_rows() -> None:
    rows = record_decision(
        OK, "m(IO)", "action", {"matchup_id": "a|b", "round": 3, "seat": 2}, {"match_id": "r3m0", "action": 1, "points": 5.0}
    )
    assert rows.decision == {
        "matchup_id": "a|b",
        "round": 3,
        "seat": 2,
        "decision_id": "d1",
        "agent": "m(IO)",
        "kind": "action",
        "status": "ok",
        "parsed": '{"A0": 30, "A1": 70}',
        "n_attempts": 2,
        "finish_reason": "stop",  # the final attempt's
        "truncated": False,
        "answer_offset": 0,
        "reasoning_truncated": False,
        "response": '{"A0": 30, "A1": 70}',
        "error": "",
        "match_id": "r3m0",
        "action": 1,
        "points": 5.0,
    }
    assert rows.calls == [
        {"matchup_id": "a|b", "round": 3, "seat": 2, **_attempt(0, "no json", "no JSON object", "length", True)},
        {"matchup_id": "a|b", "round": 3, "seat": 2, **_attempt(1, '{"A0": 30, "A1": 70}', "", "stop", False)},
    ]


def test_failed_decision_has_null_parsed_and_the_last_error() -> None:
    rows = record_decision(FAILED, "m(IO)", "action", {"round": 1})
    assert rows.decision["parsed"] is None
    assert rows.decision["status"] == "failed"
    assert rows.decision["error"] == "no JSON object"
    assert rows.decision["n_attempts"] == 1
    assert rows.decision["answer_offset"] is None
    assert [c["attempt"] for c in rows.calls] == [0]


def test_no_attempts_gives_no_call_rows_and_empty_reply_columns() -> None:
    outcome = DecisionOutcome("d3", "failed", None, "", "rejected")
    rows = record_decision(outcome, "bot", "vote", {})
    assert rows.calls == []
    assert rows.decision["n_attempts"] == 0
    assert rows.decision["finish_reason"] == ""
    assert rows.decision["truncated"] is False


@pytest.mark.parametrize(
    ("context", "decision_context", "table", "column"),
    [
        ({"status": "x"}, None, "decisions", "status"),
        ({}, {"decision_id": "mine"}, "decisions", "decision_id"),
        ({"attempt": 5}, None, "llm_calls", "attempt"),
        ({"model": "other"}, None, "llm_calls", "model"),
    ],
)
def test_a_study_cannot_overwrite_engine_columns(context: dict[str, object], decision_context: dict[str, object] | None, table: str, column: str) -> None:
    with pytest.raises(ValueError, match=rf"{table} column\(s\) \['{column}'\]"):
        record_decision(OK, "m(IO)", "action", context, decision_context)


def test_engine_columns_are_decisions_columns() -> None:
    assert set(DECISION_COLUMNS) <= set(SCHEMAS["decisions"])


def test_call_rows_alone_are_the_record_calls() -> None:
    context = {"cell_id": "c", "study": "coopeval", "matchup_id": None, "round": 2, "seat": 1}
    assert call_rows(OK, context) == record_decision(OK, "m(IO)", "action", context).calls
    assert [row["attempt"] for row in call_rows(OK, context)] == [0, 1]
    with pytest.raises(ValueError, match="llm_calls"):
        call_rows(OK, {"model": "mine"})


def test_released_decision_matches_a_hand_written_row() -> None:
    row = released_decision("c/m1/vote/P2", "m(IO)", "mediator_vote", {"cell_id": "c", "round": 0, "seat": 2},
                            parsed={"M1": True, "M2": False}, decision_context={"points": 3.0})
    assert row == {
        "cell_id": "c",
        "round": 0,
        "seat": 2,
        "decision_id": "c/m1/vote/P2",
        "agent": "m(IO)",
        "kind": "mediator_vote",
        "status": "ok",
        "parsed": '{"M1": true, "M2": false}',
        "response": None,  # not released
        "points": 3.0,
    }
    # a released move: the answer is in its own columns; no attempt columns (the log has none)
    move = released_decision("d", "m(IO)", "action", {}, response='{"A1": 100}', decision_context={"action": 1})
    assert move["parsed"] is None and move["response"] == '{"A1": 100}' and move["action"] == 1
    assert not {"n_attempts", "finish_reason", "truncated", "error"} & set(move)
    with pytest.raises(ValueError, match=r"decisions column\(s\) \['status'\]"):
        released_decision("d", "m(IO)", "action", {}, decision_context={"status": "failed"})
