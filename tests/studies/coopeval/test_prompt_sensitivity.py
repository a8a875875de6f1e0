"""The prompt sensitivity report on the bot version of config/paraphrase.yaml
(config/paraphrase_bots.yaml, docs/paraphrases.md): every cell is played, scored and evaluated
as the workflow does, then the report is rendered.

Bots read the state, not the prompt, and the draws do not depend on the wording, so each
variant's cells give exactly the base results: the wording's variance share and the interaction
are 0 and every ordering between agents with different means holds. The per-variant value is
checked against a direct average of the normalised per-cell Means.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from coopeval.evaluation.sensitivity_report import render_sensitivity_report
from coopeval.games import get_game
from coopeval.pipeline.config import load_config
from coopeval.studies.coopeval.analysis.prompt_sensitivity import (
    SENSITIVITY,
    cell_contexts,
)
from coopeval.studies.coopeval.evaluate import evaluate_cell
from coopeval.studies.coopeval.mechanisms.catalog import mechanism_info
from coopeval.studies.coopeval.parse import matchup_scores
from coopeval.studies.coopeval.study import CoopEvalStudy
from tests.helpers import play_study_cell, study_cells
from tests.shared_data import REPO

CONFIGS = [REPO / "config" / name for name in ("config.yaml", "paraphrase.yaml", "paraphrase_bots.yaml")]


def test_bot_paraphrase_run_gives_the_sensitivity_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    config = load_config(CONFIGS)
    cells = CoopEvalStudy().cells(config)
    assert len(cells) == 3 * 2 * 3 and {c.get("prompt_variant", "base") for c in cells} == {"base", "p1", "p2"}
    files = []
    for cell in cells:
        tables, stats = play_study_cell("coopeval", cell)
        assert stats.calls_made == 0
        scores = matchup_scores(tables["decisions"], tables["matchups"])
        ids = {"cell_id": cell["cell_id"], "source": "ours", "run": f"r{cell['replicate']}", "mechanism": cell["mechanism"], "game": tables["matchups"]["game"][0]}
        metrics, _ = evaluate_cell(scores, tables["matchups"], ids, has_metagame=not mechanism_info(cell["mechanism"]).population_game)
        files.append(tmp_path / f"{cell['cell_id']}.parquet")
        metrics.write_parquet(files[-1])
    paths = {name: tmp_path / Path(path).name for name, path in SENSITIVITY.tables.items()}
    results = render_sensitivity_report(SENSITIVITY, files, cell_contexts(cells), paths, tmp_path / "prompt_sensitivity", tmp_path / "page.html", ["svg"])

    mean = results["Mean"]
    assert mean.contexts_used == 2 * 3 and sorted(mean.models) == ["bot/always-cooperate", "bot/always-defect", "bot/tit-for-tat"]
    shares = dict(zip(mean.shares["source"], mean.shares["share"], strict=True))
    assert shares["prompt variant"] == 0 and shares["model × prompt variant"] == 0
    assert shares["model"] > 0 and sum(shares.values()) == pytest.approx(1)
    # identical under every wording, and equal to the average of the normalised cell Means
    per = mean.per_variant
    for model, group in per.group_by("model"):
        assert group["value"].n_unique() == 1, model
    metrics = pl.concat([pl.read_parquet(f) for f in files])
    base_ids = {c["cell_id"]: c for c in cells if "prompt_variant" not in c}
    defect = metrics.filter((pl.col("agent") == "bot/always-defect") & (pl.col("metric") == "Mean") & pl.col("cell_id").is_in(list(base_ids)))
    direct = sum(get_game(base_ids[i]["game"]).normalise(v) for i, v in zip(defect["cell_id"], defect["value"], strict=True)) / defect.height
    assert per.filter((pl.col("model") == "bot/always-defect") & (pl.col("prompt_variant") == "p2"))["value"][0] == pytest.approx(direct)
    orderings = mean.orderings.group_by(["a", "b"]).agg(pl.col("delta").first(), pl.col("holds").first())
    assert all(holds == (delta != 0) for delta, holds in zip(orderings["delta"], orderings["holds"], strict=True))
    # the files
    assert pl.read_csv(paths["per_variant"]).height == sum(r.per_variant.height for r in results.values())
    assert set(pl.read_csv(paths["shares"])["metric"]) == set(results)
    text = paths["markdown"].read_text()
    assert "| model | base | p1 | p2 |" in text and "ordering holds" in text
    assert (tmp_path / "prompt_sensitivity.svg").stat().st_size > 0 and "Pairwise orderings" in (tmp_path / "page.html").read_text()


def test_manifest_marks_the_wording_so_paper_tables_keep_the_base_cells(monkeypatch: pytest.MonkeyPatch) -> None:
    """The paper tables and headline figures read the cells whose manifest variant is
    ``default``: with variants configured, exactly the base-wording cells, whose manifest lines
    are those of the run without variants."""
    monkeypatch.chdir(REPO)
    study = CoopEvalStudy()
    varied = study.cells(load_config(CONFIGS))
    plain = study.cells(load_config(CONFIGS[:1] + CONFIGS[2:]))
    lines = study.manifest(varied).splitlines()
    rows = [dict(zip(lines[0].split("\t"), line.split("\t"), strict=True)) for line in lines[1:]]
    assert sorted(r["variant"] for r in rows) == sorted(["default"] * 6 + ["default@p1"] * 6 + ["default@p2"] * 6)
    assert {r["cell_id"] for r in rows if r["variant"] == "default"} == {c["cell_id"] for c in plain}
    assert set(study.manifest(plain).splitlines()) <= set(lines)


def test_a_model_that_reads_the_wording_shows_a_variant_share(tmp_path: Path) -> None:
    """The mock model answers from a digest of the prompt it is sent, so a rewording changes its
    distributions: its Mean moves between wordings, while tit-for-tat, which reads the state, moves
    only through what the mock plays against it. The report then shows a non-zero share of the
    wording and of the interaction."""
    raw = {"agents": [{"model": "mock/reader", "style": "IO"}, {"model": "bot/tit-for-tat"}, {"model": "bot/always-defect"}],
           "games": ["prisoners_dilemma", "stag_hunt", "travellers_dilemma"], "mechanisms": ["NoMechanism"],
           "prompt_variants": ["base", "p1", "p2"]}
    cells = study_cells("coopeval", raw)
    files = []
    for cell in cells:
        tables, _ = play_study_cell("coopeval", cell)
        scores = matchup_scores(tables["decisions"], tables["matchups"])
        ids = {"cell_id": cell["cell_id"], "source": "ours", "run": "r1", "mechanism": "NoMechanism", "game": tables["matchups"]["game"][0]}
        files.append(tmp_path / f"{cell['cell_id']}.parquet")
        evaluate_cell(scores, tables["matchups"], ids)[0].write_parquet(files[-1])
    paths = {name: tmp_path / Path(path).name for name, path in SENSITIVITY.tables.items()}
    mean = render_sensitivity_report(SENSITIVITY, files, cell_contexts(cells), paths, tmp_path / "fig", tmp_path / "page.html", ["svg"])["Mean"]
    reader = mean.per_variant.filter(pl.col("model") == "mock/reader(IO)")["value"]
    assert reader.n_unique() == 3, reader.to_list()
    defect = mean.per_variant.filter(pl.col("model") == "bot/always-defect")["value"]
    shares = dict(zip(mean.shares["source"], mean.shares["share"], strict=True))
    assert shares["prompt variant"] > 0 and shares["model × prompt variant"] > 0
    assert defect.n_unique() > 1  # its payoff against the reader moves with the reader's play
