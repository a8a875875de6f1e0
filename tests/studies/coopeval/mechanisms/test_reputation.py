"""Reputation− / Reputation+ transcripts (CoopEval docs/protocol/answers.md#prompt-content; docs/protocol/mechanisms.md#reputation, docs/protocol/tournament.md#delta-weighted-score, #matchups-and-call-counts, docs/protocol/evaluation.md#mean).

Axelrod-style: scripted bots in, exact matchings, history trees, payoffs and scores out. The
transcripts below were worked out by hand from the bots' rules and the seeded matchings:

* ids: agents in config order, then seat: for [tit-for-tat, always-defect] in a 2-player game
  tit-for-tat#P1 = Agent #1, tit-for-tat#P2 = #2, always-defect#P1 = #3, always-defect#P2 = #4;
* bots see, for the current match, the co-players' own actions in the window (module docstring
  of :mod:`coopeval.studies.coopeval.mechanisms.reputation`), so tit-for-tat answers the current co-player's last
  known action, not its own previous partner's;
* δ-weighted score (docs/protocol/tournament.md#delta-weighted-score) with T = 5, δ = 0.5: weights 0.5, 0.25, 0.125, 0.0625, 0.0625;
  with T = 3, δ = 0.5: weights 0.5, 0.25, 0.25.
"""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import polars as pl
import pytest

from coopeval.agents.maker import DecisionMaker
from coopeval.core.prompts import PromptLibrary
from coopeval.core.rng import rng_for
from coopeval.evaluation.scores import discounted_average
from coopeval.studies.coopeval.evaluate import evaluate_cell
from coopeval.studies.coopeval.mechanisms import get_mechanism
from coopeval.studies.coopeval.mechanisms.base import action_instruction
from coopeval.studies.coopeval.mechanisms.catalog import mechanism_info
from coopeval.studies.coopeval.mechanisms.reputation import build_population, draw_matching
from coopeval.studies.coopeval.parse import matchup_scores
from coopeval.studies.coopeval.play import build_context
from tests.helpers import make_cell, play_spec
from tests.shared_data import PROMPTS_DIR

PROMPTS = PromptLibrary(PROMPTS_DIR)
ID_COLUMNS = ["cell_id", "source", "run", "mechanism", "game"]
FIVE_BOTS = ["always-cooperate", "always-defect", "tit-for-tat", "grim-trigger", "uniform-random"]


def cell(bots: list[str], game: str, mechanism: str, seed: int = 42, **params: Any) -> dict[str, Any]:
    """The cell spec of one (game, mechanism) with a bot roster, built as the workflow does."""
    return make_cell(mechanism, game, bots, seed=seed, **params)


def play(spec: dict[str, Any]) -> tuple[dict[str, pl.DataFrame], Any]:
    """Play a cell spec with the agents it names."""
    return play_spec(spec)


def transcript(tables: dict[str, pl.DataFrame]) -> list[tuple[Any, ...]]:
    """(round, match_id, seat, seated agent, action, points) in play order."""
    d = tables["decisions"].sort(["round", "match_id", "seat"])
    return list(d.select("round", "match_id", "seat", "matchup_id", "action", "points").iter_rows())


def prompt_of(tables: dict[str, pl.DataFrame], seated: str, round_: int) -> str:
    """The first-attempt prompt text of one seated agent's decision in one round."""
    d = tables["decisions"].filter((pl.col("matchup_id") == seated) & (pl.col("round") == round_))
    assert d.height == 1
    calls = tables["llm_calls"].filter((pl.col("decision_id") == d["decision_id"][0]) & (pl.col("attempt") == 0))
    messages = json.loads(calls["prompt"][0])
    assert len(messages) == 1 and messages[0]["role"] == "user"
    text: str = messages[0]["content"]
    return text


def histories(prompt: str) -> str:
    """The history part of a prompt: from 'Your history' to the output instruction."""
    start = prompt.index("Your history")
    tail = "\n\n" + action_instruction(SimpleNamespace(prompts=PROMPTS), ("A0", "A1"))  # type: ignore[arg-type]
    assert prompt.endswith(tail)
    return prompt[start : -len(tail)]


