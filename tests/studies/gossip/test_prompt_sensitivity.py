"""The gossip prompt sensitivity report on the bot version of config/paraphrase.yaml with two
population bots (docs/paraphrases.md): the cells are played as the workflow does, then the
report is rendered. Bots decide from the state and the schedules and seeds do not depend on the
wording, so every variant repeats the base runs exactly: the wording's variance share is 0, and
always-cooperate cooperates more than always-defect under every wording."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from coopeval.evaluation.sensitivity_report import render_sensitivity_report
from coopeval.pipeline.config import load_config, validate_config
from coopeval.studies.gossip.sensitivity import (
    SENSITIVITY,
    cell_contexts,
)
from coopeval.studies.gossip.study import GossipStudy, model_name
from tests.helpers import play_study_cell
from tests.shared_data import REPO


def test_bot_paraphrase_run_gives_the_gossip_sensitivity_report(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)
    config = load_config([REPO / "config" / name for name in ("config.yaml", "paraphrase.yaml", "paraphrase_bots.yaml")])
    config["gossip"]["models"] = [{"model": "bot/always-cooperate"}, {"model": "bot/always-defect"}]
    config["gossip"]["conditions"] = ["align", "no_gossip", "max"]  # the three contexts asserted below
    cells = GossipStudy().cells(validate_config(config))
    assert len(cells) == 3 * 2 * 3  # conditions align, no_gossip, max × models × wordings
    files = []
    for cell in cells:
        tables, stats = play_study_cell("gossip", cell)
        assert stats.calls_made == 0
        files.append(tmp_path / f"{cell['cell_id']}.parquet")
        tables["gossip_run_metrics"].write_parquet(files[-1])
    paths = {name: tmp_path / Path(path).name for name, path in SENSITIVITY.tables.items()}
    results = render_sensitivity_report(SENSITIVITY, files, cell_contexts(cells, model_name), paths, tmp_path / "fig", tmp_path / "page.html", ["svg"])

    coop = results["cooperation ratio"]
    assert coop.contexts_used == 3 and sorted(coop.models) == ["bot/always-cooperate", "bot/always-defect"]
    shares = dict(zip(coop.shares["source"], coop.shares["share"], strict=True))
    assert shares["prompt variant"] == 0 and shares["model × prompt variant"] == 0
    runs = pl.concat([pl.read_parquet(f) for f in files])
    base = {c["cell_id"]: model_name(c["model"]) for c in cells if "prompt_variant" not in c}
    for model in ("bot/always-cooperate", "bot/always-defect"):
        ids = [i for i, m in base.items() if m == model]
        direct = runs.filter(pl.col("cell_id").is_in(ids))["cooperation_ratio_mean"].mean()
        per = coop.per_variant.filter(pl.col("model") == model)["value"].to_list()
        assert per == pytest.approx([direct] * 3), model
    assert coop.orderings["delta"].to_list() == pytest.approx([coop.orderings["delta"][0]] * 3)
    assert coop.orderings["delta"][0] > 0 and coop.orderings["holds"].all()
    assert "| model | base | p1 | p2 |" in paths["markdown"].read_text() and (tmp_path / "fig.svg").exists()
