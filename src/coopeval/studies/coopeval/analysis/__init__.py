"""Analyses of stored results: design-quality checks (NS/WD) and other frames for figures."""

import polars as pl

AGENT_KEYS: dict[str, type[pl.DataType]] = {"mechanism": pl.String, "game": pl.String, "agent": pl.String}
"""The leading columns of every per-agent analysis frame: one row group per mechanism × game × agent."""


def agent_schema(**columns: type[pl.DataType]) -> dict[str, type[pl.DataType]]:
    """The column types of a per-agent analysis frame: :data:`AGENT_KEYS`, then ``columns`` in
    the order given (e.g. ``agent_schema(rate=pl.Float64, n=pl.Int64)``)."""
    return {**AGENT_KEYS, **columns}
