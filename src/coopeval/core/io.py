"""Atomic file output: declared outputs appear whole or not at all (engineering rules §2)."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl


def write_parquet_atomic(frame: pl.DataFrame, path: str | Path) -> None:
    """Write to ``<path>.tmp`` then ``os.replace`` (no partial file is ever visible)."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".tmp")
    frame.write_parquet(tmp)
    os.replace(tmp, target)
