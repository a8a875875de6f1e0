"""Store tables every study writes rows into, with study-neutral columns (docs/outputs.md#every-studys-columns).

``decisions`` and ``llm_calls`` hold the decisions and call attempts of every study. Their
records (:data:`coopeval.core.schemas.SCHEMAS`) name the study's setting ``mechanism`` and its
environment ``game``, CoopEval's words, although gossip writes its condition and testbed there
and evolution ``evolution/<protocol>`` and ``donor_game``. In the store these tables keep the
values in the study-neutral columns ``setting`` and ``environment`` (last in the table), and
``mechanism`` and ``game`` stay, in their places, as DuckDB generated (virtual) columns equal to
them: every existing query and reader works unchanged, no value is stored twice, and a query
over all studies can say what it means.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

__all__ = ["NEUTRAL_COLUMNS", "NEUTRAL_TABLES", "create_store_table"]

NEUTRAL_COLUMNS: dict[str, str] = {"setting": "mechanism", "environment": "game"}
"""Study-neutral column → the CoopEval name kept beside it. setting: CoopEval's mechanism, gossip's
condition, evolution's ``evolution/<protocol>``; environment: the game, gossip's testbed, evolution's ``donor_game``."""

NEUTRAL_TABLES: tuple[str, ...] = ("decisions", "llm_calls")
"""The store tables shared by every study, which carry :data:`NEUTRAL_COLUMNS`."""


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def create_store_table(con: duckdb.DuckDBPyConnection, name: str, select: str, params: Sequence[Any] = ()) -> None:
    """``CREATE TABLE name AS select``, with :data:`NEUTRAL_COLUMNS` when ``name`` is one of :data:`NEUTRAL_TABLES`.

    For those tables the rows of ``select`` (which has ``mechanism`` and ``game`` columns) are
    stored with those two columns as ``setting`` and ``environment`` at the end, and
    ``mechanism`` and ``game`` become generated columns (``GENERATED ALWAYS AS (setting)``) in
    their places, so ``SELECT *`` lists the record's columns in their order followed by
    ``setting, environment``.

    Rows without ``mechanism`` or ``game`` (a partial record) get null ones.

    Raises
    ------
    duckdb.Error
        From DuckDB.
    """
    table = _quoted(name)
    if name not in NEUTRAL_TABLES:
        con.execute(f"CREATE TABLE {table} AS {select}", list(params))
        return
    described = con.execute(f"DESCRIBE SELECT * FROM ({select})", list(params)).fetchall()
    types = {str(r[0]): str(r[1]) for r in described}
    names = list(types)
    described_names = set(names)
    coopeval_names = {old: new for new, old in NEUTRAL_COLUMNS.items()}
    for column in coopeval_names:  # rows without them (a partial record) get null settings, still under both names
        if column not in types:
            types[column] = "VARCHAR"
            names.append(column)
    definitions = []
    for column in names:
        if column in coopeval_names:
            definitions.append(f"{_quoted(column)} {types[column]} GENERATED ALWAYS AS ({_quoted(coopeval_names[column])}) VIRTUAL")
        else:
            definitions.append(f"{_quoted(column)} {types[column]}")
    definitions += [f"{_quoted(new)} {types[old]}" for new, old in NEUTRAL_COLUMNS.items()]
    con.execute(f"CREATE TABLE {table} ({', '.join(definitions)})")
    stored = [c for c in names if c not in coopeval_names] + list(NEUTRAL_COLUMNS)
    source = [_quoted(c) for c in names if c not in coopeval_names]
    source += [_quoted(old) if old in described_names else f"NULL::{types[old]}" for old in NEUTRAL_COLUMNS.values()]
    con.execute(f"INSERT INTO {table} ({', '.join(map(_quoted, stored))}) SELECT {', '.join(source)} FROM ({select})", list(params))
