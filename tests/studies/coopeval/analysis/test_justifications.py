"""Justification frequencies for the figures: Stag Hunt and Matching Pennies dropped by default,
shares over all judged rows (and the reference's inflated variant), hand-computed."""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.studies.coopeval.analysis.justifications import justification_shares

LABELS = ["Reciprocity", "Risk aversion", "Other"]


def judgements():
    rows = [
        ("NoMechanism", "a", "PrisonersDilemma", ["Reciprocity"], "ok"),
        ("NoMechanism", "a", "PrisonersDilemma", ["Risk aversion"], "ok"),
        ("NoMechanism", "a", "PrisonersDilemma", ["Risk aversion"], "ok"),
        ("NoMechanism", "b", "TrustGame", ["Risk aversion"], "ok"),
        ("NoMechanism", "b", "StagHunt", ["Reciprocity"], "ok"),
        ("NoMechanism", "b", "TrustGame", [], "failed"),
    ]
    return pl.DataFrame(
        rows, schema=["mechanism", "agent", "game", "labels", "status"], orient="row"
    )


def shares(frame):
    return {
        (r["label"]): (r["count"], r["denominator"], r["share"])
        for r in frame.iter_rows(named=True)
    }


def test_pooled_shares_drop_stag_hunt_and_matching_pennies():
    got = shares(justification_shares(judgements(), ["mechanism"], LABELS))
    # 4 judged rows outside Stag Hunt: Reciprocity 1/4, Risk aversion 3/4
    assert got["Reciprocity"] == (1, 4, pytest.approx(0.25))
    assert got["Risk aversion"] == (3, 4, pytest.approx(0.75))
    assert got["Other"] == (0, 4, 0.0)
    everything = shares(justification_shares(judgements(), ["mechanism"], LABELS, exclude_games=()))
    assert everything["Reciprocity"] == (2, 5, pytest.approx(0.4))


def test_reference_denominator_variant():
    got = shares(justification_shares(judgements(), ["mechanism"], LABELS, denominator="reference"))
    # subgroups (agent, game): (a, PD) 3 rows, (b, TG) 1 row. Reciprocity only in (a, PD) → 1/3;
    # Risk aversion in both → 3/4
    assert got["Reciprocity"] == (1, 3, pytest.approx(1 / 3))
    assert got["Risk aversion"] == (3, 4, pytest.approx(0.75))


def test_per_model_and_per_game():
    by_model = justification_shares(judgements(), ["agent"], LABELS)
    b = shares(by_model.filter(pl.col("agent") == "b"))
    assert b["Risk aversion"] == (1, 1, 1.0)
    by_game = justification_shares(judgements(), ["game"], LABELS, exclude_games=())
    sh = shares(by_game.filter(pl.col("game") == "StagHunt"))
    assert sh["Reciprocity"] == (1, 1, 1.0)
