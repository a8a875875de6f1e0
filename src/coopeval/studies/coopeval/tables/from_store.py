"""Tables of our own runs: read the store read-only and run the shared table builder."""

from __future__ import annotations

from pathlib import Path

import duckdb

from coopeval.studies.coopeval.tables.builder import build_tables
from coopeval.studies.coopeval.tables.frames import AgentColumns
from coopeval.studies.coopeval.tables.render import write_tables


def tables_from_store(
    store: str | Path,
    out_dir: str | Path,
    *,
    dr_rule: str,
    n_bootstrap: int,
    seed: int,
    steps: int,
    lr: float,
    columns: AgentColumns | None = None,
) -> list[Path]:
    """Per-game, aggregate and design-quality tables (CSV, Markdown, LaTeX) of a store.

    Only default-parameter cells enter the tables (ablation variants are plotted separately).
    Replicates are the runs of the tables (spec §7: mean and s.e. over runs).

    Every setting is required: they come from the config (``evaluation.dr_rule``,
    ``tables.bootstrap``, ``seed``, ``evaluation.steps``, ``evaluation.lr``), and ``steps`` /
    ``lr`` must be those the store's metrics were computed with, so that the bootstrap
    intervals of Fitness describe the same replicator dynamics as the point estimates.
    ``columns``: the tables' agent columns, from the config's roster
    (:func:`coopeval.studies.coopeval.tables.roster.table_agents`).

    Returns
    -------
    list of Path
        The written table files.
    """
    con = duckdb.connect(str(store), read_only=True)
    try:
        default = "cell_id IN (SELECT cell_id FROM cells WHERE variant = 'default')"
        metrics = con.sql(f"SELECT * FROM metrics WHERE {default}").pl()
        scores = con.sql(f"SELECT * FROM scores WHERE {default}").pl()
        designs = con.sql(f"SELECT * FROM design_quality WHERE {default}").pl()
    finally:
        con.close()
    tables = build_tables(
        metrics, scores=scores, designs=designs, dr_rule=dr_rule, n_bootstrap=n_bootstrap, seed=seed, steps=steps, lr=lr,
        columns=columns,
    )
    return write_tables(tables, out_dir)
