"""The LLM Average averages LLM agents only (issue 47, docs/human-play.md): with a person and a bot
seated beside two models, the row is the two models' average, never the person's or the bot's;
a table with no LLM agent has no LLM Average row. Values computed by hand below."""

from __future__ import annotations

import math

import numpy as np
import pytest

from coopeval.studies.coopeval.tables.bootstrap import CellReplicates
from coopeval.studies.coopeval.tables.builder import build_tables
from coopeval.studies.coopeval.tables.defaults import TableSettings
from coopeval.studies.coopeval.tables.from_store import tables_settings
from coopeval.studies.coopeval.tables.per_game import replicates_of
from coopeval.studies.coopeval.tables.roster import table_agents
from tests.studies.coopeval.tables.test_tables_builder import (
    LLM,
    _designs,
    cell,
    metrics_frame,
    rows,
)

# a person with a label (its type string "Alice(IO)" does not say it is a person: the roster does),
# a scripted bot and two models
ROSTER = [
    {"model": "human/alice", "label": "Alice"},
    {"model": "bot/tit-for-tat"},
    {"model": "openai/gpt-x", "style": "IO"},
    {"model": "mock/m", "style": "CoT"},
]
P, T, M1, M2 = "Alice(IO)", "bot/tit-for-tat", "openai/gpt-x(IO)", "mock/m(CoT)"
PD = ("NoMechanism", "PrisonersDilemma")


def test_roster_classifies_models_bots_and_people() -> None:
    from coopeval.agents.registry import is_llm

    assert [is_llm(m) for m in ("human/alice", "bot/tit-for-tat", "openai/gpt-x", "mock/m", "local/qwen")] == [
        False, False, True, True, True,
    ]
    columns = table_agents(ROSTER)
    assert dict(columns.llm) == {P: False, T: False, M1: True, M2: True}
    # agents outside the roster: by their type string
    assert not columns.is_llm("human/bob(IO)") and not columns.is_llm("bot/grim") and columns.is_llm("x/c(IO)")
    config = {"agents": ROSTER, "evaluation": {"dr_rule": "strictest", "steps": 10, "lr": 0.1}, "tables": {"bootstrap": 0}, "seed": 1}
    assert tables_settings(config)["agent_llm"] == {P: False, T: False, M1: True, M2: True}


def _person_bot_two_models() -> list[dict[str, object]]:
    data = []
    # Mean: the person 1.930 and the bot 1.940 in both runs (the example: 1.935 was their mean)
    data += rows("r1", *PD, "Mean", {P: 1.930, T: 1.940, M1: 1.0, M2: 2.0})
    data += rows("r2", *PD, "Mean", {P: 1.930, T: 1.940, M1: 3.0, M2: 2.0})
    for run in ("r1", "r2"):
        data += rows(run, *PD, "Fitness", {P: 1.0, T: 2.0, M1: 3.0, M2: 4.0})
        data += rows(run, *PD, "FinalPopulation", {P: 0.1, T: 0.3, M1: 0.2, M2: 0.4})
        data += rows(run, *PD, "DR_rank", {P: 1.0, T: 2.0, M1: 3.0, M2: 4.0}, rule="strictest")
    return data


def test_llm_average_leaves_out_the_person_and_the_bot() -> None:
    t = build_tables(metrics_frame(_person_bot_two_models()), settings=TableSettings(n_bootstrap=0, columns=table_agents(ROSTER)))
    mean = cell(t.per_game, metric="Mean", agent=LLM)
    # per run (M1 + M2) / 2: r1 1.5, r2 2.5 → 2.0 ± std([1.5, 2.5]) / √2 = 0.5
    # (all four seats: r1 (1.93 + 1.94 + 1 + 2) / 4 = 1.7175, r2 2.2175 → 1.9675)
    assert mean["mean"] == pytest.approx(2.0) and mean["se"] == pytest.approx(0.5)
    # Fitness weighted by the models' final populations only: (0.2·3 + 0.4·4) / (0.2 + 0.4) = 11/3
    # (all four: 0.1·1 + 0.3·2 + 0.2·3 + 0.4·4 = 2.9)
    assert cell(t.per_game, metric="Fitness", agent=LLM)["mean"] == pytest.approx(11 / 3)
    # DR rank: (3 + 4) / 2 = 3.5 (all four: 2.5)
    assert cell(t.per_game, metric="DR", agent=LLM)["mean"] == pytest.approx(3.5)
    # the aggregate (PD only): (x − NE) / (coop − NE) of the per-game 2.0, PD's NE payoff 1 and cooperative payoff 2
    agg = t.aggregate.filter((t.aggregate["metric"] == "Mean") & (t.aggregate["agent"] == LLM))
    assert agg["mean"].to_list() == pytest.approx([1.0])  # (2.0 − 1) / (2 − 1); all four seats: 0.9675


