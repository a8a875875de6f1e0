"""Tables of our own runs: read the store read-only and run the shared table builder.

:func:`tables_settings` maps a validated config to the keyword arguments of
:func:`tables_from_store`; the ``tables`` rule passes them through unchanged, so every setting
the point estimates were computed with (``evaluation.steps`` / ``lr``) reaches the bootstrap.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.core.duckdb_settings import open_duckdb
from coopeval.studies.coopeval.tables.builder import build_tables
from coopeval.studies.coopeval.tables.defaults import TableSettings
from coopeval.studies.coopeval.tables.frames import AgentColumns, GroupSizeCells
from coopeval.studies.coopeval.tables.group_sizes import CellSet, table_cell_sets
from coopeval.studies.coopeval.tables.render import write_tables
from coopeval.studies.coopeval.tables.roster import table_agents


def tables_settings(config: Mapping[str, Any]) -> dict[str, Any]:
    """The keyword arguments of :func:`tables_from_store` for a validated config (plain values,
    as Snakemake params): ``dr_rule`` and ``steps`` / ``lr`` (``evaluation``), ``n_bootstrap``
    (``tables.bootstrap``), ``seed``, and the agent columns from the roster (``agent_order``,
    ``agent_labels``, ``agent_llm``; :func:`coopeval.studies.coopeval.tables.roster.table_agents`).

    Raises
    ------
    KeyError
        If the config lacks a key the schema fills in (pass a validated config).
    """
    evaluation = config["evaluation"]
    columns = table_agents(config["agents"])
    return {
        "dr_rule": evaluation["dr_rule"],
        "n_bootstrap": config["tables"]["bootstrap"],
        "seed": config["seed"],
        "steps": evaluation["steps"],
        "lr": evaluation["lr"],
        "agent_order": list(columns.order),
        "agent_labels": dict(columns.labels),
        "agent_llm": dict(columns.llm),
    }


def tables_from_store(
    store: str | Path,
    out_dir: str | Path,
    *,
    dr_rule: str,
    n_bootstrap: int,
    seed: int,
    steps: int,
    lr: float,
    agent_order: Sequence[str] = (),
    agent_labels: Mapping[str, str] | None = None,
    agent_llm: Mapping[str, bool] | None = None,
) -> list[Path]:
    """Per-game, aggregate and design-quality tables (CSV, Markdown, LaTeX) of a store.

    The default cells enter every table; the variants that change only the number of players N
    add their own per-game rows (:mod:`coopeval.studies.coopeval.tables.group_sizes`); ablation
    and prompt variants stay out (plotted separately, and the sensitivity report).
    Replicates are the runs of the tables (docs/protocol/tables.md: mean and s.e. over runs).
    The rank tie groups come from the store's ``comparisons`` table, when it has one.

    Every setting is required: they come from the config (``evaluation.dr_rule``,
    ``tables.bootstrap``, ``seed``, ``evaluation.steps``, ``evaluation.lr``), and ``steps`` /
    ``lr`` must be those the store's metrics were computed with, so that the bootstrap
    intervals of Fitness describe the same replicator dynamics as the point estimates.
    ``agent_order`` / ``agent_labels`` / ``agent_llm``: the tables' agent columns and which agents
    are LLM agents (the LLM Average's members), from the config's roster
    (:func:`coopeval.studies.coopeval.tables.roster.table_agents`).

    Returns
    -------
    list of Path
        The written table files.
    """
    con = open_duckdb(store, read_only=True, purpose="CoopEval tables")
    try:
        default, others = table_cell_sets(con.sql("SELECT * FROM cells").pl())

        def rows_of(table: str, cells: CellSet) -> pl.DataFrame:
            return con.execute(f"SELECT * FROM {table} WHERE list_contains(?, cell_id)", [list(cells.cell_ids)]).pl()

        metrics, scores, designs = (rows_of(t, default) for t in ("metrics", "scores", "design_quality"))
        group_sizes = [GroupSizeCells(rows_of("metrics", c), rows_of("scores", c), c.players) for c in others]
        present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        comparisons = con.sql("SELECT * FROM comparisons").pl() if "comparisons" in present else None
    finally:
        con.close()
    tables = build_tables(
        metrics, scores=scores, designs=designs, comparisons=comparisons,
        settings=TableSettings(
            dr_rule=dr_rule, n_bootstrap=n_bootstrap, seed=seed, steps=steps, lr=lr,
            columns=AgentColumns(tuple(agent_order), dict(agent_labels or {}), dict(agent_llm or {})),
        ),
        players=default.players, group_sizes=group_sizes,
    )
    return write_tables(tables, out_dir)
