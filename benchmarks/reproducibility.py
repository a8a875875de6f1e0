"""Reproducibility benchmark: one config played twice from empty caches, the two stores compared.

Usage (from the repository root, in the project's venv)::

    python benchmarks/reproducibility.py -- --config 'games=[prisoners_dilemma,stag_hunt]' \\
        'mechanisms=[Repetition]' 'studies=[coopeval]'
    python benchmarks/reproducibility.py --cores 1 2 -- --config 'studies=[gossip]'
    python benchmarks/reproducibility.py --kill-after 60 -- --config ...   # B killed once, resumed
    python benchmarks/reproducibility.py --kill-after 60 120 180 -- ...     # B killed three times
    python benchmarks/reproducibility.py --compare ../run1 ../run2   # two finished runs, nothing run

Everything after ``--`` is passed to ``snakemake --cores C all`` in both runs. Each run plays in a
copy of the workflow (``Snakefile``, ``workflow``, ``config``, ``resources``, ``src``,
``profiles``) with empty ``results/`` and response cache; the re-encoded weights
(``$COOPEVAL_MODEL_CACHE_DIR``) are shared, as their encoding is deterministic. The runs go side by
side (``--sequential``: one after the other); ``--cores`` gives each run its own ``--cores``.
With ``--kill-after S [S ...]`` the second run is stopped with SIGKILL to its process group at
each S seconds after its first start, unlocked (``snakemake --unlock``) and started again, as a
user resumes a killed run (docs/running.md); ``kills`` in the JSON line gives, per kill, the
time, the answers in the response cache then (``cached``) and the cache hits the jobs of the
next start reported (``hits_after``; equal to ``cached`` when every stored answer of an
unfinished cell is found again, less when cells finished before the kill are not played again).

Prints progress to stderr and one JSON line to stdout: the calls (``llm_calls`` rows, matched by
decision id and attempt) and how many responses differ; the decisions (matched by decision id)
and how many differ in action, points or parsed answer; every store table's checksum over its
sorted rows (benchmarks/store_checksums.py, without wall-clock and transport columns, and without
``cache_hit`` after a kill) and which tables differ; the result tables' CSV files
(``results/tables/**.csv``) compared byte for byte; ``identical`` when nothing differs. Exits 1
when a run fails or the stores differ.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from store_checksums import VOLATILE_COLUMNS, table_checksums  # noqa: E402

COPIED = ("Snakefile", "workflow", "config", "resources", "src", "profiles")
STORE = Path("results") / "coopeval.duckdb"


def copy_workflow(work: Path) -> Path:
    """A copy of the workflow in ``work`` (made if missing); returns ``work``."""
    work.mkdir(parents=True, exist_ok=True)
    for item in COPIED:
        source, target = REPO / item, work / item
        if source.exists() and not target.exists():
            (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    return work


def start(work: Path, cores: int, args: Sequence[str], log: Path, extra_env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    """``snakemake --cores cores all args`` in ``work``, in its own process group, output to ``log``."""
    command = [sys.executable, "-m", "snakemake", "--cores", str(cores), "all", *args]
    # the copy's own code, not the checkout the venv's editable install points at (which may change meanwhile)
    path = os.pathsep.join(filter(None, [str(work / "src"), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "LITELLM_OFFLINE_MODE": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True", **(extra_env or {})}
    with log.open("ab") as out:
        return subprocess.Popen(command, cwd=work, stdout=out, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the run's process group (snakemake and every job), then reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def cached_answers(work: Path) -> int:
    """Answers in the response cache of the workflow copy ``work`` (``results/.cache``; 0 when
    there is none yet), counted while no job runs."""
    database = work / "results" / ".cache" / "cache.db"
    if not database.is_file():
        return 0
    with contextlib.closing(sqlite3.connect(f"file:{database}?mode=ro", uri=True)) as con:
        return int(con.execute("SELECT count(*) FROM Cache").fetchone()[0])


def cache_hits(log_text: str) -> int:
    """Cache hits the jobs in ``log_text`` reported: per cell (``[<cell>] …``), the last count its
    progress or closing lines give (``N cache hits``), summed over the cells."""
    last: dict[str, int] = {}
    for cell, hits in re.findall(r"^\[([^\]\n]+)\] [^\n]*?(\d+) cache hits", log_text, flags=re.MULTILINE):
        last[cell] = int(hits)
    return sum(last.values())


def calls_compared(a: Path, b: Path) -> dict[str, int]:
    """Calls and decisions of store ``a`` against store ``b``: counts and how many differ."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{a}' AS a (READ_ONLY)")
    con.execute(f"ATTACH '{b}' AS b (READ_ONLY)")
    calls, calls_differ = con.execute(
        """SELECT count(*), count(*) FILTER (WHERE a.response IS DISTINCT FROM b.response)
           FROM a.llm_calls a FULL JOIN b.llm_calls b
             ON a.study = b.study AND a.decision_id = b.decision_id AND a.attempt = b.attempt
                AND a.kind = b.kind"""
    ).fetchone() or (0, 0)
    decisions, decisions_differ = con.execute(
        """SELECT count(*), count(*) FILTER (WHERE a.action IS DISTINCT FROM b.action
                 OR a.points IS DISTINCT FROM b.points OR a.parsed IS DISTINCT FROM b.parsed
                 OR a.status IS DISTINCT FROM b.status)
           FROM a.decisions a FULL JOIN b.decisions b ON a.study = b.study AND a.decision_id = b.decision_id"""
    ).fetchone() or (0, 0)
    con.close()
    return {"calls": calls, "responses_differ": calls_differ, "decisions": decisions, "decisions_differ": decisions_differ}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark; returns the exit status (see the module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    passed = argv[argv.index("--") + 1 :] if "--" in argv else []
    own = argv[: argv.index("--")] if "--" in argv else argv
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--cores", type=int, nargs="+", default=[2], metavar="C",
                   help="--cores of run A and run B (one value: both) (default: %(default)s)")
    p.add_argument("--sequential", action="store_true", help="run A, then B (default: side by side)")
    p.add_argument("--kill-after", type=float, nargs="+", default=[], metavar="S",
                   help="SIGKILL run B's group S seconds after its start, then resume it; several times "
                        "for several kills (default: no kill)")
    p.add_argument("--env-b", action="append", default=[], metavar="NAME=VALUE",
                   help="an environment variable for run B only, e.g. COOPEVAL_LLAMA_THREADS=2 (repeatable)")
    p.add_argument("--workdir", type=Path, default=None,
                   help="folder for the two copies (default: a new temporary folder, kept)")
    p.add_argument("--compare", type=Path, nargs=2, default=None, metavar=("WORK_A", "WORK_B"),
                   help="run nothing: compare two workflow folders already run (e.g. two main jobs)")
    a = p.parse_args(own)
    if a.compare is not None:
        if missing := [str(w / STORE) for w in a.compare if not (w / STORE).is_file()]:
            p.error(f"--compare: no store at {missing[0]}; give folders where snakemake ran to its end")
        compared = {"workdirs": [str(w) for w in a.compare], **stores_compared(a.compare)}
        print(json.dumps(compared), flush=True)
        return 0 if compared["identical"] else 1
    cores = (a.cores * 2)[:2] if len(a.cores) == 1 else a.cores
    if len(cores) != 2 or min(cores) < 1:
        p.error("--cores takes one or two values of at least 1")
    if bad := [e for e in a.env_b if "=" not in e or not e.split("=", 1)[0]]:
        p.error(f"--env-b {bad[0]!r}: give NAME=VALUE")
    env_b = dict(e.split("=", 1) for e in a.env_b)
    root = a.workdir or Path(tempfile.mkdtemp(prefix="coopeval-repro-"))
    works = [copy_workflow(root / name) for name in ("a", "b")]
    for work in works:
        if (work / "results").exists():
            p.error(f"{work / 'results'} exists: give an empty --workdir")
    logs = [root / "a.log", root / "b.log"]
    print(f"reproducibility: runs in {root}, logs a.log and b.log", file=sys.stderr, flush=True)
    started = time.perf_counter()
    walls: list[float] = [0.0, 0.0]
    codes: list[int | None] = [None, None]
    killed = False
    kills: list[dict[str, Any]] = []
    pending_kills = sorted(a.kill_after)
    processes: list[subprocess.Popen[bytes] | None] = [None, None]
    for i in range(2):
        if a.sequential and i == 1:
            assert processes[0] is not None
            codes[0] = processes[0].wait()
            walls[0] = time.perf_counter() - started
        processes[i] = start(works[i], cores[i], passed, logs[i], env_b if i == 1 else None)
        if i == 1:
            b_started = time.perf_counter()
    while any(c is None for c in codes):
        time.sleep(1.0)
        now = time.perf_counter()
        for i, process in enumerate(processes):
            if process is None or codes[i] is not None:
                continue
            if i == 1 and pending_kills and now - b_started >= pending_kills[0]:
                pending_kills.pop(0)
                print(f"reproducibility: run b killed at {now - b_started:.0f} s; resuming", file=sys.stderr, flush=True)
                kill_group(process)
                killed = True
                kills.append({"at_s": round(now - b_started), "cached": cached_answers(works[1]), "log_from": logs[1].stat().st_size})
                # a SIGKILLed snakemake keeps its lock: released as a user would (docs/running.md)
                subprocess.run([sys.executable, "-m", "snakemake", "--unlock", *passed], cwd=works[1],
                               capture_output=True, check=False)
                processes[1] = start(works[1], cores[1], passed, logs[1], env_b)
                continue
            if (code := process.poll()) is not None:
                codes[i], walls[i] = code, now - (b_started if i == 1 else started)
                print(f"reproducibility: run {'ab'[i]} exited {code} after {walls[i]:.0f} s", file=sys.stderr, flush=True)
    result: dict[str, Any] = {
        "snakemake_args": passed,
        "cores": cores,
        "side_by_side": not a.sequential,
        "killed_and_resumed": killed,
        "kills": kills,
        "env_b": env_b,
        "exit": codes,
        "wall_s": [round(w, 1) for w in walls],
        "workdir": str(root),
    }
    text = logs[1].read_bytes()
    for k, kill in enumerate(kills):
        end = kills[k + 1]["log_from"] if k + 1 < len(kills) else len(text)
        kill["hits_after"] = cache_hits(text[kill.pop("log_from") : end].decode(errors="replace"))
    stores = [work / STORE for work in works]
    if any(code != 0 for code in codes) or not all(s.is_file() for s in stores):
        result["identical"] = False
        print(json.dumps(result), flush=True)
        return 1
    result.update(stores_compared(works, killed))
    print(json.dumps(result), flush=True)
    return 0 if result["identical"] else 1


def stores_compared(works: Sequence[Path], killed: bool = False) -> dict[str, Any]:
    """The two workdirs' stores and result CSVs compared (the fields of the JSON line after
    ``workdir``); ``killed`` leaves ``cache_hit`` out of the table checksums."""
    stores = [work / STORE for work in works]
    result: dict[str, Any] = calls_compared(*stores)
    volatile = VOLATILE_COLUMNS | ({"cache_hit"} if killed else set())
    ours, theirs = (table_checksums(str(s), volatile) for s in stores)
    result["tables"] = len(ours)
    result["tables_differing"] = sorted({t for t, *_ in set(ours) ^ set(theirs)})
    csvs = [{f.relative_to(w): f.read_bytes() for f in sorted((w / "results" / "tables").rglob("*.csv"))} for w in works]
    result["csv_tables"] = len(csvs[0])
    result["csv_tables_differing"] = sorted(str(f) for f in set(csvs[0]) | set(csvs[1]) if csvs[0].get(f) != csvs[1].get(f))
    result["identical"] = not (
        result["tables_differing"] or result["csv_tables_differing"] or result["responses_differ"] or result["decisions_differ"]
    )
    return result

if __name__ == "__main__":
    sys.exit(main())