def metrics_of(tables: dict[str, pl.DataFrame], mechanism: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    scores = matchup_scores(tables["decisions"], tables["matchups"])
    ids = {c: tables["matchups"][c][0] for c in ID_COLUMNS}
    metrics, _ = evaluate_cell(scores, tables["matchups"], ids, has_metagame=not mechanism_info(mechanism).population_game)
    return scores, metrics


def metric(metrics: pl.DataFrame, agent: str, name: str) -> float:
    rows = metrics.filter((pl.col("agent") == agent) & (pl.col("metric") == name))
    assert rows.height == 1, (agent, name)
    return float(rows["value"][0])


# --- population, registry ---------------------------------------------------------------------


def test_registry_and_traits() -> None:
    first, plus = get_mechanism("ReputationFirstOrder"), get_mechanism("Reputation")
    assert (first.name, plus.name) == ("ReputationFirstOrder", "Reputation")
    assert mechanism_info("ReputationFirstOrder").population_game and mechanism_info("Reputation").population_game
    assert not mechanism_info("Repetition").population_game
    assert mechanism_info("ReputationFirstOrder").defaults()["max_recursion_depth"] == 1
    assert mechanism_info("Reputation").defaults()["max_recursion_depth"] == 3
    assert cell(["tit-for-tat"], "prisoners_dilemma", "ReputationFirstOrder")["mechanism_params"] == {
        "num_rounds": 15, "discount": 0.8, "lookup_depth": 3, "max_recursion_depth": 1,
    }
    assert cell(["tit-for-tat"], "prisoners_dilemma", "Reputation")["mechanism_params"]["max_recursion_depth"] == 3


def test_anonymous_ids_by_config_order_then_seat() -> None:
    spec = cell(["tit-for-tat", "always-defect"], "public_goods", "Reputation")
    ctx = build_context(spec, DecisionMaker(None, {}), PROMPTS)
    population = build_population(ctx.agents, 3)
    assert [(p.uid, p.name, p.label) for p in population] == [
        (1, "bot/tit-for-tat#P1", "Agent #1"),
        (2, "bot/tit-for-tat#P2", "Agent #2"),
        (3, "bot/tit-for-tat#P3", "Agent #3"),
        (4, "bot/always-defect#P1", "Agent #4"),
        (5, "bot/always-defect#P2", "Agent #5"),
        (6, "bot/always-defect#P3", "Agent #6"),
    ]


# --- matching ------------------------------------------------------------------------------------


def test_matching_is_a_seeded_permutation_per_seat_group() -> None:
    spec = cell(FIVE_BOTS, "public_goods", "Reputation")
    ctx = build_context(spec, DecisionMaker(None, {}), PROMPTS)
    groups = [[1, 4, 7, 10, 13], [2, 5, 8, 11, 14], [3, 6, 9, 12, 15]]
    rounds = [draw_matching(ctx, "Reputation", groups, r) for r in range(1, 16)]
    assert rounds == [draw_matching(ctx, "Reputation", groups, r) for r in range(1, 16)]  # deterministic
    for r, matches in enumerate(rounds, start=1):
        assert len(matches) == 5
        for seat in range(3):
            assert sorted(m[seat] for m in matches) == groups[seat]  # a permutation of the seat group
        # drawn from the named "matching" stream of the round, seat groups in seat order
        rng = rng_for(42, "public_goods", "Reputation", 1, "matching", r)
        expected = [[g[j] for j in rng.permutation(5)] for g in groups]
        assert matches == list(zip(*expected, strict=True))
    assert len({tuple(m) for m in rounds}) > 1  # rounds are shuffled independently
    other_seed = build_context(cell(FIVE_BOTS, "public_goods", "Reputation", seed=7), DecisionMaker(None, {}), PROMPTS)
    assert [draw_matching(other_seed, "Reputation", groups, r) for r in range(1, 16)] != rounds


def test_played_matches_follow_the_matching() -> None:
    spec = cell(FIVE_BOTS, "public_goods", "ReputationFirstOrder", num_rounds=4)
    tables, _ = play(spec)
    ctx = build_context(spec, DecisionMaker(None, {}), PROMPTS)
    population = build_population(ctx.agents, 3)
    uid = {p.name: p.uid for p in population}
    groups = [[p.uid for p in population if p.seat == s] for s in range(3)]
    d = tables["decisions"]
    for r in range(1, 5):
        rows = d.filter(pl.col("round") == r)
        assert sorted(rows["matchup_id"].to_list()) == sorted(p.name for p in population)  # everyone plays
        played = []
        for i in range(1, 6):
            match = rows.filter(pl.col("match_id") == f"r{r}m{i}").sort("seat")
            assert match["seat"].to_list() == [1, 2, 3]
            played.append(tuple(uid[n] for n in match["matchup_id"].to_list()))
        assert played == draw_matching(ctx, "ReputationFirstOrder", groups, r)


# --- call counts, scores, Mean -------------------------------------------------------------------


@pytest.mark.parametrize(("game", "n_players"), [("prisoners_dilemma", 2), ("public_goods", 3)])
def test_decision_counts(game: str, n_players: int) -> None:
    tables, stats = play(cell(FIVE_BOTS, game, "Reputation"))
    s = len(FIVE_BOTS)
    assert tables["decisions"].height == 15 * s * n_players  # docs/protocol/tournament.md#matchups-and-call-counts: 15·S·N action decisions
    assert tables["llm_calls"].height == 15 * s * n_players and stats.failed_decisions == 0
    assert tables["matchups"].height == s * n_players  # one row per seated agent
    assert set(tables["matchups"]["n_rounds"]) == {15} and set(tables["matchups"]["discount"]) == {0.8}
    assert set(tables["matchups"]["status"]) == {"complete"}
    assert tables["decisions"]["points"].null_count() == 0
    assert tables["decisions"]["match_id"].n_unique() == 15 * s
    assert tables["decisions"]["decision_id"].n_unique() == 15 * s * n_players  # positions are unique


@pytest.mark.parametrize(
    ("bot", "game", "points"),
    [
        ("always-cooperate", "prisoners_dilemma", 2.0),
        ("always-defect", "prisoners_dilemma", 1.0),
        ("always-cooperate", "public_goods", 1.5),
        ("always-defect", "public_goods", 1.0),
        ("always-cooperate", "trust_game", 10.0),
        ("always-defect", "trust_game", 4.0),
    ],
)
def test_uniform_population_scores(bot: str, game: str, points: float) -> None:
    # 15 equal payoffs: the δ-weights (0.2, 0.16, …, 0.8^13·0.2, 0.8^14) sum to 1.
    tables, _ = play(cell([bot], game, "ReputationFirstOrder"))
    scores, metrics = metrics_of(tables, "ReputationFirstOrder")
    assert scores.height == ctx_players(game)
    assert scores["score"].to_list() == pytest.approx([points] * ctx_players(game), abs=1e-12)
    assert metric(metrics, f"bot/{bot}", "Mean") == pytest.approx(points, abs=1e-12)


def ctx_players(game: str) -> int:
    return 3 if game == "public_goods" else 2


def test_first_order_transcript_scores_and_mean() -> None:
    """PD, [tit-for-tat, always-defect], seed 42, T = 5, δ = 0.5, Reputation−.

    Round 1: TfT cooperates against the unknown defector (0 / 3). Rounds 2–3: the TfT copies
    meet and each saw the other cooperate (2 / 2). Round 4: each TfT meets a defector whose
    last action was Defect and defects (1 / 1). Round 5: the TfT copies meet again, each saw
    the other defect in round 4, and both defect (1 / 1): reputation-driven tit-for-tat.
    """
    tables, _ = play(cell(["tit-for-tat", "always-defect"], "prisoners_dilemma", "ReputationFirstOrder", num_rounds=5, discount=0.5))
    tft1, tft2, ad1, ad2 = "bot/tit-for-tat#P1", "bot/tit-for-tat#P2", "bot/always-defect#P1", "bot/always-defect#P2"
    assert transcript(tables) == [
        (1, "r1m1", 1, tft1, 0, 0.0), (1, "r1m1", 2, ad2, 1, 3.0),
        (1, "r1m2", 1, ad1, 1, 3.0), (1, "r1m2", 2, tft2, 0, 0.0),
        (2, "r2m1", 1, tft1, 0, 2.0), (2, "r2m1", 2, tft2, 0, 2.0),
        (2, "r2m2", 1, ad1, 1, 1.0), (2, "r2m2", 2, ad2, 1, 1.0),
        (3, "r3m1", 1, ad1, 1, 1.0), (3, "r3m1", 2, ad2, 1, 1.0),
        (3, "r3m2", 1, tft1, 0, 2.0), (3, "r3m2", 2, tft2, 0, 2.0),
        (4, "r4m1", 1, ad1, 1, 1.0), (4, "r4m1", 2, tft2, 1, 1.0),
        (4, "r4m2", 1, tft1, 1, 1.0), (4, "r4m2", 2, ad2, 1, 1.0),
        (5, "r5m1", 1, tft1, 1, 1.0), (5, "r5m1", 2, tft2, 1, 1.0),
        (5, "r5m2", 1, ad1, 1, 1.0), (5, "r5m2", 2, ad2, 1, 1.0),
    ]
    scores, metrics = metrics_of(tables, "ReputationFirstOrder")
    by_seated = dict(zip(scores["matchup_id"], scores["score"], strict=True))
    # TfT: 0·0.5 + 2·0.25 + 2·0.125 + 1·0.0625 + 1·0.0625 = 0.875
    # AllD: 3·0.5 + 1·0.25 + 1·0.125 + 1·0.0625 + 1·0.0625 = 2.0
    assert by_seated == pytest.approx({tft1: 0.875, tft2: 0.875, ad1: 2.0, ad2: 2.0}, abs=1e-12)
    assert metric(metrics, "bot/tit-for-tat", "Mean") == pytest.approx(0.875)
    assert metric(metrics, "bot/always-defect", "Mean") == pytest.approx(2.0)
    # bots only: no LLM agent, no LLM Average of Mean (issue 47); the cell's notes stay on its row
    assert metrics.filter((pl.col("agent") == "LLM Average") & (pl.col("metric") == "Mean")).height == 0
    assert metric(metrics, "LLM Average", "ExcludedMatchups") == 0.0
    assert metric(metrics, "LLM Average", "NoMetagame") == 1.0
    assert metrics.filter(pl.col("metric").is_in(["Fitness", "DR", "FinalPopulation"])).height == 0


def test_trust_game_scores_are_per_seat() -> None:
    """Trust Game, [always-cooperate, always-defect], seed 42, T = 3, δ = 0.5, Reputation−.

    AllC#P1: 10, 0, 10 → 7.5; AllC#P2: 10, 2, 10 → 8; AllD#P1: 4, 6, 4 → 4.5;
    AllD#P2: 4, 20, 4 → 8. Means: AllC 7.75, AllD 6.25.
    """
    tables, _ = play(cell(["always-cooperate", "always-defect"], "trust_game", "ReputationFirstOrder", num_rounds=3, discount=0.5))
    scores, metrics = metrics_of(tables, "ReputationFirstOrder")
    assert dict(zip(scores["matchup_id"], scores["score"], strict=True)) == pytest.approx(
        {"bot/always-cooperate#P1": 7.5, "bot/always-cooperate#P2": 8.0, "bot/always-defect#P1": 4.5, "bot/always-defect#P2": 8.0}
    )
    assert metric(metrics, "bot/always-cooperate", "Mean") == pytest.approx(7.75)
    assert metric(metrics, "bot/always-defect", "Mean") == pytest.approx(6.25)


def test_scores_are_delta_weighted_per_seated_agent_at_default_parameters() -> None:
    tables, _ = play(cell(FIVE_BOTS, "public_goods", "Reputation"))
    scores, metrics = metrics_of(tables, "Reputation")
    d = tables["decisions"]
    for row in scores.iter_rows(named=True):
        points = d.filter(pl.col("matchup_id") == row["matchup_id"]).sort("round")["points"].to_list()
        assert len(points) == 15
        assert row["score"] == pytest.approx(discounted_average(points, 0.8))
    for bot in FIVE_BOTS:
        mine = scores.filter(pl.col("agent") == f"bot/{bot}")["score"].to_list()
        assert len(mine) == 3
        assert metric(metrics, f"bot/{bot}", "Mean") == pytest.approx(sum(mine) / 3)


@pytest.mark.parametrize("game", ["prisoners_dilemma", "public_goods"])
def test_tit_for_tat_answers_current_co_players_last_actions(game: str) -> None:
    tables, _ = play(cell(FIVE_BOTS, game, "ReputationFirstOrder"))
    d = tables["decisions"]
    action = {(r["matchup_id"], r["round"]): r["action"] for r in d.iter_rows(named=True)}
    checked = 0
    for row in d.filter((pl.col("agent") == "bot/tit-for-tat") & (pl.col("round") > 1)).iter_rows(named=True):
        co = d.filter((pl.col("match_id") == row["match_id"]) & (pl.col("matchup_id") != row["matchup_id"]))
        last = [action[(name, row["round"] - 1)] for name in co["matchup_id"]]
        assert row["action"] == (0 if all(a == 0 for a in last) else 1)
        checked += 1
    assert checked == 14 * ctx_players(game)


# --- history trees -------------------------------------------------------------------------------


def test_round_one_has_no_history() -> None:
    tables, _ = play(cell(["tit-for-tat", "always-defect"], "prisoners_dilemma", "Reputation", num_rounds=1))
    assert histories(prompt_of(tables, "bot/always-defect#P1", 1)) == (
        "Your history: no matches played yet.\n\nAgent #2's history: no matches played yet."
    )


def test_first_order_section_exact() -> None:
    """Round 5 of the Reputation− transcript above, read by TfT#P1 (Agent #1) facing Agent #2.

    Window [2, 4]; depth 1 shows only each subject's own matches, with both players' actions
    and points.
    """
    tables, _ = play(cell(["tit-for-tat", "always-defect"], "prisoners_dilemma", "ReputationFirstOrder", num_rounds=5, discount=0.5))
    prompt = prompt_of(tables, "bot/tit-for-tat#P1", 5)
    section = prompt[prompt.index("Twist:") : prompt.index("\n\nChoose a probability")]
    assert "In case your position matters: you are Player 1.\n\nTwist:" in prompt
    assert section == (
        "Twist: this game is played over many rounds, but not with fixed partners. In every round you are "
        "matched at random with one other player from a larger population of players, so whom you meet "
        "usually changes from round to round. The action drawn for you in a round is recorded and shown to "
        "the players you meet in later rounds, and it may influence how they play against you. After each "
        "round, another round follows with probability 50%.\n"
        "\n"
        "Players are known only by anonymous ids. Recorded matches of you and of your co-players are shown "
        "below, from at most the last 3 rounds, most recent first. For every match they list each player's "
        "drawn action and, in brackets, the points that player received.\n"
        "\n"
        "Rounds played so far: 4. In this round you play with: Agent #2 (Player 2).\n"
        "\n"
        "Your history:\n"
        "- Round 4: you played A1 (1 point); Agent #4 played A1 (1 point).\n"
        "- Round 3: you played A0 (2 points); Agent #2 played A0 (2 points).\n"
        "- Round 2: you played A0 (2 points); Agent #2 played A0 (2 points).\n"
        "\n"
        "Agent #2's history:\n"
        "- Round 4: Agent #2 played A1 (1 point); Agent #3 played A1 (1 point).\n"
        "- Round 3: Agent #2 played A0 (2 points); you played A0 (2 points).\n"
        "- Round 2: Agent #2 played A0 (2 points); you played A0 (2 points)."
    )


def test_higher_order_tree_exact() -> None:
    """Reputation+ (depth 3), PD, [tit-for-tat, always-defect], seed 42, round 4.

    Its own matching: r1 AllD#P1 (#3) vs TfT#P2 (#2) 3/0 and TfT#P1 (#1) vs AllD#P2 (#4) 0/3;
    r2 #1 vs #2 2/2, #3 vs #4 1/1; r3 #3 vs #4 1/1, #1 vs #2 2/2. The reader is AllD#P1 (#3)
    facing #4; window [1, 3]; under each match the opponent's earlier matches (depth 2), and
    under those the next opponents' earlier matches (depth 3), never past depth 3.
    """
    tables, _ = play(cell(["tit-for-tat", "always-defect"], "prisoners_dilemma", "Reputation", num_rounds=4, discount=0.5))
    assert transcript(tables)[:12] == [
        (1, "r1m1", 1, "bot/always-defect#P1", 1, 3.0), (1, "r1m1", 2, "bot/tit-for-tat#P2", 0, 0.0),
        (1, "r1m2", 1, "bot/tit-for-tat#P1", 0, 0.0), (1, "r1m2", 2, "bot/always-defect#P2", 1, 3.0),
        (2, "r2m1", 1, "bot/tit-for-tat#P1", 0, 2.0), (2, "r2m1", 2, "bot/tit-for-tat#P2", 0, 2.0),
        (2, "r2m2", 1, "bot/always-defect#P1", 1, 1.0), (2, "r2m2", 2, "bot/always-defect#P2", 1, 1.0),
        (3, "r3m1", 1, "bot/always-defect#P1", 1, 1.0), (3, "r3m1", 2, "bot/always-defect#P2", 1, 1.0),
        (3, "r3m2", 1, "bot/tit-for-tat#P1", 0, 2.0), (3, "r3m2", 2, "bot/tit-for-tat#P2", 0, 2.0),
    ]
    prompt = prompt_of(tables, "bot/always-defect#P1", 4)
    assert "In this round you play with: Agent #4 (Player 2)." in prompt
    assert "Indented under a match are the earlier matches" in prompt
    assert histories(prompt) == (
        "Your history:\n"
        "- Round 3: you played A1 (1 point); Agent #4 played A1 (1 point).\n"
        "  Agent #4's earlier matches:\n"
        "    - Round 2: Agent #4 played A1 (1 point); you played A1 (1 point).\n"
        "      Your earlier matches:\n"
        "        - Round 1: you played A1 (3 points); Agent #2 played A0 (0 points).\n"
        "    - Round 1: Agent #4 played A1 (3 points); Agent #1 played A0 (0 points).\n"
        "- Round 2: you played A1 (1 point); Agent #4 played A1 (1 point).\n"
        "  Agent #4's earlier matches:\n"
        "    - Round 1: Agent #4 played A1 (3 points); Agent #1 played A0 (0 points).\n"
        "- Round 1: you played A1 (3 points); Agent #2 played A0 (0 points).\n"
        "\n"
        "Agent #4's history:\n"
        "- Round 3: Agent #4 played A1 (1 point); you played A1 (1 point).\n"
        "  Your earlier matches:\n"
        "    - Round 2: you played A1 (1 point); Agent #4 played A1 (1 point).\n"
        "      Agent #4's earlier matches:\n"
        "        - Round 1: Agent #4 played A1 (3 points); Agent #1 played A0 (0 points).\n"
        "    - Round 1: you played A1 (3 points); Agent #2 played A0 (0 points).\n"
        "- Round 2: Agent #4 played A1 (1 point); you played A1 (1 point).\n"
        "  Your earlier matches:\n"
        "    - Round 1: you played A1 (3 points); Agent #2 played A0 (0 points).\n"
        "- Round 1: Agent #4 played A1 (3 points); Agent #1 played A0 (0 points)."
    )


def test_depth_is_capped_and_window_is_global() -> None:
    """Same game with recursion 2 and window k = 2: round 4 shows rounds 2–3 only, one nesting level."""
    tables, _ = play(
        cell(["tit-for-tat", "always-defect"], "prisoners_dilemma", "Reputation", num_rounds=4, discount=0.5,
             lookup_depth=2, max_recursion_depth=2)
    )
    assert histories(prompt_of(tables, "bot/always-defect#P1", 4)) == (
        "Your history:\n"
        "- Round 3: you played A1 (1 point); Agent #4 played A1 (1 point).\n"
        "  Agent #4's earlier matches:\n"
        "    - Round 2: Agent #4 played A1 (1 point); you played A1 (1 point).\n"
        "- Round 2: you played A1 (1 point); Agent #4 played A1 (1 point).\n"
        "\n"
        "Agent #4's history:\n"
        "- Round 3: Agent #4 played A1 (1 point); you played A1 (1 point).\n"
        "  Your earlier matches:\n"
        "    - Round 2: you played A1 (1 point); Agent #4 played A1 (1 point).\n"
        "- Round 2: Agent #4 played A1 (1 point); you played A1 (1 point)."
    )


def test_trust_game_history_marks_seats() -> None:
    """Trust Game transcript above (AllC #1/#2, AllD #3/#4): r1 #3–#4 4/4, #1–#2 10/10;
    r2 #1–#4 0/20, #3–#2 6/2. Round 3, reader AllC#P2 (#2) facing #1."""
    tables, _ = play(cell(["always-cooperate", "always-defect"], "trust_game", "ReputationFirstOrder", num_rounds=3, discount=0.5))
    prompt = prompt_of(tables, "bot/always-cooperate#P2", 3)
    assert "In this round you play with: Agent #1 (Player 1)." in prompt
    assert "Indented under a match" not in prompt
    assert histories(prompt) == (
        "Your history:\n"
        "- Round 2: you played A0 as Player 2 (2 points); Agent #3 played A1 as Player 1 (6 points).\n"
        "- Round 1: you played A0 as Player 2 (10 points); Agent #1 played A0 as Player 1 (10 points).\n"
        "\n"
        "Agent #1's history:\n"
        "- Round 2: Agent #1 played A0 as Player 1 (0 points); Agent #4 played A1 as Player 2 (20 points).\n"
        "- Round 1: Agent #1 played A0 as Player 1 (10 points); you played A0 as Player 2 (10 points)."
    )


def test_public_goods_entries_list_both_co_players() -> None:
    tables, _ = play(cell(["always-cooperate"], "public_goods", "ReputationFirstOrder", num_rounds=2))
    prompt = prompt_of(tables, "bot/always-cooperate#P2", 2)
    assert "In this round you play with: Agent #1 (Player 1), Agent #3 (Player 3)." in prompt
    assert histories(prompt).splitlines()[:2] == [
        "Your history:",
        "- Round 1: you played A0 (1.5 points); Agent #1 played A0 (1.5 points); "
        "Agent #3 played A0 (1.5 points).",
    ]


# --- failures ------------------------------------------------------------------------------------


def test_failed_decision_withdraws_its_match_only() -> None:
    """PD, [AllC, AllD, TfT, malformed], seed 1, T = 3, δ = 0.5.

    Round 1: malformed#P1 meets AllD#P2 and AllD#P1 meets malformed#P2. Both malformed decisions
    fail after 6 attempts; those two matches get no actions and no points, and their four
    seated agents are withdrawn (status failed). AllC and TfT keep playing all 3 rounds among
    themselves (always cooperating: score 2) and never see the withdrawn agents.
    """
    tables, stats = play(
        cell(["always-cooperate", "always-defect", "tit-for-tat", "malformed"], "prisoners_dilemma",
             "ReputationFirstOrder", seed=1, num_rounds=3, discount=0.5)
    )
    d = tables["decisions"]
    assert stats.failed_decisions == 2
    assert d.filter(pl.col("round") == 1).height == 8 and d.filter(pl.col("round") > 1).height == 8
    failed = d.filter(pl.col("status") == "failed")
    assert sorted(failed["matchup_id"]) == ["bot/malformed#P1", "bot/malformed#P2"]
    assert set(failed["n_attempts"]) == {6} and failed["error"].null_count() == 0
    no_points = d.filter(pl.col("points").is_null()).sort("match_id", "seat")
    assert list(no_points.select("match_id", "matchup_id", "status").iter_rows()) == [
        ("r1m2", "bot/malformed#P1", "failed"), ("r1m2", "bot/always-defect#P2", "ok"),
        ("r1m3", "bot/always-defect#P1", "ok"), ("r1m3", "bot/malformed#P2", "failed"),
    ]
    assert no_points["action"].null_count() == 4
    assert tables["llm_calls"].height == 14 + 2 * 6
    withdrawn = {"bot/always-defect#P1", "bot/always-defect#P2", "bot/malformed#P1", "bot/malformed#P2"}
    status = dict(zip(tables["matchups"]["matchup_id"], tables["matchups"]["status"], strict=True))
    assert status == {**dict.fromkeys(withdrawn, "failed"),
                      **{f"bot/{b}#P{s}": "complete" for b in ("always-cooperate", "tit-for-tat") for s in (1, 2)}}
    assert not set(d.filter(pl.col("round") > 1)["matchup_id"]) & withdrawn
    for name in ("bot/tit-for-tat#P1", "bot/always-cooperate#P2"):
        for r in (2, 3):
            text = histories(prompt_of(tables, name, r))
            assert not any(f"Agent #{u}" in text for u in (3, 4, 7, 8))  # AllD and malformed ids
    scores, metrics = metrics_of(tables, "ReputationFirstOrder")
    assert dict(zip(scores["matchup_id"], scores["score"], strict=True)) == pytest.approx(
        {f"bot/{b}#P{s}": 2.0 for b in ("always-cooperate", "tit-for-tat") for s in (1, 2)}
    )
    assert metric(metrics, "LLM Average", "ExcludedMatchups") == 4.0
    assert metric(metrics, "bot/tit-for-tat", "Mean") == 2.0
    assert metrics.filter(pl.col("agent").is_in(["bot/always-defect", "bot/malformed"])).height == 0
