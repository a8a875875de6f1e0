"""One report writer serves every study (coopeval.evaluation.sensitivity_report): a study's
:class:`SensitivitySource` declares its metrics, reading and paths, and each workflow rule that
runs ``workflow/scripts/prompt_sensitivity.py`` names a module whose ``SENSITIVITY`` declares the
paths the rule writes."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from importlib import import_module
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from coopeval.evaluation.sensitivity_report import (
    TABLE_KEYS,
    SensitivitySource,
    render_sensitivity_report,
)
from tests.shared_data import REPO


def _read(files: Sequence[str | Path]) -> pl.DataFrame:
    return pl.concat([pl.read_csv(f) for f in files])


def _values(frame: pl.DataFrame, contexts: Mapping[str, Mapping[str, Any]], metric: str) -> pl.DataFrame:
    rows = frame.filter(pl.col("metric") == metric)
    return pl.DataFrame({
        "model": rows["model"],
        "prompt_variant": [contexts[c]["prompt_variant"] for c in rows["cell_id"]],
        "context": [contexts[c]["context"] for c in rows["cell_id"]],
        "value": rows["value"].cast(pl.Float64),
    })


def test_balanced_metrics_are_reported_and_unbalanced_ones_left_out(tmp_path: Path) -> None:
    # metric "a": models m0, m1 × variants v0, v1 × contexts c0, c1; "b" has c0 only under v0 and
    # c1 only under v1, so no context has every variant
    contexts = {f"{v}{c}": {"prompt_variant": v, "context": c} for v in ("v0", "v1") for c in ("c0", "c1")}
    values = {("m0", "v0c0"): 1, ("m0", "v0c1"): 3, ("m0", "v1c0"): 2, ("m0", "v1c1"): 4,
              ("m1", "v0c0"): 5, ("m1", "v0c1"): 7, ("m1", "v1c0"): 4, ("m1", "v1c1"): 6}
    rows = [{"cell_id": cid, "model": m, "metric": "a", "value": v} for (m, cid), v in values.items()]
    rows += [{"cell_id": cid, "model": m, "metric": "b", "value": 1} for m in ("m0", "m1") for cid in ("v0c0", "v1c1")]
    pl.DataFrame(rows).write_csv(tmp_path / "cells.csv")
    tables = {key: tmp_path / f"t_{key}" for key in TABLE_KEYS}
    source = SensitivitySource("toy", "toy", ("a", "b"), _read, _values)
    results = render_sensitivity_report(source, [tmp_path / "cells.csv"], contexts, tables, tmp_path / "fig",
                                        tmp_path / "page.html", ["svg"])
    assert list(results) == ["a"]
    # per-variant means: m0 v0 2, v1 3; m1 v0 6, v1 5 (hand-computed)
    assert results["a"].per_variant.sort(["model", "prompt_variant"])["value"].to_list() == pytest.approx([2, 3, 6, 5])
    assert pl.read_csv(tables["shares"])["metric"].unique().to_list() == ["a"]
    assert tables["markdown"].read_text(encoding="utf-8").startswith("# toy\n")
    assert (tmp_path / "fig.svg").is_file() and "<h1>toy</h1>" in (tmp_path / "page.html").read_text(encoding="utf-8")


RULES = [REPO / "workflow" / "rules" / "gossip.smk", REPO / "workflow" / "rules" / "coopeval" / "sensitivity.smk"]


def test_every_path_derives_from_the_stem() -> None:
    source = SensitivitySource("gossip_prompt_sensitivity", "t", (), _read, _values)
    assert source.figure == "gossip_prompt_sensitivity"
    assert source.page == "results/report/gossip_prompt_sensitivity.html"
    assert source.tables == {
        "per_variant": "results/tables/gossip_prompt_sensitivity.csv",
        "shares": "results/tables/gossip_prompt_sensitivity_shares.csv",
        "orderings": "results/tables/gossip_prompt_sensitivity_orderings.csv",
        "markdown": "results/tables/gossip_prompt_sensitivity.md",
    }


@pytest.mark.parametrize("rules", RULES, ids=lambda p: p.name)
def test_each_sensitivity_rule_names_a_study_module_with_its_declaration(rules: Path) -> None:
    text = rules.read_text(encoding="utf-8")
    assert "scripts/prompt_sensitivity.py" in text
    (module,) = re.findall(r'source="([\w.]+)"', text)
    source = import_module(module).SENSITIVITY
    assert isinstance(source, SensitivitySource)
    assert set(source.tables) == set(TABLE_KEYS) and source.page.startswith("results/report/")
