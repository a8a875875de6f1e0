"""Every DuckDB connection of the package, with its thread count and memory limit set and logged
(issue 25 kind 8).

DuckDB's defaults are the machine's: as many threads as cores and 80 % of physical memory. On a
big submit host the ``store`` rule (or a figure job) would then take far more than the memory
budget the workflow plans for, unseen. :func:`open_duckdb` sets both from the environment,
``COOPEVAL_STORE_THREADS`` (default 2) and ``COOPEVAL_STORE_MEMORY`` (default 1GB; beyond it
DuckDB spills to its temporary folder or fails with an out-of-memory error naming the limit),
and prints one line naming the file and the settings in effect as DuckDB reports them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import duckdb

from coopeval.core.environment import env_value

__all__ = ["STORE_MEMORY_ENV", "STORE_THREADS_ENV", "duckdb_settings", "locked_store_message", "open_duckdb"]

STORE_MEMORY_ENV = "COOPEVAL_STORE_MEMORY"
STORE_THREADS_ENV = "COOPEVAL_STORE_THREADS"


def duckdb_settings() -> dict[str, str | int]:
    """The connection settings from the environment: ``{"threads": int, "memory_limit": "1GB"}``.

    Raises
    ------
    coopeval.core.environment.EnvironmentSettingError
        A malformed ``COOPEVAL_STORE_THREADS`` or ``COOPEVAL_STORE_MEMORY`` (the message names it).
    """
    return {"threads": int(env_value(STORE_THREADS_ENV)), "memory_limit": str(env_value(STORE_MEMORY_ENV))}


def open_duckdb(path: str | Path, read_only: bool = False, purpose: str = "", log: bool = True) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection to ``path`` with :func:`duckdb_settings` applied at connect time.

    ``purpose`` (e.g. ``"store build"``) and the settings DuckDB reports
    (``current_setting('threads')``, ``current_setting('memory_limit')``) are printed on stderr
    when ``log`` is true, so a job's log states what the store was allowed to use.

    Raises
    ------
    coopeval.core.environment.EnvironmentSettingError
        A malformed setting variable.
    duckdb.Error
        DuckDB cannot open the file.
    """
    settings = duckdb_settings()
    con = duckdb.connect(str(path), read_only=read_only, config={k: str(v) for k, v in settings.items()})
    if log:
        threads, memory = con.execute("SELECT current_setting('threads'), current_setting('memory_limit')").fetchone()  # type: ignore[misc]
        mode = "read-only" if read_only else "read-write"
        print(
            f"[duckdb] {purpose or 'open'} {path} ({mode}): threads = {threads}, memory_limit = {memory} "
            f"({STORE_THREADS_ENV}, {STORE_MEMORY_ENV})",
            file=sys.stderr,
            flush=True,
        )
    return con


def locked_store_message(path: str | Path, exc: BaseException) -> str | None:
    """The message for a store another process holds open for writing (DuckDB: "Could not set
    lock … Conflicting lock is held in …"), naming the holder, or None for any other error."""
    first = str(exc).splitlines()[0] if str(exc) else ""
    if "Conflicting lock" not in first:
        return None
    holder = first.split("Conflicting lock is held in", 1)[1].split(". See also", 1)[0].strip() or "another process"
    return f"store {path} is open for writing in {holder}; wait until that finishes (e.g. the workflow's store rule), then try again"
