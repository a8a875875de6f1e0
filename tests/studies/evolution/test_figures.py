"""Figures from a store of a bot run (both protocols, every variant, three models)."""

from __future__ import annotations

from pathlib import Path

import pytest

from coopeval.pipeline.store import build_store
from coopeval.studies.evolution.figures import FIGURES, LINEAGE_FIGURE, figure_files, render_figures
from tests.helpers import play_study_cell, study_cells


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("evo_store")
    config = {
        "seed": 3,
        "evolution": {
            "models": [{"model": "bot/evo-reciprocal"}, {"model": "bot/evo-constant-50"}, {"model": "bot/evo-constant-20"}],
            "n_agents": 4,
            "generations": 2,
            "variants": ["none", "costly_punishment", "partner_choice"],
            "invasion": {"per_generation": 1},
            "matrix": {"per_generation": 1},
        },
    }
    paths: dict[str, list[str]] = {}
    for cell in study_cells("evolution", config):
        tables, _ = play_study_cell("evolution", cell)
        for name, frame in tables.items():
            path = work / cell["cell_id"] / f"{name}.parquet"
            path.parent.mkdir(parents=True, exist_ok=True)
            frame.write_parquet(path)
            paths.setdefault(name, []).append(str(path))
    out = work / "store.duckdb"
    build_store(paths, out)
    return out


def test_every_figure_is_written(store: Path, tmp_path: Path) -> None:
    pytest.importorskip("vl_convert")
    written = render_figures(store, ["svg", "html"], n_models=3, out_dir=tmp_path / "fig", oes_path=tmp_path / "oes.html")
    names = {p.name for p in written}
    assert {f"{stem}.svg" for stem in FIGURES} <= names and "evo_features.svg" in names and f"{LINEAGE_FIGURE}.html" in names
    assert "OES decomposition" in (tmp_path / "oes.html").read_text()
    declared = figure_files(["svg", "html"], 3)
    assert sorted(Path(f).name for files in declared.values() for f in files) == sorted(n for n in names if n != "oes.html")
    assert "evo_features" not in figure_files(["svg"], 2)
