"""Action probabilities by mechanism (all models pooled) and by model, hand-computed."""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.studies.coopeval.analysis.actions import action_label, action_probabilities


def decisions(rows):
    columns = ["mechanism", "game", "agent", "kind", "status", "parsed"]
    return pl.DataFrame(rows, schema=columns, orient="row")


ROWS = [
    ("NoMechanism", "PrisonersDilemma", "a", "action", "ok", '{"A0": 30, "A1": 70}'),
    ("NoMechanism", "PrisonersDilemma", "a", "action", "ok", '{"A0": 50, "A1": 50}'),
    ("NoMechanism", "PrisonersDilemma", "b", "action", "ok", '{"A0": 100, "A1": 0}'),
    ("NoMechanism", "PrisonersDilemma", "b", "action", "failed", None),
    ("Mediation", "PrisonersDilemma", "a", "action", "ok", '{"A0": 20, "A1": 20, "A2": 60}'),
    ("Mediation", "PrisonersDilemma", "a", "mediator_vote", "ok", '{"M1": true, "M2": false}'),
    (
        "Mediation",
        "TravellersDilemma",
        "b",
        "action",
        "ok",
        '{"A0": 10, "A1": 0, "A2": 0, "A3": 40, "A4": 50}',
    ),
]


def test_pooled_by_mechanism():
    frame = action_probabilities(decisions(ROWS))
    assert frame.columns == ["mechanism", "game", "token", "action", "probability", "n"]
    got = {
        (r["mechanism"], r["game"], r["action"]): (r["probability"], r["n"])
        for r in frame.iter_rows(named=True)
    }
    # (0.30 + 0.50 + 1.00) / 3 and (0.70 + 0.50 + 0.00) / 3; the failed decision is left out
    assert got[("NoMechanism", "PrisonersDilemma", "Cooperate")] == (pytest.approx(0.6), 3)
    assert got[("NoMechanism", "PrisonersDilemma", "Defect")] == (pytest.approx(0.4), 3)
    # the mediation decision carries the delegate token; votes are not actions
    assert got[("Mediation", "PrisonersDilemma", "Delegate")] == (pytest.approx(0.6), 1)
    assert got[("Mediation", "TravellersDilemma", "Claim 5")] == (pytest.approx(0.4), 1)
    assert got[("Mediation", "TravellersDilemma", "Delegate")] == (pytest.approx(0.5), 1)
    assert frame.height == 2 + 3 + 5


def test_by_model():
    frame = action_probabilities(decisions(ROWS), by=("mechanism", "agent"))
    assert frame.columns == ["mechanism", "agent", "game", "token", "action", "probability", "n"]
    pd = frame.filter((pl.col("mechanism") == "NoMechanism") & (pl.col("token") == "A0"))
    assert pd.select("agent", "probability", "n").rows() == [
        ("a", pytest.approx(0.4), 2),
        ("b", pytest.approx(1.0), 1),
    ]


def test_labels_and_empty_input():
    assert action_label("trust_game", "A1") == "Keep"
    assert action_label("PublicGoods", "A2") == "Delegate"
    assert action_probabilities(decisions([])).height == 0
