"""Row accumulation and conversion to table frames.

The readers append plain dict rows per table to a :class:`TableRows`; :func:`to_frames` turns
them into polars frames conformed to each table's schema (our tables:
:mod:`coopeval.core.schemas`; reference-only tables: :mod:`coopeval.studies.coopeval.reference.schemas`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from coopeval.agents.recorder import released_decision
from coopeval.studies.coopeval import STUDY_NAME
from coopeval.studies.coopeval.reference.schemas import conform_any, empty_any

__all__ = ["IMPORTED_TABLES", "CellRows", "TableRows", "to_frames"]

IMPORTED_TABLES = (
    "matchups",
    "scores",
    "decisions",
    "designs",
    "votes",
    "released_metrics",
    "selections",
    "experiments",
    "import_flags",
)
"""Tables returned by :func:`~coopeval.studies.coopeval.reference.importer.import_reference`, in write order."""

STUDY_TABLES = ("decisions", "llm_calls")
"""Shared tables whose rows name their study (``study`` = ``"coopeval"``)."""


@dataclass
class TableRows:
    """Rows per table name, in insertion order (each row a column → value dict)."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))

    def add(self, table: str, **row: Any) -> None:
        """Append one row to ``table``.

        Raises
        ------
        ValueError
            For ``decisions`` or ``llm_calls``: the recorder builds those rows
            (:meth:`add_decision`).
        """
        if table in STUDY_TABLES:
            raise ValueError(f"table {table!r}: its rows come from the recorder; append a decision with TableRows.add_decision")
        self.tables[table].append(row)

    def add_decision(
        self,
        cell: Mapping[str, Any],
        decision_id: str,
        *,
        matchup_id: str | None,
        round: int,
        seat: int,
        agent: str,
        kind: str,
        parsed: Any = None,
        response: str | None = None,
        **columns: Any,
    ) -> None:
        """Append one ``decisions`` row of a released decision, built by the recorder
        (:func:`coopeval.agents.recorder.released_decision`): the cell's columns and the
        decision's place (``matchup_id``, 1-based ``round`` or 0 before play, 1-based ``seat``)
        as context, ``columns`` its other columns (a move's ``action``, ``points``, …)."""
        context = {**cell, "matchup_id": matchup_id, "round": round, "seat": seat}
        self.tables["decisions"].append(
            released_decision(decision_id, agent, kind, context, parsed=parsed, response=response, decision_context=columns)
        )


@dataclass(frozen=True)
class CellRows:
    """The rows of one experiment (a cell) in a :class:`TableRows`: every row it appends starts
    with the cell's key columns ``cell`` (``cell_id``, ``source``, ``run``, ``mechanism``,
    ``game``)."""

    rows: TableRows
    cell: Mapping[str, Any]

    @property
    def cell_id(self) -> str:
        """The cell's id, ``"<run>/<experiment folder>"`` (the prefix of its decision ids)."""
        return str(self.cell["cell_id"])

    def add(self, table: str, **row: Any) -> None:
        """Append one row of the cell to ``table`` (:meth:`TableRows.add`)."""
        self.rows.add(table, **self.cell, **row)

    def add_decision(self, decision_id: str, **place_and_columns: Any) -> None:
        """Append one ``decisions`` row of the cell (:meth:`TableRows.add_decision`: the
        decision's place and its columns as keywords)."""
        self.rows.add_decision(self.cell, decision_id, **place_and_columns)


def to_frames(rows: TableRows) -> dict[str, pl.DataFrame]:
    """One frame per table of :data:`IMPORTED_TABLES`, conformed to its schema (empty if no row)."""
    frames = {}
    for table in IMPORTED_TABLES:
        data = rows.tables.get(table, [])
        if data:
            frame = pl.DataFrame(data, infer_schema_length=None)
            if table in STUDY_TABLES:
                frame = frame.with_columns(pl.lit(STUDY_NAME).alias("study"))
            frames[table] = conform_any(table, frame)
        else:
            frames[table] = empty_any(table)
    return frames
