"""Voting and adoption under Mediation and Contracting, hand-computed.

Mediation, PD, matchup "a|b" (seat 1 a, seat 2 b): voter 1 approves options 1 and 2, voter 2
approves option 2 → approvals (1, 2); option 2 (b's design) selected.
Matchup "b|a": voter 1 (b) approves option 1, voter 2 (a) approves options 1 and 2 → approvals
(2, 1); option 1 (b's design) selected.
  a: proposals with 1 and 1 approvals → 1.0 per proposal; selected 0 of 2.
  b: proposals with 2 and 2 approvals → 2.0 per proposal; selected 2 of 2.
Moves: a delegated 1 of 2 valid moves (a failed move is left out), b 1 of 1.
Contracting, PD, self-play "a|a": proposals from seat 1 and seat 2 (both a), approvals (0, 2),
option 2 selected → a: 1.0 approvals per proposal, selected 1 of 2; a signed 1 of 2.
"""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.studies.coopeval.analysis.voting import voting_adoption

PD = "PrisonersDilemma"


def votes():
    rows = [
        ("Mediation", "a|b", 1, "a", 1, True),
        ("Mediation", "a|b", 1, "a", 2, True),
        ("Mediation", "a|b", 2, "b", 1, False),
        ("Mediation", "a|b", 2, "b", 2, True),
        ("Mediation", "b|a", 1, "b", 1, True),
        ("Mediation", "b|a", 1, "b", 2, False),
        ("Mediation", "b|a", 2, "a", 1, True),
        ("Mediation", "b|a", 2, "a", 2, True),
        ("Contracting", "a|a", 1, "a", 1, False),
        ("Contracting", "a|a", 1, "a", 2, True),
        ("Contracting", "a|a", 2, "a", 1, False),
        ("Contracting", "a|a", 2, "a", 2, True),
    ]
    frame = pl.DataFrame(
        rows,
        schema=["mechanism", "matchup_id", "voter_seat", "agent", "option", "approve"],
        orient="row",
    )
    return frame.with_columns(
        pl.lit("c_").add(pl.col("mechanism")).alias("cell_id"), pl.lit(PD).alias("game")
    )


def selections():
    rows = [("Mediation", "a|b", 2), ("Mediation", "b|a", 1), ("Contracting", "a|a", 2)]
    frame = pl.DataFrame(rows, schema=["mechanism", "matchup_id", "selected_index"], orient="row")
    return frame.with_columns(
        pl.lit("c_").add(pl.col("mechanism")).alias("cell_id"), pl.lit(PD).alias("game")
    )


def matchups():
    rows = [
        ("Mediation", "a|b", ["a", "b"]),
        ("Mediation", "b|a", ["b", "a"]),
        ("Contracting", "a|a", ["a", "a"]),
    ]
    frame = pl.DataFrame(rows, schema=["mechanism", "matchup_id", "agents"], orient="row")
    return frame.with_columns(
        pl.lit("c_").add(pl.col("mechanism")).alias("cell_id"), pl.lit(PD).alias("game")
    )


def decisions():
    rows = [
        ("Mediation", "a", "action", "ok", True, None),
        ("Mediation", "a", "action", "ok", False, None),
        ("Mediation", "a", "action", "failed", None, None),
        ("Mediation", "b", "action", "ok", True, None),
        ("Mediation", "b", "mediator_vote", "ok", None, '{"M1": true, "M2": false}'),
        ("Contracting", "a", "sign", "ok", None, '{"sign": true}'),
        ("Contracting", "a", "sign", "ok", None, '{"sign": false}'),
        ("Contracting", "a", "sign", "failed", None, None),
        ("Contracting", "a", "action", "ok", False, None),
        ("Repetition", "a", "action", "ok", False, None),
    ]
    frame = pl.DataFrame(
        rows, schema=["mechanism", "agent", "kind", "status", "mediated", "parsed"], orient="row"
    )
    return frame.with_columns(pl.lit(PD).alias("game"))


def test_voting_and_adoption_hand_computed():
    frame = voting_adoption(votes(), selections(), matchups(), decisions())
    assert frame.columns == ["mechanism", "game", "agent", "measure", "value", "n"]
    got = {
        (r["mechanism"], r["agent"], r["measure"]): (r["value"], r["n"])
        for r in frame.iter_rows(named=True)
    }
    assert got[("Mediation", "a", "approvals per proposal")] == (pytest.approx(1.0), 2)
    assert got[("Mediation", "b", "approvals per proposal")] == (pytest.approx(2.0), 2)
    assert got[("Mediation", "a", "selected")] == (0.0, 2)
    assert got[("Mediation", "b", "selected")] == (1.0, 2)
    assert got[("Mediation", "a", "delegated")] == (0.5, 2)
    assert got[("Mediation", "b", "delegated")] == (1.0, 1)
    assert got[("Contracting", "a", "approvals per proposal")] == (pytest.approx(1.0), 2)
    assert got[("Contracting", "a", "selected")] == (0.5, 2)
    assert got[("Contracting", "a", "signed")] == (0.5, 2)
    assert ("Contracting", "a", "delegated") not in got and ("Mediation", "a", "signed") not in got
    assert len(got) == 6 + 3
    # measures in a fixed order within each (mechanism, game)
    assert frame.filter(pl.col("mechanism") == "Mediation")["measure"].unique(
        maintain_order=True
    ).to_list() == [
        "approvals per proposal",
        "selected",
        "delegated",
    ]


def test_no_design_mechanism_gives_an_empty_frame():
    frame = voting_adoption(
        votes().head(0),
        selections().head(0),
        matchups().head(0),
        decisions().filter(pl.col("mechanism") == "Repetition"),
    )
    assert frame.height == 0 and frame.columns == [
        "mechanism",
        "game",
        "agent",
        "measure",
        "value",
        "n",
    ]
