"""Time and peak memory of the ``store`` step at study scale, from an existing run's Parquet.

Usage::

    python benchmarks/store_scale.py RUN_DIR --copies 40

``RUN_DIR`` is a workflow folder after a run (it holds ``results/``). Every Parquet file of a
stored table (``results/**/<table>.parquet``) is listed ``--copies`` times, so the store is built
from ``copies`` × the run's rows (e.g. a ~1,800-decision ``benchmarks/scale.py --small`` run
× 40 ≈ the paper grid's ~71,000 decisions). The build runs in a child process; the script
prints one JSON line: ``rows`` (per table), ``store_s`` (wall seconds of
:func:`coopeval.pipeline.store.build_store`), ``peak_rss_mb`` (the child's peak resident set)
and ``store_mb`` (file size).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import json, sys, time
from coopeval.pipeline.store import build_store
tables, out = json.loads(open(sys.argv[1], encoding="utf-8").read()), sys.argv[2]
started = time.perf_counter()
counts = build_store(tables, out)
print(json.dumps({"rows": counts, "store_s": round(time.perf_counter() - started, 2)}))
"""


def main() -> None:
    """Collect the run's Parquet files, build the store in a child process, print the measures."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("run_dir", type=Path)
    p.add_argument("--copies", type=int, default=40)
    a = p.parse_args()
    src = Path(__file__).resolve().parents[1] / "src"
    sys.path.insert(0, str(src))
    from coopeval.core.schemas import SCHEMAS

    results = a.run_dir / "results"
    tables = {}
    for name in SCHEMAS:
        # the judge shards' files are gathered into results/judge/ (the store reads only those)
        files = sorted(str(f) for f in results.rglob(f"{name}.parquet") if "shards" not in f.parts)
        if files:
            tables[name] = files * a.copies
    if not tables:
        sys.exit(f"no stored table's Parquet below {results}; run the workflow there first")
    with tempfile.TemporaryDirectory() as tmp:
        out, listing = Path(tmp) / "store.duckdb", Path(tmp) / "tables.json"
        listing.write_text(json.dumps(tables), encoding="utf-8")
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(listing), str(out)],
            capture_output=True, text=True, env={"PYTHONPATH": str(src), "PATH": "/usr/bin:/bin"},
        )
        if child.returncode != 0:
            sys.exit(child.stderr[-2000:])
        measures = json.loads(child.stdout.strip().splitlines()[-1])
        measures["store_mb"] = round(out.stat().st_size / 2**20, 1)
    peak_kb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    measures.update(copies=a.copies, peak_rss_mb=round(peak_kb / 1024, 1))
    print(json.dumps(measures))


if __name__ == "__main__":
    main()