def test_no_llm_agent_no_llm_average_row() -> None:
    data = rows("r1", *PD, "Mean", {P: 1.930, T: 1.940})
    t = build_tables(metrics_frame(data), settings=TableSettings(n_bootstrap=0, columns=table_agents(ROSTER)))
    assert t.per_game["agent"].to_list() == [P, T]
    assert LLM not in t.aggregate["agent"].to_list()


def test_design_quality_llm_average_over_the_models_only() -> None:
    entries = [
        ("Mediation", "PrisonersDilemma", M1, {"1": "A1", "2": "A0"}),  # passes NS
        ("Mediation", "PrisonersDilemma", M2, {"1": "A1", "2": "A0"}),
        ("Mediation", "PrisonersDilemma", M2, {"1": "A0", "2": "A0"}),  # fails NS: M2 at 0.5
        ("Mediation", "PrisonersDilemma", P, {"1": "A0", "2": "A0"}),  # the person: 0
    ]
    t = build_tables(metrics_frame(rows("r1", "Mediation", "PrisonersDilemma", "Mean", {M1: 1.0, M2: 1.0, P: 1.0})),
                     designs=_designs(entries), settings=TableSettings(n_bootstrap=0, columns=table_agents(ROSTER)))
    # (1 + 0.5) / 2 = 75 % (with the person: (1 + 0.5 + 0) / 3 = 50 %)
    assert cell(t.design_quality, metric="NS", agent=LLM)["mean"] == pytest.approx(75.0)
    assert cell(t.design_quality, metric="NS", agent=P)["mean"] == 0.0


def test_bootstrap_replicates_of_the_llm_average() -> None:
    # 2 resamples, 2 runs each; agents sorted: Alice(IO), bot/tit-for-tat, mock/m(CoT), openai/gpt-x(IO)
    agents = (P, T, M2, M1)
    pop = np.array([[0.1, 0.3, 0.2, 0.4], [0.0, 0.5, 0.25, 0.25], [0.25, 0.25, 0.25, 0.25], [0.5, 0.5, 0.0, 0.0]])
    fit = np.array([[1.0, 2.0, 4.0, 3.0], [1.0, 2.0, 2.0, 4.0], [1.0, 1.0, 1.0, 3.0], [1.0, 2.0, 3.0, 4.0]])
    rows_of = np.array([0, 0, 1, 1])
    every = np.array([(0.1 + 0.6 + 0.8 + 1.2 + 0 + 1 + 0.5 + 1) / 2, (0.25 * 6 + 1.5) / 2])
    rep = CellReplicates(
        agents=agents, mean=np.array([[1.93, 1.94, 2.0, 1.0], [1.93, 1.94, 2.0, 3.0]]), fitness=fit[:2],
        population_fitness=every, parts=((rows_of, pop, fit),), n_runs=2,
    )
    columns = table_agents(ROSTER)
    # Mean: (2 + 1) / 2 and (2 + 3) / 2
    assert replicates_of(rep, "Mean", LLM, columns.is_llm).tolist() == pytest.approx([1.5, 2.5])
    fitness = replicates_of(rep, "Fitness", LLM, columns.is_llm)
    # resample 0: runs (0.2·4 + 0.4·3) / 0.6 = 10/3 and (0.25·2 + 0.25·4) / 0.5 = 3 → 19/6
    assert fitness[0] == pytest.approx(19 / 6)
    # resample 1: (0.25 + 0.75) / 0.5 = 2, then the models died out (NaN) → NaN
    assert math.isnan(fitness[1])
    # every agent an LLM agent: the stored population-weighted fitness
    assert replicates_of(rep, "Fitness", LLM, lambda a: True) is every


