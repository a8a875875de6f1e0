"""Write frames into a DuckDB file atomically (single writer; docs/protocol/engineering.md#store).

The database is built in a temporary file next to the target and moved into place with
``os.replace`` only after every table was written, so a failed write never leaves a partial
store. Tables are bulk-inserted from Arrow (``con.register`` + ``CREATE TABLE … AS``), never row
by row. Uses the duckdb 1.x Python API (pinned ``duckdb==1.5.6``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Mapping
from pathlib import Path

import polars as pl

from coopeval.core.duckdb_settings import open_duckdb

__all__ = ["read_table", "write_store"]


def write_store(frames: Mapping[str, pl.DataFrame], path: str | Path, *, metadata: Mapping[str, str] | None = None) -> Path:
    """Create (or replace) the DuckDB file ``path`` holding one table per frame.

    Parameters
    ----------
    frames:
        Table name → frame. Names must be SQL identifiers (letters, digits, underscores).
    path:
        Target ``.duckdb`` file; its folder is created if needed.
    metadata:
        Optional key/value pairs stored in a ``store_metadata(key, value)`` table.

    Returns
    -------
    Path
        The written file.

    Raises
    ------
    ValueError
        On an invalid table name.
    duckdb.Error
        If DuckDB fails; the target is then left untouched.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    for name in frames:
        if not name.replace("_", "a").isalnum() or name[0].isdigit():
            raise ValueError(f"table name {name!r} is not a plain SQL identifier")
    tmp = target.parent / f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp"  # DuckDB creates it
    try:
        con = open_duckdb(tmp, purpose="reference store build")
        try:
            all_frames = dict(frames)
            if metadata:
                all_frames["store_metadata"] = pl.DataFrame(
                    {"key": list(metadata), "value": [str(v) for v in metadata.values()]},
                    schema={"key": pl.String(), "value": pl.String()},
                )
            for name, frame in all_frames.items():
                view = f"__import_{name}"
                con.register(view, frame.to_arrow())
                con.execute(f'CREATE TABLE "{name}" AS SELECT * FROM "{view}"')
                con.unregister(view)
            con.execute("CHECKPOINT")
        finally:
            con.close()
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        Path(str(tmp) + ".wal").unlink(missing_ok=True)
        raise
    return target


def read_table(path: str | Path, table: str) -> pl.DataFrame:
    """Read one table of a store (opened read-only) as a polars frame."""
    con = open_duckdb(path, read_only=True, log=False)
    try:
        return con.sql(f'SELECT * FROM "{table}"').pl()
    finally:
        con.close()
