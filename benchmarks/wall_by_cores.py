"""Expected wall time of a measured run on more cores: a list-scheduling calculation, not a measurement.

Usage: ``python benchmarks/wall_by_cores.py <snakemake output of a run> [--cores 2 4 8 16]``

Reads the job start and finish times Snakemake prints (``[date]`` before ``rule …:`` with its
``jobid`` and ``resources``, and before ``Finished jobid: N``) and splits the run into three
parts: before the first embedded-model job starts, the embedded-model jobs (those with
``local_llm=1``: play and judge), and after the last of them ends. The middle part is replayed
by list scheduling longest first (the workflow's priority is the cell's cost, close to that) on
``k`` one-thread units, each job taking the seconds it took in the run; the other two parts are
kept as measured. Assumes a one-thread job takes as long beside 7 others as beside 1 (compute
bound; memory bandwidth may make it slower) and ignores that a judge shard waits for its cells.
Prints a table and one JSON line.
"""

from __future__ import annotations

import argparse
import heapq
import json
import re
import sys
from datetime import datetime
from pathlib import Path

STAMP = re.compile(r"^\[(\w{3} \w{3} +\d+ \d\d:\d\d:\d\d \d{4})\]$")


def job_times(log: Path) -> tuple[dict[int, tuple[datetime, datetime, bool]], datetime, datetime]:
    """``jobid → (start, end, takes local_llm)`` and the first and last time stamps of ``log``."""
    started: dict[int, tuple[datetime, bool]] = {}
    jobs: dict[int, tuple[datetime, datetime, bool]] = {}
    stamp: datetime | None = None
    first: datetime | None = None
    pending: int | None = None
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    for line in lines:
        if match := STAMP.match(line.strip()):
            stamp = datetime.strptime(" ".join(match.group(1).split()), "%a %b %d %H:%M:%S %Y")
            first = first or stamp
            continue
        if (found := re.match(r"\s+jobid: (\d+)", line)) and stamp is not None:
            pending = int(found.group(1))
            started[pending] = (stamp, False)
        elif pending is not None and "resources:" in line:
            started[pending] = (started[pending][0], "local_llm=1" in line)
            pending = None
        elif (done := re.match(r"Finished jobid: (\d+)", line)) and stamp is not None:
            jobid = int(done.group(1))
            if jobid in started:
                jobs[jobid] = (started[jobid][0], stamp, started[jobid][1])
    if first is None or stamp is None:
        raise SystemExit(f"{log}: no Snakemake time stamps found")
    return jobs, first, stamp


def makespan(durations: list[float], units: int) -> float:
    """Longest-first list scheduling of ``durations`` (seconds) on ``units`` identical units."""
    free = [0.0] * units
    for seconds in sorted(durations, reverse=True):
        heapq.heapreplace(free, free[0] + seconds)
    return max(free)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("log", type=Path, help="the run's Snakemake output (stderr)")
    p.add_argument("--cores", type=int, nargs="+", default=[2, 4, 8, 16], help="units to compute for (default: %(default)s)")
    p.add_argument("--wall-s", type=float, default=None,
                   help="the run's measured wall seconds (e.g. /usr/bin/time's, install included): the part before "
                        "Snakemake's first time stamp is kept as measured (default: none, that part left out)")
    a = p.parse_args(argv)
    jobs, first, last = job_times(a.log)
    local = [(s, e) for s, e, uses in jobs.values() if uses]
    if not local:
        raise SystemExit(f"{a.log}: no job took local_llm=1")
    head = (min(s for s, _ in local) - first).total_seconds()
    tail = (last - max(e for _, e in local)).total_seconds()
    durations = [(e - s).total_seconds() for s, e in local]
    measured_middle = (max(e for _, e in local) - min(s for s, _ in local)).total_seconds()
    outside = 0.0 if a.wall_s is None else a.wall_s - (last - first).total_seconds()
    rows = {k: outside + head + makespan(durations, k) + tail for k in a.cores}
    print(f"{len(durations)} embedded-model jobs, {sum(durations):.0f} job-seconds, longest {max(durations):.0f} s; "
          f"before them {head:.0f} s, after them {tail:.0f} s, the stage itself {measured_middle:.0f} s as measured", file=sys.stderr)
    for k, wall in rows.items():
        print(f"{k:>3} cores: {wall / 60:5.1f} min (computed)", file=sys.stderr)
    print(json.dumps({"jobs": len(durations), "job_seconds": round(sum(durations)), "longest_s": round(max(durations)),
                      "outside_s": round(outside), "head_s": round(head), "tail_s": round(tail), "stage_measured_s": round(measured_middle),
                      "computed_wall_s": {str(k): round(v) for k, v in rows.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
