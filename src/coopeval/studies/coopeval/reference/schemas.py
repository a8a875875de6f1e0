"""Extra tables filled by the import of the authors' released data (on top of
:data:`coopeval.core.schemas.SCHEMAS`).

* ``released_metrics``: the released summary values, same columns as ``metrics`` with
  ``rule = "released"`` (metrics Mean, Fitness, FinalPopulation, DR, DR_rank), kept apart from
  the values our evaluation recomputes so the two can be compared.
* (``selections`` is a pipeline table, :mod:`coopeval.core.schemas`; imports fill it too.)
* ``experiments``: one row per imported experiment folder.
* ``import_flags``: known issues and consistency findings per experiment (e.g. the released DR
  files that even the authors' own code does not reproduce, docs/protocol/evaluation.md#deviation-ratings; missing records).
* ``dr_comparison``: released vs strictest-CCE deviation ratings per experiment and agent
  (written by :func:`coopeval.studies.coopeval.reference.cli.reproduce`).
"""

from __future__ import annotations

import polars as pl

from coopeval.core.schemas import CELL_COLUMNS, SCHEMAS

REFERENCE_SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    "released_metrics": dict(SCHEMAS["metrics"]),
    "experiments": {
        **CELL_COLUMNS,
        "experiment": pl.String(),  # folder name, e.g. "no_mechanism_prisoners_dilemma"
        "n_players": pl.Int64(),
        "n_rounds": pl.Int64(),
        "discount": pl.Float64(),  # stored discount of matchup_payoffs.json
        "agents": pl.List(pl.String()),  # agent type strings in config order
        "mechanism_kwargs": pl.String(),  # JSON
        "game_kwargs": pl.String(),  # JSON
        "records_file": pl.String(),  # "records.jsonl" | "records.jsonl.gz" | null (absent)
    },
    "import_flags": {
        **CELL_COLUMNS,
        "flag": pl.String(),
        "detail": pl.String(),
    },
    "dr_comparison": {
        **CELL_COLUMNS,
        "agent": pl.String(),
        "released": pl.Float64(),
        "strictest": pl.Float64(),
        "released_rank": pl.Float64(),
        "strictest_rank": pl.Float64(),
        "equal": pl.Boolean(),  # |released − strictest| ≤ 1e−9
    },
}


def all_schemas() -> dict[str, dict[str, pl.DataType]]:
    """The shared pipeline schemas plus the reference-only tables (names never clash)."""
    merged = dict(SCHEMAS)
    for name, schema in REFERENCE_SCHEMAS.items():
        if name in merged:
            raise RuntimeError(f"table {name!r} defined twice")
        merged[name] = schema
    return merged


def conform_any(table: str, frame: pl.DataFrame) -> pl.DataFrame:
    """Select and cast ``frame`` to the schema of ``table`` (pipeline or reference table).

    Raises
    ------
    KeyError
        If ``table`` is unknown.
    """
    schema = all_schemas()[table]
    columns = [
        (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype).alias(name)
        for name, dtype in schema.items()
    ]
    return frame.select(columns)


def empty_any(table: str) -> pl.DataFrame:
    """An empty frame with the schema of ``table`` (pipeline or reference table)."""
    return pl.DataFrame(schema=all_schemas()[table])
