"""Axelrod-style transcripts: scripted bots in, exact history, payoffs and scores out."""

from __future__ import annotations

import json

import polars as pl
import pytest

from coopeval.evaluation.scores import discounted_average
from coopeval.studies.coopeval.parse import matchup_scores
from tests.helpers import play_bots

AXELROD = {"TitForTat": "tit-for-tat", "Defector": "always-defect", "Cooperator": "always-cooperate", "Grudger": "grim-trigger"}


def versus(bots, game="prisoners_dilemma", mechanism="Repetition", rounds=15, seed=42):
    """Play ``bots`` in one cell (Repetition with ``rounds`` rounds) and return its tables."""
    params = {"num_rounds": rounds} if mechanism == "Repetition" else {}
    return play_bots(mechanism, game, bots, seed=seed, **params)


def transcript(tables, matchup):
    moves = tables["decisions"].filter(pl.col("matchup_id") == matchup).sort(["round", "seat"])
    letters = "CD"
    by_round = moves.group_by("round", maintain_order=True).agg(pl.col("action"))
    return ["".join(letters[a] for a in acts) for acts in by_round["action"].to_list()]


@pytest.mark.parametrize(
    "pair",
    ["TitForTat vs Defector", "TitForTat vs Cooperator", "TitForTat vs Grudger", "Defector vs Grudger",
     "Defector vs Cooperator", "Grudger vs Grudger", "Defector vs Defector"],
)
def test_matches_axelrod_oracle(oracles, pair):
    oracle = oracles["sets"]["axelrod_matches"]["vectors"][pair]
    left, right = (AXELROD[p] for p in pair.split(" vs "))
    bots = [left] if left == right else [left, right]
    tables = versus(bots)
    mid = f"bot/{left}|bot/{right}"
    assert transcript(tables, mid) == oracle["actions"]
    scores = matchup_scores(tables["decisions"], tables["matchups"]).filter(pl.col("matchup_id") == mid).sort("seat")
    assert scores["score"].to_list() == pytest.approx(oracle["coopeval_discounted_average"], abs=1e-12)


def test_tit_for_tat_vs_defector_by_hand():
    tables = versus(["tit-for-tat", "always-defect"], rounds=4)
    mid = "bot/tit-for-tat|bot/always-defect"
    assert transcript(tables, mid) == ["CD", "DD", "DD", "DD"]
    points = tables["decisions"].filter(pl.col("matchup_id") == mid).sort(["seat", "round"])["points"].to_list()
    assert points == [0, 1, 1, 1, 3, 1, 1, 1]
    # 0.2·0 + 0.16·1 + 0.128·1 + 0.8^3·1 = 0.8 ; defector 0.2·3 + 0.8 = 1.4
    scores = matchup_scores(tables["decisions"], tables["matchups"]).filter(pl.col("matchup_id") == mid).sort("seat")
    assert scores["score"].to_list() == pytest.approx([0.8, 1.4])
    assert discounted_average([0, 1, 1, 1], 0.8) == pytest.approx(0.8)


def test_history_shown_most_recent_first_with_window():
    tables = versus(["tit-for-tat", "always-defect"], rounds=5)
    calls = tables["llm_calls"].filter(pl.col("matchup_id") == "bot/tit-for-tat|bot/always-defect")
    round5_seat1 = calls.filter((pl.col("round") == 5) & (pl.col("seat") == 1))["prompt"][0]
    text = json.loads(round5_seat1)[0]["content"]
    assert "Rounds played so far: 4." in text and "probability 80%" in text
    history = text[text.index("History of the last 3 rounds"):].splitlines()[1:4]
    assert history == [
        "- Round 4: you played A1; Player 2 played A1.",
        "- Round 3: you played A1; Player 2 played A1.",
        "- Round 2: you played A1; Player 2 played A1.",
    ]
    round1 = json.loads(calls.filter((pl.col("round") == 1) & (pl.col("seat") == 2))["prompt"][0])[0]["content"]
    assert "History: no rounds have been played yet." in round1 and "you are Player 2" in round1


def test_public_goods_grim_trigger_punishes_all():
    tables = versus(["grim-trigger", "always-defect"], game="public_goods", rounds=3)
    mid = "bot/grim-trigger|bot/grim-trigger|bot/always-defect"
    moves = tables["decisions"].filter(pl.col("matchup_id") == mid).sort(["round", "seat"])
    assert moves["action"].to_list() == [0, 0, 1, 1, 1, 1, 1, 1, 1]
    # Round 1: k = 2 contributors: 1.0, 1.0, 2.0; then everyone free-rides: 1.0 each.
    assert moves["points"].to_list() == [1.0, 1.0, 2.0] + [1.0] * 6


def test_no_mechanism_counts_and_uniform_random_draws_are_stored():
    tables = versus(["uniform-random", "always-cooperate"], game="travellers_dilemma", mechanism="NoMechanism")
    d = tables["decisions"]
    assert d.height == 2 * 4  # S^N matchups x 2 seats
    random_moves = d.filter(pl.col("agent") == "bot/uniform-random")
    assert random_moves["parsed"].to_list()[0] == json.dumps({"A0": 25, "A1": 25, "A2": 25, "A3": 25})
    for draw, action in zip(random_moves["draw"], random_moves["action"], strict=True):
        assert action == int(draw * 4)  # equal quarters: A_i iff draw in [i/4, (i+1)/4)


def test_draws_do_not_depend_on_the_roster():
    small = versus(["uniform-random", "always-cooperate"], mechanism="NoMechanism")
    big = versus(["uniform-random", "always-cooperate", "always-defect"], mechanism="NoMechanism")
    key = ["matchup_id", "seat", "draw", "action"]
    common = small["decisions"].select(key).join(big["decisions"].select(key), on=["matchup_id", "seat"], suffix="_big")
    assert common.height == small["decisions"].height
    assert (common["draw"] == common["draw_big"]).all()
