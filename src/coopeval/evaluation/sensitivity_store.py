"""The prompt sensitivity reports as store tables (docs/paraphrases.md#the-sensitivity-report).

Each study that varies the wording writes its report's three CSV tables
(:attr:`coopeval.evaluation.sensitivity_report.SensitivitySource.tables`: per-variant values,
variance shares, pairwise orderings). The rule ``sensitivity_store_rows`` gathers every
configured study's tables into one Parquet file per store table, with a ``study`` column, and
the ``store`` rule (the only writer of the store) loads them; the explorer reads them from the
store (:mod:`coopeval.explorer.sensitivity`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import polars as pl

from coopeval.core.io import write_parquet_atomic
from coopeval.core.schemas import conform, register_tables

__all__ = ["SENSITIVITY_PARTS", "SENSITIVITY_SCHEMAS", "SENSITIVITY_STORE_FILES", "sensitivity_store_frames", "write_sensitivity_store_rows"]

SENSITIVITY_SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    "sensitivity_values": {"study": pl.String(), "metric": pl.String(), "model": pl.String(), "prompt_variant": pl.String(),
                           "value": pl.Float64(), "n_contexts": pl.Int64()},
    "sensitivity_shares": {"study": pl.String(), "metric": pl.String(), "source": pl.String(), "sum_sq": pl.Float64(),
                           "df": pl.Int64(), "share": pl.Float64()},
    "sensitivity_orderings": {"study": pl.String(), "metric": pl.String(), "a": pl.String(), "b": pl.String(),
                              "prompt_variant": pl.String(), "delta": pl.Float64(), "n_contexts": pl.Int64(), "holds": pl.Boolean()},
}
"""Store table → columns: a report's per-variant values (``value``: the model's mean over the
contexts it has under every variant), variance shares (``source``: model, prompt variant, their
interaction, context, residual) and pairwise orderings (``delta`` = a − b under the variant;
``holds``: same non-zero sign under every variant), each with the ``study`` it belongs to."""

SENSITIVITY_PARTS = {"sensitivity_values": "per_variant", "sensitivity_shares": "shares", "sensitivity_orderings": "orderings"}
"""Store table → the report table it holds (a key of ``SensitivitySource.tables``)."""

SENSITIVITY_STORE_FILES = {table: f"results/sensitivity/{table}.parquet" for table in SENSITIVITY_SCHEMAS}
"""Store table → the Parquet file the rule ``sensitivity_store_rows`` writes for it."""

register_tables(SENSITIVITY_SCHEMAS)


def sensitivity_store_frames(reports: Mapping[str, Mapping[str, str | Path]]) -> dict[str, pl.DataFrame]:
    """Store table → the rows of every study's report, ``study`` first.

    Parameters
    ----------
    reports:
        Study name → its report's table files (``SensitivitySource.tables``; the CSVs of
        :data:`SENSITIVITY_PARTS` are read). A report without results (its CSVs hold only the
        ``metric`` header) adds no rows.

    Raises
    ------
    FileNotFoundError
        If a report's CSV is missing (run the study's sensitivity rule first).
    """
    out: dict[str, pl.DataFrame] = {}
    for table, part in SENSITIVITY_PARTS.items():
        schema = SENSITIVITY_SCHEMAS[table]
        frames = []
        for study, files in sorted(reports.items()):
            path = Path(files[part])
            if not path.is_file():
                raise FileNotFoundError(f"{path}: the {study} prompt sensitivity table is missing; run its sensitivity rule first")
            header = pl.read_csv(path, n_rows=0).columns
            frame = pl.read_csv(path, schema_overrides={name: schema[name] for name in header if name in schema})
            if frame.height:
                frames.append(conform(table, frame.with_columns(pl.lit(study).alias("study"))))
        out[table] = pl.concat(frames) if frames else pl.DataFrame(schema=schema)
    return out


def write_sensitivity_store_rows(reports: Mapping[str, Mapping[str, str | Path]], out: Mapping[str, str | Path]) -> dict[str, int]:
    """Write :func:`sensitivity_store_frames` of ``reports``, one Parquet file per store table
    (``out``: table → path, as :data:`SENSITIVITY_STORE_FILES`). Returns the rows per table."""
    counts = {}
    for table, frame in sensitivity_store_frames(reports).items():
        write_parquet_atomic(frame, out[table])
        counts[table] = frame.height
    return counts