def test_store_metrics_llm_average_of_a_cell_leaves_out_bots_and_people() -> None:
    """The store's per-cell LLM Average (``evaluate_cell``, read by the explorer's boards): by type
    string, ``bot/…`` and ``human/…`` are not LLM agents."""
    import polars as pl

    from coopeval.core.schemas import conform
    from coopeval.studies.coopeval.evaluate import evaluate_cell

    person, bot, model = "human/p(IO)", "bot/tit-for-tat", "x/m(IO)"
    key = {"cell_id": "c1", "source": "ours", "run": "r1", "mechanism": "NoMechanism", "game": "PrisonersDilemma"}
    played = [((model, bot), (3.0, 1.0)), ((model, person), (2.0, 4.0)), ((bot, person), (0.0, 6.0))]
    scores = conform("scores", pl.DataFrame([
        {**key, "matchup_id": f"m{i}", "seat": seat, "agent": agent, "score": score[seat], "status": "complete"}
        for i, (seats, score) in enumerate(played) for seat, agent in enumerate(seats)
    ]))
    matchups = pl.DataFrame({"matchup_id": ["m0", "m1", "m2"], "status": ["complete"] * 3})
    metrics, _ = evaluate_cell(scores, matchups, key, has_metagame=False)
    means = dict(metrics.filter(pl.col("metric") == "Mean").select("agent", "value").iter_rows())
    # the model's mean (3 + 2) / 2 = 2.5 is the LLM Average (all three: (2.5 + 0.5 + 5) / 3 = 2.667)
    assert means == {model: 2.5, bot: 0.5, person: 5.0, LLM: 2.5}


def test_store_metrics_llm_average_follows_the_cells_roster_not_the_name() -> None:
    """A person seated with a label (``human/alice`` as ``alice(IO)``: a name that reads like a
    model's) beside a model: the store's LLM Average (``evaluate_cell`` with the cell's roster) is
    the model's own Mean and Fitness, never an average with the person's (issue 47)."""
    import polars as pl

    from coopeval.core.schemas import conform
    from coopeval.studies.coopeval.evaluate import evaluate_cell

    roster = [{"model": "human/alice", "label": "alice"}, {"model": "x/m", "style": "IO"}]
    person, model = "alice(IO)", "x/m(IO)"
    key = {
        "cell_id": "c1",
        "source": "ours",
        "run": "r1",
        "mechanism": "NoMechanism",
        "game": "PrisonersDilemma",
    }
    # every ordered roster of the two agents: the payoff matrix (own row, co-player column) is
    # model: [2, 1], person: [3, 1]
    played = [
        ((model, model), (2.0, 2.0)),
        ((model, person), (1.0, 3.0)),
        ((person, model), (3.0, 1.0)),
        ((person, person), (1.0, 1.0)),
    ]
    seats = [
        {**key, "matchup_id": f"m{i}", "seat": seat, "agent": agent, "score": score[seat]}
        for i, (agents, score) in enumerate(played)
        for seat, agent in enumerate(agents)
    ]
    scores = conform("scores", pl.DataFrame(seats).with_columns(status=pl.lit("complete")))
    matchups = pl.DataFrame({"matchup_id": [f"m{i}" for i in range(4)], "status": ["complete"] * 4})
    llm = table_agents(roster).llm
    metrics, _ = evaluate_cell(scores, matchups, key, steps=1, lr=0.1, llm=llm)
    value = {(a, m): v for a, m, v in metrics.select("agent", "metric", "value").iter_rows()}
    # Mean: the model (2 + 2 + 1 + 1) / 4 = 1.5, the person (3 + 3 + 1 + 1) / 4 = 2.0;
    # the LLM Average is the model's 1.5 (by name both are "models": (1.5 + 2.0) / 2 = 1.75)
    assert (value[model, "Mean"], value[person, "Mean"], value[LLM, "Mean"]) == (1.5, 2.0, 1.5)
    # Fitness after one step from (1/2, 1/2): f = (1.5, 2.0), mean 1.75, so the model's share is
    # e^(−0.025) / (e^(−0.025) + e^(0.025)) = 1 / (1 + e^0.05) = x; its fitness 2x + (1 − x) = 1 + x
    x = 1 / (1 + math.exp(0.05))
    assert value[model, "FinalPopulation"] == pytest.approx(x)
    assert value[model, "Fitness"] == pytest.approx(1 + x)
    assert value[person, "Fitness"] == pytest.approx(1 + 2 * x)
    # the LLM Average Fitness: the model's own, 1 + x = 1.48750 (by name, both weighted:
    # x (1 + x) + (1 − x)(1 + 2x) = 1.73735)
    assert value[LLM, "Fitness"] == pytest.approx(1 + x)
