"""Table builder on small hand-made frames (docs/protocol/tables.md): per-run values, ± semantics, normalisation
after run-averaging, LLM-average rules, DR sources, design-quality rates, rendering."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from coopeval.core.schemas import conform
from coopeval.evaluation.replicator import replicator_dynamics
from coopeval.studies.coopeval.reference.schemas import conform_any
from coopeval.studies.coopeval.tables.bootstrap import (
    batched_replicator,
    bootstrap_group,
    group_rng,
)
from coopeval.studies.coopeval.tables.builder import build_tables, llm_average, standard_error
from coopeval.studies.coopeval.tables.defaults import TableSettings
from coopeval.studies.coopeval.tables.metrics import compute_metrics, observations_by_cell
from coopeval.studies.coopeval.tables.render import (
    format_cell,
    render_latex,
    render_markdown,
    write_tables,
)

A, B = "x/a(CoT)", "x/b(IO)"
LLM = "LLM Average"
GAMES = ("PrisonersDilemma", "PublicGoods", "TravellersDilemma", "TrustGame")


def rows(run: str, mech: str, game: str, metric: str, values: dict[str, float], rule: str = "") -> list[dict[str, object]]:
    return [
        {"cell_id": f"{run}/{mech}/{game}", "source": "ours", "run": run, "mechanism": mech, "game": game,
         "agent": agent, "metric": metric, "value": value, "rule": rule}
        for agent, value in values.items()
    ]


def metrics_frame(data: list[dict[str, object]]) -> pl.DataFrame:
    return conform("metrics", pl.DataFrame(data))


def cell(frame: pl.DataFrame, **eq: object) -> dict[str, object]:
    for key, value in eq.items():
        frame = frame.filter(pl.col(key) == value)
    assert frame.height == 1, frame
    return frame.row(0, named=True)


def test_standard_error_and_llm_average_rules() -> None:
    assert standard_error([1.0]) is None
    assert standard_error([1.0, 2.0, 3.0]) == pytest.approx(1.0 / math.sqrt(3), abs=1e-15)
    assert llm_average("Mean", {A: 1.0, B: 2.0}) == 1.5
    assert llm_average("DR", {A: 1.0, B: 2.0}) == 1.5
    assert llm_average("Fitness", {A: 2.0, B: 1.0}, {A: 0.75, B: 0.25}) == 1.75
    with pytest.raises(ValueError, match="sum to"):
        llm_average("Fitness", {A: 2.0, B: 1.0}, {A: 0.5, B: 0.4})
    with pytest.raises(ValueError, match="final population"):
        llm_average("Fitness", {A: 2.0, B: 1.0}, None)


def test_per_game_mean_se_over_runs_and_llm_average() -> None:
    data = []
    for run, (a, b) in {"r1": (1.0, 0.0), "r2": (2.0, 0.0), "r3": (3.0, 3.0)}.items():
        data += rows(run, "NoMechanism", "PrisonersDilemma", "Mean", {A: a, B: b})
        data += rows(run, "NoMechanism", "PrisonersDilemma", "Fitness", {A: 2.0, B: 1.0})
        data += rows(run, "NoMechanism", "PrisonersDilemma", "FinalPopulation", {A: 0.75, B: 0.25})
    t = build_tables(metrics_frame(data), settings=TableSettings(n_bootstrap=0))
    a = cell(t.per_game, metric="Mean", agent=A)
    assert a["mean"] == 2.0 and a["se"] == pytest.approx(1 / math.sqrt(3), abs=1e-15) and a["n"] == 3
    llm = cell(t.per_game, metric="Mean", agent=LLM)
    # per-run LLM averages 0.5, 1.0, 3.0
    assert llm["mean"] == pytest.approx(1.5) and llm["se"] == pytest.approx(standard_error([0.5, 1.0, 3.0]))
    assert llm["rank"] is None
    assert cell(t.per_game, metric="Fitness", agent=LLM)["mean"] == pytest.approx(1.75)
    assert cell(t.per_game, metric="Mean", agent=A)["rank"] == 1 and cell(t.per_game, metric="Mean", agent=B)["rank"] == 2


def test_one_run_has_no_se() -> None:
    t = build_tables(metrics_frame(rows("r1", "NoMechanism", "PrisonersDilemma", "Mean", {A: 1.0, B: 2.0})), settings=TableSettings(n_bootstrap=0))
    assert t.per_game["se"].null_count() == t.per_game.height


def test_aggregate_normalises_per_game_after_run_averaging_and_se_across_games() -> None:
    # run-averaged raw Mean of A per game: PD 1.5 → 0.5; PGG 1.5 → 1.0; TD 2.0 → 0.0; Trust 7.0 → 0.5
    raw = {"PrisonersDilemma": (1.0, 2.0), "PublicGoods": (1.25, 1.75), "TravellersDilemma": (1.0, 3.0), "TrustGame": (4.0, 10.0)}
    data = []
    for game, (x1, x2) in raw.items():
        data += rows("r1", "Repetition", game, "Mean", {A: x1, B: x1})
        data += rows("r2", "Repetition", game, "Mean", {A: x2, B: x1})
    t = build_tables(metrics_frame(data), settings=TableSettings(n_bootstrap=0))
    a = cell(t.aggregate, metric="Mean", agent=A)
    per_game = [0.5, 1.0, 0.0, 0.5]
    assert a["game"] == "All" and a["n"] == 4
    assert a["mean"] == pytest.approx(np.mean(per_game), abs=1e-15)
    assert a["se"] == pytest.approx(np.std(per_game, ddof=1) / 2, abs=1e-15)  # across games, not runs
    assert a["rank"] == 1


def test_single_game_aggregate_divides_se_by_scale() -> None:
    data = rows("r1", "Mediation", "TravellersDilemma", "Mean", {A: 2.0, B: 2.0})
    data += rows("r2", "Mediation", "TravellersDilemma", "Mean", {A: 5.0, B: 2.0})
    t = build_tables(metrics_frame(data), settings=TableSettings(n_bootstrap=0))
    per_game_se = cell(t.per_game, metric="Mean", agent=A)["se"]
    assert per_game_se == pytest.approx(1.5)
    agg = cell(t.aggregate, metric="Mean", agent=A)
    assert agg["mean"] == pytest.approx(0.5) and agg["se"] == pytest.approx(1.5 / 3)


def test_dr_prefers_released_ranks_and_dr_exact_is_strictest() -> None:
    data = []
    for game in ("PrisonersDilemma", "TrustGame"):
        data += rows("r1", "Contracting", game, "Mean", {A: 1.0, B: 1.0})
        data += rows("r1", "Contracting", game, "DR_rank", {A: 1.0, B: 2.0}, "strictest")
        data += rows("r1", "Contracting", game, "DR_rank", {A: 1.5, B: 1.5}, "reference-vertex")
    released = conform_any("released_metrics", pl.DataFrame(
        rows("r1", "Contracting", "PrisonersDilemma", "DR_rank", {A: 2.0, B: 1.0}, "released")))
    t = build_tables(metrics_frame(data), released=released, settings=TableSettings(dr_rule="reference-vertex", n_bootstrap=0))
    pg = t.per_game
    assert cell(pg, game="PrisonersDilemma", metric="DR", agent=A)["mean"] == 2.0
    assert cell(pg, game="PrisonersDilemma", metric="DR", agent=A)["dr_source"] == "released"
    assert cell(pg, game="TrustGame", metric="DR", agent=A)["mean"] == 1.5  # no release: configured rule
    assert cell(pg, game="TrustGame", metric="DR", agent=A)["dr_source"] == "reference-vertex"
    assert cell(pg, game="PrisonersDilemma", metric="DR_exact", agent=A)["mean"] == 1.0
    assert cell(pg, game="PrisonersDilemma", metric="DR", agent=LLM)["mean"] == 1.5
    # DR is ranked ascending (rank 1 = best rating rank) and never normalised in the aggregate
    assert cell(pg, game="PrisonersDilemma", metric="DR", agent=B)["rank"] == 1
    agg = cell(t.aggregate, metric="DR", agent=A)
    assert agg["mean"] == pytest.approx((2.0 + 1.5) / 2)


def test_reputation_rows_carry_mean_only() -> None:
    scores = pl.DataFrame({
        "cell_id": ["r1/rep"] * 4, "source": ["ours"] * 4, "run": ["r1"] * 4, "mechanism": ["Reputation"] * 4,
        "game": ["PrisonersDilemma"] * 4, "matchup_id": [f"{A}#P1", f"{A}#P2", f"{B}#P1", f"{B}#P2"],
        "seat": [1, 2, 1, 2], "agent": [A, A, B, B], "score": [1.0, 2.0, 3.0, 5.0], "status": ["complete"] * 4,
    })
    metrics = compute_metrics(conform("scores", scores))
    assert set(metrics["metric"]) == {"Mean"}
    assert dict(zip(metrics["agent"], metrics["value"], strict=True)) == {A: 1.5, B: 4.0}
    t = build_tables(metrics, scores=conform("scores", scores), settings=TableSettings(n_bootstrap=50))
    assert set(t.per_game["metric"]) == {"Mean"}
    assert t.per_game["ci_low"].null_count() == 0


def _pd_scores(runs: dict[str, dict[tuple[str, str], tuple[float, float]]], status: str = "complete") -> pl.DataFrame:
    data = []
    for run, matchups in runs.items():
        for k, ((p1, p2), (s1, s2)) in enumerate(matchups.items()):
            for seat, agent, score in ((1, p1, s1), (2, p2, s2)):
                data.append({"cell_id": f"{run}/nm", "source": "ours", "run": run, "mechanism": "NoMechanism",
                             "game": "PrisonersDilemma", "matchup_id": f"m{k}", "seat": seat, "agent": agent,
                             "score": score, "status": status})
    return conform("scores", pl.DataFrame(data))


PD_RUN = {(A, A): (2.0, 2.0), (A, B): (0.0, 3.0), (B, A): (3.0, 0.0), (B, B): (1.0, 1.0)}


def test_compute_metrics_from_scores() -> None:
    metrics = compute_metrics(_pd_scores({"r1": PD_RUN}))
    get = {(r["agent"], r["metric"], r["rule"]): r["value"] for r in metrics.iter_rows(named=True)}
    assert get[(A, "Mean", "")] == 1.0 and get[(B, "Mean", "")] == 2.0
    # defection dominates: B takes over, fitness of B at the end ≈ 1 (D vs D)
    assert get[(B, "FinalPopulation", "")] > 0.99 and get[(B, "Fitness", "")] == pytest.approx(1.0, abs=1e-3)
    assert get[(A, "DR_rank", "strictest")] == 2.0 and get[(B, "DR_rank", "strictest")] == 1.0
    assert get[(LLM, "PopulationFitness", "")] == pytest.approx(
        get[(A, "FinalPopulation", "")] * get[(A, "Fitness", "")] + get[(B, "FinalPopulation", "")] * get[(B, "Fitness", "")])
    failed = _pd_scores({"r1": PD_RUN}, status="failed")
    assert compute_metrics(failed).is_empty()


def test_bootstrap_is_seeded_and_brackets_the_estimate() -> None:
    scores = _pd_scores({"r1": PD_RUN, "r2": {k: (v[0] + 0.5, v[1] + 0.5) for k, v in PD_RUN.items()}})
    metrics = compute_metrics(scores)
    t1 = build_tables(metrics, scores=scores, settings=TableSettings(n_bootstrap=200, seed=7))
    t2 = build_tables(metrics, scores=scores, settings=TableSettings(n_bootstrap=200, seed=7))
    assert t1.per_game.equals(t2.per_game)
    a = cell(t1.per_game, metric="Mean", agent=A)
    # run means of A: 1.0 and 1.5 → resampled means lie in [1.0, 1.5]
    assert 1.0 - 1e-12 <= a["ci_low"] <= a["mean"] <= a["ci_high"] <= 1.5 + 1e-12
    fit = cell(t1.per_game, metric="Fitness", agent=LLM)
    assert fit["ci_low"] <= fit["mean"] + 1e-9 and fit["ci_high"] >= fit["mean"] - 1e-9
    assert cell(t1.per_game, metric="DR", agent=A)["ci_low"] is None
    runs = [list(v) for v in observations_by_cell(scores).values()]
    r7 = bootstrap_group(runs, group_rng(7, "NoMechanism", "PrisonersDilemma"), 200)
    r7b = bootstrap_group(runs, group_rng(7, "NoMechanism", "PrisonersDilemma"), 200)
    r8 = bootstrap_group(runs, group_rng(8, "NoMechanism", "PrisonersDilemma"), 200)
    assert np.array_equal(r7.mean, r7b.mean) and not np.array_equal(r7.mean, r8.mean)
    assert r7.mean.shape == (200, 2) and r7.fitness is not None and r7.fitness.shape == (200, 2)


def test_batched_replicator_equals_evaluation_replicator() -> None:
    rng = np.random.default_rng(3)
    for shape in ((5, 5), (4, 4, 4)):
        tensors = rng.uniform(-1, 3, size=(3, *shape))
        pops, fits = batched_replicator(tensors)
        for b in range(3):
            ref = replicator_dynamics(tensors[b])
            assert np.abs(pops[b] - ref.final_population).max() < 1e-12
            assert np.abs(fits[b] - ref.fitness).max() < 1e-12
    # early stop per batch member: a constant game stops at once and stays uniform
    pops, _ = batched_replicator(np.stack([np.ones((3, 3)), np.array([[1.0, 0, 0], [2, 0, 0], [0, 0, 0]])]))
    assert np.allclose(pops[0], 1 / 3)


def test_bootstrap_strata_keep_the_tensor_complete() -> None:
    # one run; every resample must still give a tensor (cells fed by their own stratum only)
    runs = [list(v) for v in observations_by_cell(_pd_scores({"r1": PD_RUN})).values()]
    rep = bootstrap_group(runs, group_rng(1, "x"), 100)
    assert rep.fitness is not None and np.isfinite(rep.fitness).all()
    # self-play matchups form single-member strata, so (A, A) is always kept
    assert np.isfinite(rep.mean).all()


def _designs(entries: list[tuple[str, str, str, dict[str, object]]]) -> pl.DataFrame:
    data = [
        {"cell_id": f"r1/{mech}/{game}", "source": "ours", "run": "r1", "mechanism": mech, "game": game,
         "designer": f"{agent}#P1", "agent": agent, "seat": 1,
         "design_kind": "mediator" if mech == "Mediation" else "contract", "design": json.dumps(design), "status": "ok"}
        for mech, game, agent, design in entries
    ]
    return conform("designs", pl.DataFrame(data))


def test_design_quality_rates_and_se_across_games() -> None:
    entries = [
        # A: NS in all four games; WD in PD and PGG only (impossible for TD and Trust, docs/protocol/design-checks.md#ns-wd / paper Fig. 18)
        ("Mediation", "PrisonersDilemma", A, {"1": "A1", "2": "A0"}),
        ("Mediation", "PublicGoods", A, {"1": "A1", "2": "A1", "3": "A0"}),
        ("Mediation", "TravellersDilemma", A, {"1": "A0", "2": "A3"}),
        ("Mediation", "TrustGame", A, {"1": "A1", "2": "A0"}),
        # B: one good and one bad design per game in PD, bad elsewhere
        ("Mediation", "PrisonersDilemma", B, {"1": "A1", "2": "A0"}),
        ("Mediation", "PrisonersDilemma", B, {"1": "A0", "2": "A0"}),
        ("Mediation", "PublicGoods", B, {"1": "A1", "2": "A1", "3": "A1"}),
        ("Mediation", "TravellersDilemma", B, {"1": "A2", "2": "A2"}),
        ("Mediation", "TrustGame", B, {"1": "A0", "2": "A0"}),
        ("Mediation", "StagHunt", B, {"1": "A1", "2": "A0"}),  # not one of the four games: ignored
    ]
    t = build_tables(metrics_frame(rows("r1", "Mediation", "PrisonersDilemma", "Mean", {A: 1.0, B: 1.0})),
                     designs=_designs(entries), settings=TableSettings(n_bootstrap=0))
    dq = t.design_quality
    assert cell(dq, metric="NS", agent=A)["mean"] == 100.0 and cell(dq, metric="NS", agent=A)["se"] == 0.0
    wd = cell(dq, metric="WD", agent=A)
    assert wd["mean"] == 50.0 and wd["se"] == pytest.approx(100 * np.std([1, 1, 0, 0], ddof=1) / 2)
    ns_b = cell(dq, metric="NS", agent=B)
    assert ns_b["mean"] == pytest.approx(100 * 0.5 / 4)
    llm = cell(dq, metric="NS", agent=LLM)
    assert llm["mean"] == pytest.approx(100 * np.mean([(1 + 0.5) / 2, 0.5, 0.5, 0.5]))
    assert cell(dq, metric="NS", agent=A)["rank"] == 1


def test_single_game_design_rate_uses_binomial_se() -> None:
    entries = [("Contracting", "PrisonersDilemma", A, {"A0": 2, "A1": 0}),
               ("Contracting", "PrisonersDilemma", A, {"A0": 0, "A1": 0})]
    t = build_tables(metrics_frame(rows("r1", "Contracting", "PrisonersDilemma", "Mean", {A: 1.0})),
                     designs=_designs(entries), settings=TableSettings(n_bootstrap=0))
    ns = cell(t.design_quality, metric="NS", agent=A)
    assert ns["mean"] == 50.0 and ns["se"] == pytest.approx(100 * math.sqrt(0.25 / 2))


def test_rendering_and_csv_columns(tmp_path: Path) -> None:
    data = []
    agents = {f"x/m{i}(CoT)": float(i) for i in range(6)}
    for run in ("r1", "r2"):
        data += rows(run, "NoMechanism", "PrisonersDilemma", "Mean", agents)
        data += rows(run, "Reputation", "PrisonersDilemma", "Mean", agents)
    t = build_tables(metrics_frame(data), settings=TableSettings(n_bootstrap=0))
    files = write_tables(t, tmp_path)
    assert sorted(p.name for p in files) == sorted(
        f"{n}.{e}" for n in ("per_game", "aggregate", "design_quality") for e in ("csv", "md", "tex"))
    header = (tmp_path / "per_game.csv").read_text().splitlines()[0]
    assert header == "mechanism,game,metric,agent,mean,se,rank,ci_low,ci_high,tie_group,players,note"
    assert (tmp_path / "aggregate.csv").read_text().splitlines()[0] == header.removesuffix(",players,note")
    assert (tmp_path / "design_quality.csv").read_text().splitlines()[0] == "mechanism,metric,agent,mean,se"
    md = render_markdown(t.per_game, "per_game", t.notes)
    assert "| Reputation+ |" in md and "**5.000 ± 0.000**" in md and "*0.000 ± 0.000*" in md
    tex = render_latex(t.aggregate, "aggregate", t.notes)
    assert r"\textbf{" in tex and r"\textcolor{gray}{" in tex and r"$\pm$" in tex
    assert format_cell(1.23456, None, "Mean") == "1.235"
    assert format_cell(2.25, 0.125, "DR") == "2.2 ± 0.1"
    assert format_cell(None, None, "NS") == "–"


def test_design_quality_table_input_uses_its_ns_wd_columns() -> None:
    # the pipeline's design_quality table (ns/wd precomputed) gives the same cells as designs
    zero = {"A0": 0, "A1": 0}
    entries = [("Contracting", g, A, {**zero, "A2": 0, "A3": 0} if g == "TravellersDilemma" else zero) for g in GAMES]
    designs = _designs(entries)
    pre = designs.with_columns(pl.lit(True).alias("ns"), pl.lit(False).alias("wd")).drop("status")
    metrics = metrics_frame(rows("r1", "Contracting", "PrisonersDilemma", "Mean", {A: 1.0}))
    from_designs = build_tables(metrics, designs=designs, settings=TableSettings(n_bootstrap=0)).design_quality
    from_table = build_tables(metrics, designs=pre, settings=TableSettings(n_bootstrap=0)).design_quality
    assert cell(from_designs, metric="NS", agent=A)["mean"] == 0.0  # no contract: not NS
    assert cell(from_table, metric="NS", agent=A)["mean"] == 100.0 and cell(from_table, metric="WD", agent=A)["mean"] == 0.0


def test_builder_accepts_the_pipeline_evaluate_stage_output() -> None:
    # our own runs: metrics come from coopeval.studies.coopeval.evaluate.evaluate_cell (extra LLM Average
    # and note rows); the builder must give the same cells as for compute_metrics
    from coopeval.studies.coopeval.evaluate import evaluate_cell

    scores = _pd_scores({"r1": PD_RUN, "r2": {k: (v[0] + 0.5, v[1]) for k, v in PD_RUN.items()}})
    frames = []
    for run in ("r1", "r2"):
        s = scores.filter(pl.col("run") == run)
        matchups = s.select("matchup_id").unique().with_columns(pl.lit("complete").alias("status"))
        ids = {"cell_id": f"{run}/nm", "source": "ours", "run": run, "mechanism": "NoMechanism", "game": "PrisonersDilemma"}
        metrics, _ = evaluate_cell(s, matchups, ids)
        frames.append(metrics)
    pipeline = build_tables(pl.concat(frames), settings=TableSettings(n_bootstrap=0)).per_game
    ours = build_tables(compute_metrics(scores), settings=TableSettings(n_bootstrap=0)).per_game
    cols = ["metric", "agent", "mean", "se", "rank"]
    assert pipeline.select(cols).sort(["metric", "agent"]).equals(ours.select(cols).sort(["metric", "agent"]))


def test_agent_columns_follow_the_config_roster(tmp_path: Path) -> None:
    from coopeval.studies.coopeval.tables.roster import roster_file_agents, table_agents

    roster = [
        {"model": "x/b", "style": "IO", "table_label": "Bee"},
        {"model": "openrouter/x/a", "label": "x/a", "style": "CoT"},
        {"model": "x/b", "style": "IO"},  # same type string again: keeps its first place
    ]
    columns = table_agents(roster)
    assert columns.order == (B, A) and columns.labels == {B: "Bee"}
    data = rows("r1", "NoMechanism", "PrisonersDilemma", "Mean", {A: 1.0, B: 2.0, "x/c(IO)": 0.5})
    t = build_tables(metrics_frame(data), settings=TableSettings(n_bootstrap=0, columns=columns))
    # roster order first, agents outside the roster after, sorted; LLM Average last
    assert t.per_game["agent"].to_list() == [B, A, "x/c(IO)", LLM]
    write_tables(t, tmp_path)
    header = next(line for line in (tmp_path / "per_game.md").read_text().splitlines() if line.startswith("| Mechanism"))
    assert header == f"| Mechanism | Bee | {A} | x/c(IO) | {LLM} |"
    # the paper's six columns and labels come from config/paper.yaml
    paper = roster_file_agents(Path(__file__).resolve().parents[4] / "config" / "paper.yaml")
    assert [paper.label(a) for a in paper.order] == ["Claude", "Gemini-R", "Gemini-B", "GPT-5.2", "GPT-4o", "Qwen-30b"]
    assert paper.order[0] == "anthropic/claude-sonnet-4.5(CoT)" and paper.order[2] == "google/gemini-3-flash-preview(IO)"
