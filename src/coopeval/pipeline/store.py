"""The ``store`` stage: the only writer of ``results/coopeval.duckdb`` (docs/protocol/engineering.md#store).

Every stage writes Parquet; this step gathers them into one DuckDB file, built under a
temporary name and moved into place, so readers (figures, reports, users) only ever open a
complete store, read-only.
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path

import duckdb
import polars as pl

from coopeval.agents.local.identity import runtime_facts
from coopeval.core.duckdb_settings import STORE_MEMORY_ENV, STORE_THREADS_ENV, open_duckdb
from coopeval.core.io import read_delimited
from coopeval.core.schemas import SCHEMAS, VIEWS
from coopeval.core.store_tables import create_store_table
from coopeval.pipeline import studies as _studies  # noqa: F401  (registers each study's tables)

__all__ = ["STORE_MEMORY_ENV", "STORE_THREADS_ENV", "DuplicateDecisionError", "build_store", "duplicate_decision_ids", "source_commit"]


class DuplicateDecisionError(ValueError):
    """The ``decisions`` table holds one ``decision_id`` in more than one row."""


def duplicate_decision_ids(con: duckdb.DuckDBPyConnection, limit: int = 5) -> tuple[int, list[tuple[str, int, list[str]]]]:
    """How many ``decision_id`` values of ``decisions`` occur in more than one row, and the first
    ``limit`` of them as (id, rows, cells). A decision id names one decision of the store: the
    explorer's ``#decision=<id>``, the judge's labels and the calls of a decision join on it.
    A ``decisions`` table without the column (a partial test table) has none."""
    present = {c for (c,) in con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = 'decisions'").fetchall()}
    if not {"decision_id", "cell_id"} <= present:
        return 0, []
    found = con.execute(
        "SELECT decision_id, count(*) AS n, list(DISTINCT cell_id ORDER BY cell_id) AS cells FROM decisions"
        " GROUP BY decision_id HAVING count(*) > 1 ORDER BY decision_id"
    ).fetchall()
    return len(found), [(str(d), int(n), [str(c) for c in cells]) for d, n, cells in found[:limit]]


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def source_commit() -> str:
    """The git commit of the checkout the running ``coopeval`` package is imported from, with
    ``+dirty`` when its tracked files differ from it; ``"unknown"`` outside a git checkout
    (an installed wheel) or without ``git``."""
    here = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "-C", str(here), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=30, check=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(here), "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=30, check=True).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "") if head else "unknown"


def build_store(
    tables: Mapping[str, Sequence[str]], out_path: str | Path, manifests: Mapping[str, str] | None = None
) -> dict[str, int]:
    """Create the DuckDB store from Parquet files.

    Parameters
    ----------
    tables:
        Table name → Parquet paths (all with that table's schema). Tables of
        :data:`~coopeval.core.schemas.SCHEMAS` missing here are created empty.
    out_path:
        The DuckDB file to (re)create.
    manifests:
        Cell manifest (TSV) path → table name, e.g. ``{"results/cells.tsv": "cells"}``. Each is
        read with its table's registered schema (never guessed types: ids stay strings).

    Returns
    -------
    dict
        Row count per table.

    Raises
    ------
    ValueError
        A malformed ``COOPEVAL_STORE_MEMORY`` or ``COOPEVAL_STORE_THREADS``.
    DuplicateDecisionError
        A ``decision_id`` in more than one row of ``decisions`` (naming the first ones and
        their cells); nothing is written.

    Memory stays bounded at any study size: each table is one ``CREATE TABLE … AS SELECT``
    over ``read_parquet`` of its files, streamed by DuckDB under its memory limit and thread
    count (:func:`coopeval.core.duckdb_settings.open_duckdb`: ``COOPEVAL_STORE_MEMORY``, default
    1GB, ``COOPEVAL_STORE_THREADS``, default 2, both printed in the job's log; beyond the limit
    DuckDB spills to a temporary folder beside the store); no table passes through Python.
    The registered views (:data:`~coopeval.core.schemas.VIEWS`) are created last. ``decisions``
    and ``llm_calls`` get the study-neutral columns ``setting`` and ``environment``
    (:mod:`coopeval.core.store_tables`; ``mechanism`` and ``game`` stay as generated columns).
    """
    out = Path(out_path)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    for leftover in (tmp, Path(str(tmp) + ".wal")):
        leftover.unlink(missing_ok=True)
    counts: dict[str, int] = {}
    con = open_duckdb(tmp, purpose="store build")
    try:
        spill = str(out.parent / (out.name + ".spill")).replace("'", "''")
        con.execute(f"SET temp_directory = '{spill}'")
        manifest_tables = set((manifests or {}).values())
        names = (set(SCHEMAS) | set(tables)) - manifest_tables
        for name in sorted(names):
            paths = [str(p) for p in tables.get(name, [])]
            if paths:
                create_store_table(con, name, "SELECT * FROM read_parquet(?, union_by_name = true)", [paths])
            else:
                schema = SCHEMAS.get(name, {})
                con.register("empty_source", pl.DataFrame(schema=schema).to_arrow())
                create_store_table(con, name, "SELECT * FROM empty_source")
                con.unregister("empty_source")
            counts[name] = con.execute(f"SELECT count(*) FROM {name}").fetchone()[0]
        duplicated, first = duplicate_decision_ids(con)
        if duplicated:
            shown = "; ".join(f"{d} ({n} rows, cells {', '.join(cells)})" for d, n, cells in first)
            raise DuplicateDecisionError(
                f"decisions: {duplicated} decision_id value(s) occur in more than one row, e.g. {shown};"
                " a decision id must name one decision (it includes what makes its cell distinct)"
            )
        for manifest, table in (manifests or {}).items():
            if table not in SCHEMAS:
                raise KeyError(f"manifest {manifest}: table {table!r} has no registered schema; register it with coopeval.core.schemas.register_tables")
            con.register("manifest_source", read_delimited(manifest, SCHEMAS[table], separator="\t").to_arrow())
            con.execute(f"CREATE TABLE {table} AS SELECT * FROM manifest_source")
            con.unregister("manifest_source")
            counts[table] = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
        for view in sorted(VIEWS):  # the studies' renamings of their tables (e.g. gossip's role-named rounds)
            con.execute(VIEWS[view].sql(view))
        facts = {
            "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
            "coopeval": _version("coopeval"),
            "commit": source_commit(),
            "litellm": _version("litellm"),
            "duckdb": duckdb.__version__,
            "polars": pl.__version__,
            "python": platform.python_version(),
            **runtime_facts(),  # what decides the embedded model's bits (docs/providers.md#reproducible-texts)
        }
        provenance = pl.DataFrame({"key": list(facts), "value": list(facts.values())}).to_arrow()
        con.register("provenance_source", provenance)
        con.execute("CREATE TABLE provenance AS SELECT * FROM provenance_source")
        con.execute("CHECKPOINT")
    except BaseException:
        con.close()
        for leftover in (tmp, Path(str(tmp) + ".wal")):
            leftover.unlink(missing_ok=True)
        raise
    con.close()
    os.replace(tmp, out)
    return counts
