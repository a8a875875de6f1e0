"""Run summary frames: decisions and failures per mechanism/game/kind, calls, tokens and cost per
model (players and judge), judge outcomes."""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.studies.coopeval.analysis.run_summary import (
    constraint_not_applied,
    decision_counts,
    failed_decisions,
    judge_summary,
    model_usage,
    structured_validity,
)


def test_decision_counts_and_failures():
    decisions = pl.DataFrame(
        {
            "mechanism": ["NoMechanism"] * 3 + ["Mediation"],
            "game": ["PrisonersDilemma"] * 4,
            "matchup_id": ["m"] * 4,
            "round": [1, 1, 1, 0],
            "seat": [1, 2, 1, 1],
            "agent": ["a", "b", "a", "a"],
            "kind": ["action", "action", "action", "mediator_design"],
            "status": ["ok", "failed", "ok", "ok"],
            "n_attempts": [1, 6, 2, 1],
            "error": ["", "no JSON object found", "", ""],
        }
    )
    counts = decision_counts(decisions)
    assert counts.rows() == [
        ("Mediation", "PrisonersDilemma", "mediator_design", 1, 0, 1),
        ("NoMechanism", "PrisonersDilemma", "action", 3, 1, 9),
    ]
    failed = failed_decisions(decisions)
    assert failed.height == 1 and failed["error"][0] == "no JSON object found"


def test_model_usage_splits_players_and_judge():
    calls = pl.DataFrame(
        {
            "model": ["m1", "m1", "m1", "j"],
            "kind": ["action", "action", "vote", "judge"],
            "cache_hit": [False, True, False, False],
            "error": ["", "", "bad", ""],
            "prompt_tokens": [100, 100, 50, 700],
            "completion_tokens": [10, 10, 5, 40],
            "cost_usd": [0.01, 0.01, 0.005, 0.002],
        }
    )
    usage = {(r["model"], r["role"]): r for r in model_usage(calls).iter_rows(named=True)}
    m1 = usage[("m1", "player")]
    assert (
        m1["attempts"],
        m1["cache_hits"],
        m1["invalid"],
        m1["prompt_tokens"],
        m1["completion_tokens"],
    ) == (3, 1, 1, 250, 25)
    assert m1["cost_usd"] == pytest.approx(0.025) and m1["new_cost_usd"] == pytest.approx(0.015)
    assert usage[("j", "judge")]["attempts"] == 1
    assert (m1["truncated"], m1["reasoning_tokens"]) == (0, 0)  # columns absent: counted as 0


def test_model_usage_counts_truncated_answers_and_reasoning_tokens():
    calls = pl.DataFrame(
        {
            "model": ["m1", "m1", "m1"],
            "kind": ["action"] * 3,
            "cache_hit": [False, False, True],
            "error": ["no JSON object found", "", ""],
            "truncated": [True, False, None],
            "prompt_tokens": [100, 120, 120],
            "completion_tokens": [64, 20, 20],
            "reasoning_tokens": [1000, 300, None],
            "cost_usd": [0.01, 0.003, 0.003],
        }
    )
    (row,) = model_usage(calls).iter_rows(named=True)
    assert (row["attempts"], row["invalid"], row["truncated"], row["reasoning_tokens"]) == (3, 1, 1, 1300)


def test_judge_summary():
    judgements = pl.DataFrame(
        {
            "judge_model": ["j"] * 3,
            "mechanism": ["NoMechanism"] * 3,
            "status": ["ok", "ok", "failed"],
            "confidence": [0.8, 0.6, None],
        }
    )
    assert judge_summary(judgements).rows() == [("j", "NoMechanism", 3, 1, pytest.approx(0.7))]


def test_first_attempt_validity_per_kind_mode_and_field():
    calls = pl.DataFrame(
        {
            "kind": ["action", "action", "action", "action", "judge", "donation", "donation", "action"],
            "attempt": [0, 1, 0, 0, 0, 0, 0, 0],
            "error": ["sum", "", "", "", "", "no Answer:", "", "bad"],
            "structured_output": ["json_schema", "json_schema", "json_schema", "grammar", "json_schema", "json_schema", "json_schema", "auto"],
            "structured_field": ["response_format", "response_format", "response_format", "grammar", "response_format", "none", "none", "none"],
        }
    )
    rows = structured_validity(calls).rows()
    assert rows == [
        ("action", "auto", "none", 1, 0, 0.0),
        ("action", "grammar", "grammar", 1, 1, 1.0),
        ("action", "json_schema", "response_format", 2, 1, 0.5),  # the re-ask (attempt 1) is not a first attempt
        ("donation", "json_schema", "none", 2, 1, 0.5),
        ("judge", "json_schema", "response_format", 1, 1, 1.0),
    ]
    assert constraint_not_applied(calls) == 3  # the two free-text donations under json_schema, the auto call


def test_an_older_store_without_the_field_counts_nothing_as_not_applied():
    calls = pl.DataFrame({"kind": ["action"], "attempt": [0], "error": [""], "structured_output": ["grammar"]})
    assert structured_validity(calls).rows() == [("action", "grammar", "not recorded", 1, 1, 1.0)]
    assert constraint_not_applied(calls) == 0
    assert constraint_not_applied(calls.clear()) == 0
    assert structured_validity(calls.clear()).height == 0
