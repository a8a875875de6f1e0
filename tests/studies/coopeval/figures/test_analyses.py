"""Charts of the analyses: built from small frames, the row limit enforced, the radar geometry
hand-computed, offline rendering, the figure catalog, and a full render from a small store."""

from __future__ import annotations

import json

import polars as pl
import pytest

from coopeval.core.charts import report_format, save_chart
from coopeval.studies.coopeval.figures.analyses import (
    action_probability_chart,
    conditional_chart,
    design_quality_chart,
    justification_heatmap_chart,
    justification_radar_chart,
    note_chart,
    radar_points,
    voting_chart,
)
from coopeval.studies.coopeval.figures.catalog import (
    ALL_GAMES,
    ALL_MECHANISMS,
    analysis_figures,
    core_figures,
    table_pages,
)
from coopeval.studies.coopeval.figures.core import MAX_ROWS

LABELS = ["Reciprocity", "Risk aversion", "Trust evaluation", "Other"]


def shares(groups, values):
    return pl.DataFrame(
        [
            {"mechanism": g, "label": label, "share": v}
            for g, row in zip(groups, values, strict=False)
            for label, v in zip(LABELS, row, strict=False)
        ]
    ).with_columns(pl.lit(1).alias("count"), pl.lit(4).alias("denominator"))


def inline_rows(chart) -> int:
    spec = chart.to_dict()
    return sum(len(v) for v in spec.get("datasets", {}).values())


def test_radar_points_hand_computed():
    points = radar_points(shares(["M"], [[0.0, 0.5, 0.25, 1.0]]), "mechanism", LABELS)
    rows = {(r["label"], r["order"]): (r["x"], r["y"]) for r in points.iter_rows(named=True)}
    # label i sits at angle 2πi/4 clockwise from the top; radius = share
    assert rows[("Reciprocity", 0)] == (pytest.approx(0.0), pytest.approx(0.0))
    assert rows[("Risk aversion", 1)] == (pytest.approx(0.5), pytest.approx(0.0, abs=1e-12))
    assert rows[("Trust evaluation", 2)] == (pytest.approx(0.0, abs=1e-12), pytest.approx(-0.25))
    assert rows[("Other", 3)] == (pytest.approx(-1.0), pytest.approx(0.0, abs=1e-12))
    # the polygon is closed by repeating the first label with order 4
    assert rows[("Reciprocity", 4)] == rows[("Reciprocity", 0)]
    assert points["order"].to_list() == [0, 1, 2, 3, 4]


def test_every_chart_builds_from_its_frame():
    actions = pl.DataFrame(
        {
            "mechanism": ["M", "M"],
            "game": ["PrisonersDilemma"] * 2,
            "token": ["A0", "A1"],
            "action": ["Cooperate", "Defect"],
            "probability": [0.6, 0.4],
            "n": [3, 3],
        }
    )
    conditional = pl.DataFrame(
        {
            "agent": ["a"] * 2,
            "condition": ["Cooperate"] * 2,
            "action": ["Cooperate", "Defect"],
            "frequency": [0.5, 0.5],
            "probability": [0.5, 0.5],
            "count": [1, 1],
            "n": [2, 2],
        }
    )
    voting = pl.DataFrame(
        {"agent": ["a", "b"], "measure": ["selected", "selected"], "value": [0.0, 1.0], "n": [2, 2]}
    )
    design = pl.DataFrame(
        {
            "game": ["PD"] * 2,
            "agent": ["a"] * 2,
            "criterion": ["NS", "WD"],
            "rate": [0.75, 0.25],
            "se": [0.2, 0.2],
            "n_designs": [4, 4],
        }
    )
    heat = shares(["M1", "M2"], [[0.1, 0.2, 0.3, 0.4], [0.5, 0.0, 0.0, 0.5]])
    charts = [
        action_probability_chart(actions, "mechanism", "t"),
        conditional_chart(conditional, "t"),
        voting_chart(voting, "t"),
        design_quality_chart(design, "t"),
        justification_heatmap_chart(heat, "mechanism", LABELS, "t"),
        justification_heatmap_chart(
            heat.with_columns(pl.lit("PD").alias("game")), "mechanism", LABELS, "t", column="game"
        ),
        justification_radar_chart(heat, "mechanism", LABELS, "t"),
        note_chart("nothing"),
    ]
    for chart in charts:
        assert 0 < inline_rows(chart) <= MAX_ROWS
    # the heatmap shows each label's share exactly as computed
    spec = charts[4].to_dict()
    data = next(iter(spec["datasets"].values()))
    assert {(d["mechanism"], d["label"]): d["share"] for d in data}[("M2", "Other")] == 0.5


def test_row_limit_is_enforced_not_lifted():
    big = pl.DataFrame(
        {
            "agent": ["a"] * (MAX_ROWS + 1),
            "measure": ["selected"] * (MAX_ROWS + 1),
            "value": [0.0] * (MAX_ROWS + 1),
            "n": [1] * (MAX_ROWS + 1),
        }
    )
    with pytest.raises(ValueError, match="aggregate first"):
        voting_chart(big, "too big")


def test_renders_offline_to_png_and_svg(tmp_path):
    chart = justification_radar_chart(
        shares(["M1"], [[0.1, 0.2, 0.3, 0.4]]), "mechanism", LABELS, "radar"
    )
    paths = save_chart(chart, tmp_path / "radar", ["png", "svg"])
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and paths[0].stat().st_size > 1000
    assert paths[1].read_text().lstrip().startswith("<svg")


