"""Per-table checksums of a store, for refactors that must not change behaviour.

Usage: ``python benchmarks/store_checksums.py results/coopeval.duckdb > checksums.tsv``; compare
two outputs with ``diff``. Each line is ``table  rows  sha256`` of the table's rows sorted by every
column (as text), leaving out columns that hold wall-clock values (``latency_s``, ``created_at``) or depend on timing
(``coopeval.core.schemas.TRANSPORT_COLUMNS``: 429s, retries, calls in flight)
and the ``provenance`` table.
"""

from __future__ import annotations

import hashlib
import sys

import duckdb

from coopeval.core.schemas import TRANSPORT_COLUMNS

VOLATILE_COLUMNS = {"latency_s", "created_at", "value_version", *TRANSPORT_COLUMNS}
SKIPPED_TABLES = {"provenance"}


def table_checksums(path: str, volatile: set[str] = VOLATILE_COLUMNS) -> list[tuple[str, int, str]]:
    """``(table, n_rows, sha256)`` for every table of the store at ``path``, sorted by name,
    leaving out the columns named in ``volatile``."""
    con = duckdb.connect(path, read_only=True)
    out = []
    for (table,) in con.execute("SELECT table_name FROM information_schema.tables ORDER BY 1").fetchall():
        if table in SKIPPED_TABLES:
            continue
        columns = [c for (c,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = ? ORDER BY ordinal_position", [table]
        ).fetchall() if c not in volatile]
        select = ", ".join(f'CAST("{c}" AS VARCHAR)' for c in columns)
        rows = con.execute(f'SELECT {select} FROM "{table}"').fetchall()
        lines = sorted("\x1f".join("∅" if v is None else v for v in row) for row in rows)
        digest = hashlib.sha256("\n".join(lines).encode("utf-8")).hexdigest()
        out.append((table, len(rows), digest))
    con.close()
    return out


if __name__ == "__main__":
    for table, n, digest in table_checksums(sys.argv[1]):
        print(f"{table}\t{n}\t{digest}")
