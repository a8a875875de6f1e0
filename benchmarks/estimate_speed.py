"""How long ``coopeval estimate`` takes for a config (issue 24: "in a few seconds").

Usage::

    python benchmarks/estimate_speed.py [--configfile FILE]… [--repeat N] [--json]

Runs ``python -m coopeval.cli estimate --json`` with the overlays given (default
``config/paper.yaml``) ``N`` times (default 3) from the working directory, each in a fresh
Python as a user would, and prints per run the wall time, the CPU seconds of the command and
of every process it started (user + sys, ``resource.getrusage(RUSAGE_CHILDREN)``; the facts
child and the forked simulation child included), the load average of the minute before it
started (``os.getloadavg``: the figure is only comparable at a like load; the target is 2 idle
cores) and the decision ranges it printed, then the median wall time. Exit code 1 if a run
fails or the runs disagree on any study's decisions.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

__all__ = ["main", "time_estimate"]


def time_estimate(configfiles: list[Path]) -> dict[str, Any]:
    """One timed ``coopeval estimate --json`` of ``configfiles``: ``wall_s``, ``cpu_s`` (the
    command and its children), ``load_1min`` (before it), ``studies`` (its decision ranges).

    Raises
    ------
    RuntimeError
        The command failed (its stderr in the message).
    """
    args = [sys.executable, "-m", "coopeval.cli", "estimate", "--json"]
    if configfiles:
        args += ["--configfile", *map(str, configfiles)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    load = os.getloadavg()[0]
    start = time.perf_counter()
    done = subprocess.run(args, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"coopeval estimate failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": round(wall, 2), "cpu_s": round(cpu, 2), "load_1min": round(load, 2), "studies": json.loads(done.stdout)["studies"]}


def main(argv: list[str] | None = None) -> int:
    """Time the estimate (see the module docstring); 0 when every run succeeded and agreed."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configfile", action="extend", nargs="+", type=Path, default=[], metavar="FILE",
                        help="overlays on config/config.yaml (default: config/paper.yaml)")
    parser.add_argument("--repeat", type=int, default=3, metavar="N", help="timed runs (default 3)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    files = args.configfile or [Path("config/paper.yaml")]
    runs = [time_estimate(files) for _ in range(args.repeat)]
    agree = all(r["studies"] == runs[0]["studies"] for r in runs)
    summary = {"configfiles": [str(f) for f in files], "runs": runs, "median_wall_s": statistics.median(r["wall_s"] for r in runs),
               "decisions_agree": agree}
    if args.json:
        print(json.dumps(summary, indent=1))
    else:
        for i, r in enumerate(runs, 1):
            print(f"run {i}: {r['wall_s']:.2f} s wall, {r['cpu_s']:.2f} s CPU (command and children), load average {r['load_1min']:.2f} before")
        ranges = ", ".join(f"{s} {v['decisions_min']:,}–{v['decisions_max']:,}" for s, v in runs[0]["studies"].items())
        print(f"median {summary['median_wall_s']:.2f} s wall over {len(runs)} runs of {' + '.join(summary['configfiles'])}; decisions: {ranges}"
              + ("" if agree else " (RUNS DISAGREE)"))
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
