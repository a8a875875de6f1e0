"""Small helpers over a read-only DuckDB connection: rows as dicts, table presence."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
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


def stream(con: duckdb.DuckDBPyConnection, sql: str, batch: int = 2048) -> Iterator[dict[str, Any]]:
    """Rows of ``sql`` as dicts, fetched in Arrow batches of ``batch`` rows (never all at once)."""
    reader = con.execute(sql).to_arrow_reader(batch)
    for record_batch in reader:
        yield from record_batch.to_pylist()


def by_cell(source: Iterator[dict[str, Any]]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
    """Consecutive rows of ``source`` (sorted by ``cell_id``) grouped per cell."""
    for cell_id, group in itertools.groupby(source, key=lambda r: str(r["cell_id"])):
        yield cell_id, list(group)


class CellStream:
    """Rows of one table, sorted by ``cell_id``, handed out one cell at a time in ascending order."""

    def __init__(self, groups: Iterator[tuple[str, list[dict[str, Any]]]]) -> None:
        self._groups = groups
        self._head: tuple[str, list[dict[str, Any]]] | None = next(groups, None)

    def take(self, cell_id: str) -> list[dict[str, Any]]:
        """The rows of ``cell_id``; cells must be asked for in ascending order (skipped ones are dropped)."""
        while self._head is not None and self._head[0] < cell_id:
            self._head = next(self._groups, None)
        if self._head is None or self._head[0] != cell_id:
            return []
        found = self._head[1]
        self._head = next(self._groups, None)
        return found
