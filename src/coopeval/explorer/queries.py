"""Small helpers over a read-only DuckDB connection: rows as dicts, table presence."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    """The result of ``sql`` as one dict per row (column name → value)."""
    cursor = con.execute(sql, list(params))
    names = [d[0] for d in cursor.description or []]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def table_names(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Names of the tables of the store's main schema."""
    return {str(r[0]) for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'").fetchall()}


def columns(con: duckdb.DuckDBPyConnection, table: str) -> set[str]:
    """Column names of ``table``."""
    found = con.execute("SELECT column_name FROM information_schema.columns WHERE table_name = ?", [table]).fetchall()
    return {str(r[0]) for r in found}


def grouped(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = (), batch: int = 2048) -> dict[str, list[dict[str, Any]]]:
    """Rows of ``sql`` grouped by their ``cell_id`` (in result order), read in Arrow batches of ``batch`` rows."""
    out: dict[str, list[dict[str, Any]]] = {}
    for record_batch in con.execute(sql, list(params)).to_arrow_reader(batch):
        for row in record_batch.to_pylist():
            out.setdefault(str(row["cell_id"]), []).append(row)
    return out