def test_catalog_places_figures_by_mechanism_and_game():
    core = core_figures(
        ["NoMechanism", "Reputation"], ["prisoners_dilemma", "public_goods"], ablation=True
    )
    assert [e.stem for e in core[:2]] == ["mean_fitness", "ablation"] and len(core) == 2 + 2 * 2 * 2
    payoffs = next(e for e in core if e.stem == "payoffs_Reputation_public_goods")
    assert (payoffs.category, payoffs.subcategory, payoffs.caption) == (
        "Reputation",
        "Public Goods",
        "payoffs.rst",
    )
    entries = {
        e.stem: e for e in analysis_figures(["Repetition", "Mediation"], ["prisoners_dilemma"])
    }
    assert (
        entries["actions_by_mechanism"].category == ALL_MECHANISMS
        and entries["actions_by_mechanism"].subcategory == ALL_GAMES
    )
    assert entries["conditional_Repetition_prisoners_dilemma"].subcategory == "Prisoner's Dilemma"
    assert (
        "conditional_Mediation_prisoners_dilemma" not in entries
        and "voting_Repetition_prisoners_dilemma" not in entries
    )
    assert entries["design_quality_Mediation"].category == "Mediation"
    assert (
        report_format(["png", "svg", "html"]) == "svg" and report_format(["html", "png"]) == "png"
    )
    pages = {
        e.stem: e
        for e in table_pages(
            ["per_game", "design_quality"], ["Repetition", "Mediation"], ["trust_game"]
        )
    }
    assert set(pages) == {
        "per_game_Repetition_trust_game",
        "per_game_Mediation_trust_game",
        "design_quality_Mediation",
    }
    assert pages["per_game_Mediation_trust_game"].subcategory == "Trust Game"


def test_render_from_a_small_store(tmp_path):
    from coopeval.core.schemas import conform
    from coopeval.pipeline.store import build_store
    from coopeval.studies.coopeval.figures.render_analyses import render_analysis_figures
    from coopeval.studies.coopeval.figures.run_page import render_run_summary
    from coopeval.studies.coopeval.judge.stage import JUDGEMENT_SCHEMA

    decisions = [
        {
            "cell_id": "c1",
            "mechanism": "Repetition",
            "game": "PrisonersDilemma",
            "decision_id": f"d{r}{s}",
            "matchup_id": "x(CoT)|b",
            "round": r,
            "seat": s,
            "agent": ["x(CoT)", "b"][s - 1],
            "kind": "action",
            "status": "ok",
            "action": (r + s) % 2,
            "parsed": json.dumps({"A0": 100 * (1 - (r + s) % 2), "A1": 100 * ((r + s) % 2)}),
            "n_attempts": 1,
            "response": "x" * 90,
        }
        for r in (1, 2, 3)
        for s in (1, 2)
    ]
    judgements = pl.DataFrame(
        [
            {
                "cell_id": "c1",
                "mechanism": "Repetition",
                "game": "PrisonersDilemma",
                "decision_id": "d11",
                "agent": "x(CoT)",
                "status": "ok",
                "labels": ["Reciprocity"],
                "confidence": 0.9,
                "judge_model": "j(IO)",
            }
        ],
        schema_overrides={
            k: v for k, v in JUDGEMENT_SCHEMA.items() if k in ("labels", "confidence")
        },
    )
    # two calls to one provider: 3 refusals before the first answer, under a cap of 4
    calls = [
        {"cell_id": "c1", "decision_id": f"d1{s}", "model": "openai/x", "kind": "action", "cache_hit": False,
         "error": "", "rate_limited": refused, "transport_retries": refused + 1, "in_flight": 4 - s,
         "in_flight_limit": 4 // (1 + refused), "in_flight_cap": 4}
        for s, refused in ((1, 3), (2, 0))
    ]
    tables = {}
    for name, frame in {
        "decisions": conform("decisions", pl.DataFrame(decisions)),
        "judgements": judgements,
        "llm_calls": conform("llm_calls", pl.DataFrame(calls)),
    }.items():
        path = tmp_path / f"{name}.parquet"
        frame.write_parquet(path)
        tables[name] = [path]
    cells = tmp_path / "cells.tsv"
    cells.write_text(
        "cell_id\tmechanism\tvariant\tgame\treplicate\tmechanism_params\tagents\tplayers\nc1\tRepetition\tdefault\tprisoners_dilemma\t1\t{}\tx(CoT),b\t2\n"
    )
    store = tmp_path / "store.duckdb"
    build_store(tables, store, manifests={cells: "cells"})
    written = render_analysis_figures(
        store, tmp_path / "figs", ["Repetition"], ["prisoners_dilemma"], ["svg"], LABELS
    )
    expected = {f"{e.stem}.svg" for e in analysis_figures(["Repetition"], ["prisoners_dilemma"])}
    assert {p.name for p in written} == expected and all(p.stat().st_size > 500 for p in written)
    page = render_run_summary(
        store,
        tmp_path / "summary.html",
        [{"model": "local/m", "style": "CoT", "label": "x"}, {"model": "bot/b"}],
        ["prisoners_dilemma"],
        ["Repetition"],
        judge={"model": "j", "sample_size": 50},
        seed=1,
        replicates=1,
    )
    text = page.read_text()
    assert (
        "x(CoT)" in text
        and "6 decisions, 0 failed" in text
        and "a seeded sample of at most 50" in text
        and "constraint not applied: 0 calls" in text
    )
    # the traffic table: calls 2, refused 3, retries 5, max in flight 3, cap 4, lowest limit 1
    assert "<h2>Provider traffic</h2>" in text
    assert "<tr><td>openai</td>" + "".join(f'<td class="num">{n}</td>' for n in (2, 3, 5, 3, 4, 1)) in text
    assert "cap 4 is above what the provider accepts: 3 requests refused (429); the adaptive limit came down to 1" in text
