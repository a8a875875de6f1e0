"""The docs' environment-variable table is generated from ``coopeval.core.environment`` by the
MkDocs hook ``docs/_hooks/environment_table.py``; the configuration page holds its marker."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from coopeval.core.environment import ENVIRONMENT

ROOT = Path(__file__).resolve().parents[2]


def _hook():
    spec = importlib.util.spec_from_file_location("environment_table", ROOT / "docs" / "_hooks" / "environment_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_hook_writes_one_row_per_declared_variable_where_the_marker_is():
    hook = _hook()
    page = f"before\n\n{hook.MARKER}\n\nafter"
    out = hook.on_page_markdown(page)
    rows = [line for line in out.splitlines() if line.startswith("| `COOPEVAL_")]
    assert [r.split("`")[1] for r in rows] == list(ENVIRONMENT)
    assert (
        "| `COOPEVAL_STORE_MEMORY` | amount | `1GB` | DuckDB's memory limit for every connection the package opens "
        "(store build, tables, figures), logged by each job | a run |"
    ) in rows
    assert "| `COOPEVAL_PROVIDER_SLOTS` | int ≥ 1 | unset |" in next(r for r in rows if "PROVIDER_SLOTS`" in r)
    assert out.startswith("before") and out.endswith("after") and hook.MARKER not in out
    assert hook.on_page_markdown("no marker") == "no marker"


def test_the_configuration_page_holds_the_marker():
    assert _hook().MARKER in (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
