"""Analyses of stored results: design-quality checks (NS/WD) and other frames for figures."""

import polars as pl

AGENT_KEYS: dict[str, type[pl.DataType]] = {"mechanism": pl.String, "game": pl.String, "agent": pl.String}
"""The leading columns of every per-agent analysis frame: one row group per mechanism × game × agent."""
