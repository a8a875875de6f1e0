"""Tables of our own runs: read the store read-only and run the shared table builder."""

from __future__ import annotations

from pathlib import Path

import duckdb

from coopeval.studies.coopeval.tables.builder import build_tables
from coopeval.studies.coopeval.tables.render import write_tables


def tables_from_store(store: str | Path, out_dir: str | Path, *, dr_rule: str = "strictest", n_bootstrap: int = 1000, seed: int = 0) -> list[Path]:
    """Per-game, aggregate and design-quality tables (CSV, Markdown, LaTeX) of a store.

    Only default-parameter cells enter the tables (ablation variants are plotted separately).
    Replicates are the runs of the tables (spec §7: mean and s.e. over runs).
    """
    con = duckdb.connect(str(store), read_only=True)
    try:
        default = "cell_id IN (SELECT cell_id FROM cells WHERE variant = 'default')"
        metrics = con.sql(f"SELECT * FROM metrics WHERE {default}").pl()
        scores = con.sql(f"SELECT * FROM scores WHERE {default}").pl()
        designs = con.sql(f"SELECT * FROM design_quality WHERE {default}").pl()
    finally:
        con.close()
    tables = build_tables(metrics, scores=scores, designs=designs, dr_rule=dr_rule, n_bootstrap=n_bootstrap, seed=seed)
    return write_tables(tables, out_dir)
