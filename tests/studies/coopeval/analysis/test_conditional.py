"""Conditional action frequencies given the co-player's previous action, hand-computed for a
Repetition matchup, a Reputation population (partners change every round) and a 3-player game."""

from __future__ import annotations

import json

import polars as pl
import pytest

from coopeval.studies.coopeval.analysis.conditional import conditional_action_frequencies

C, D = 0, 1


def row(mechanism, game, matchup, match, rnd, seat, agent, action, p0=None, status="ok"):
    p0 = (100 if action == C else 0) if p0 is None else p0
    return {
        "cell_id": "c",
        "mechanism": mechanism,
        "game": game,
        "matchup_id": matchup,
        "match_id": match,
        "round": rnd,
        "seat": seat,
        "agent": agent,
        "kind": "action",
        "status": status,
        "action": action if status == "ok" else None,
        "parsed": json.dumps({"A0": p0, "A1": 100 - p0}) if status == "ok" else None,
    }


def lookup(frame):
    return {
        (r["agent"], r["condition"], r["action"]): (
            r["count"],
            r["n"],
            r["frequency"],
            r["probability"],
        )
        for r in frame.iter_rows(named=True)
    }


def test_repetition_conditions_on_the_partners_last_move():
    # round:   1  2  3  4
    # a (P1):  C  D  C  C
    # b (P2):  D  C  C  D
    a = [C, D, C, C]
    b = [D, C, C, D]
    p_a = [100, 20, 100, 60]  # stated P(Cooperate) of a
    rows = []
    for r in range(4):
        rows.append(row("Repetition", "PrisonersDilemma", "a|b", None, r + 1, 1, "a", a[r], p_a[r]))
        rows.append(row("Repetition", "PrisonersDilemma", "a|b", None, r + 1, 2, "b", b[r]))
    got = lookup(conditional_action_frequencies(pl.DataFrame(rows)))
    # a: round 2 after b's D → D (p 0.2); rounds 3, 4 after b's C, C → C, C (p 1.0, 0.6)
    assert got[("a", "Defect", "Defect")] == (1, 1, 1.0, pytest.approx(0.8))
    assert got[("a", "Defect", "Cooperate")] == (0, 1, 0.0, pytest.approx(0.2))
    assert got[("a", "Cooperate", "Cooperate")] == (2, 2, 1.0, pytest.approx(0.8))
    # b: round 2 after a's C → C; round 3 after a's D → C; round 4 after a's C → D
    assert got[("b", "Cooperate", "Cooperate")] == (1, 2, 0.5, pytest.approx(0.5))
    assert got[("b", "Cooperate", "Defect")] == (1, 2, 0.5, pytest.approx(0.5))
    assert got[("b", "Defect", "Cooperate")] == (1, 1, 1.0, pytest.approx(1.0))
    assert len(got) == 2 * 2 + 2 * 2  # two conditions × two actions per agent


def test_reputation_uses_the_new_partners_previous_move():
    # round 1: r1m1 X#P1 (C) vs Y#P2 (D); r1m2 Z#P1 (D) vs W#P2 (C)
    # round 2: r2m1 X#P1 (D) vs W#P2 (C); r2m2 Z#P1 (C) vs Y#P2 (D)
    rows = [
        row("Reputation", "PrisonersDilemma", "X#P1", "r1m1", 1, 1, "x", C),
        row("Reputation", "PrisonersDilemma", "Y#P2", "r1m1", 1, 2, "y", D),
        row("Reputation", "PrisonersDilemma", "Z#P1", "r1m2", 1, 1, "z", D),
        row("Reputation", "PrisonersDilemma", "W#P2", "r1m2", 1, 2, "w", C),
        row("Reputation", "PrisonersDilemma", "X#P1", "r2m1", 2, 1, "x", D),
        row("Reputation", "PrisonersDilemma", "W#P2", "r2m1", 2, 2, "w", C),
        row("Reputation", "PrisonersDilemma", "Z#P1", "r2m2", 2, 1, "z", C),
        row("Reputation", "PrisonersDilemma", "Y#P2", "r2m2", 2, 2, "y", D),
    ]
    got = lookup(conditional_action_frequencies(pl.DataFrame(rows)))
    # x meets w in round 2; w played C in round 1 (against z) → x's D is conditioned on C
    assert got[("x", "Cooperate", "Defect")][:3] == (1, 1, 1.0)
    assert got[("w", "Cooperate", "Cooperate")][:3] == (1, 1, 1.0)  # x played C in round 1
    assert got[("z", "Defect", "Cooperate")][:3] == (1, 1, 1.0)  # y played D in round 1
    assert got[("y", "Defect", "Defect")][:3] == (1, 1, 1.0)  # z played D in round 1


def test_three_players_condition_on_both_co_players_and_failures_drop_out():
    game = "PublicGoods"
    rows = [
        row("Repetition", game, "a|b|c", None, 1, 1, "a", C),
        row("Repetition", game, "a|b|c", None, 1, 2, "b", D),
        row("Repetition", game, "a|b|c", None, 1, 3, "c", C),
        row("Repetition", game, "a|b|c", None, 2, 1, "a", D),
        row("Repetition", game, "a|b|c", None, 2, 2, "b", C),
        row("Repetition", game, "a|b|c", None, 2, 3, "c", C, status="failed"),
        row("Repetition", game, "a|b|c", None, 3, 1, "a", C),
        row("Repetition", game, "a|b|c", None, 3, 2, "b", C),
        row("Repetition", game, "a|b|c", None, 3, 3, "c", D),
    ]
    frame = conditional_action_frequencies(pl.DataFrame(rows))
    got = lookup(frame)
    # a, round 2: co-players b (D) and c (C) in round 1 → "Contribute + Free-ride"
    assert got[("a", "Contribute + Free-ride", "Free-ride")][:3] == (1, 1, 1.0)
    # b, round 2: a (C), c (C) → "Contribute + Contribute"
    assert got[("b", "Contribute + Contribute", "Contribute")][:3] == (1, 1, 1.0)
    # round 3: c's round-2 move failed, so a's and b's round-3 decisions have no condition;
    # c's round-3 decision is conditioned on a (D) and b (C) of round 2
    assert got[("c", "Contribute + Free-ride", "Free-ride")][:3] == (1, 1, 1.0)
    assert set(frame["n"]) == {1} and frame.height == 3 * 2


def test_other_mechanisms_are_ignored():
    rows = [row("NoMechanism", "PrisonersDilemma", "a|b", None, 1, 1, "a", C)]
    assert conditional_action_frequencies(pl.DataFrame(rows)).height == 0
