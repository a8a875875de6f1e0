"""The paper-scale benchmark (issue 12): the CoopEval paper grid against the simulated provider.

Usage::

    python benchmarks/scale.py                 # config/paper_sim.yaml: ~70k decisions, latency 1 s, cap 64
    python benchmarks/scale.py --small         # test size (a few hundred decisions), one SIGKILL + rerun
    python benchmarks/scale.py --faults        # inject 5 % 429, 1 % 500, 0.5 % timeouts
    python benchmarks/scale.py --kills 3       # SIGKILL snakemake 3 times, rerun, compare the store

It copies the workflow into a work folder, starts ``python -m coopeval.simserver`` on
127.0.0.1, runs ``snakemake --cores 8 all --configfile config/paper_sim.yaml <overlay>`` with
``COOPEVAL_PROVIDER_SLOTS=<cap>`` (one run-wide cap on calls in flight,
:mod:`coopeval.agents.slots`; each job's own ``max_concurrency`` = the cap) and prints ONE JSON
line:

* ``decisions``, ``failed_decisions``: rows of the store's ``decisions`` table (CoopEval and
  judge decisions; the judge's are the ``judgements`` rows) and those with status ``failed``;
* ``wall_s``: wall seconds of all snakemake runs (kills and reruns included);
* ``requests``: lines of the server's request log; ``ok_requests`` those answered;
  ``repeated_requests``: requests whose hash had already been answered ``ok`` (a call paid twice),
  ``repeated_in_kill_window`` those answered less than 2 s before a SIGKILL (in flight to the
  killed client, so unavoidable); every other repeat is a fault of the harness;
* ``bound_s`` = max(critical path × latency, ok requests × latency / cap), where the critical
  path is the longest chain of dependent attempts: per cell, the sum over its (round, kind)
  steps of the most attempts any decision of that step needed, plus the judge's longest
  decision (the judge starts after every cell); ``ratio`` = wall_s / bound_s;
* ``requests_per_decision``: requests / decisions (transport retries and re-asks push it above 1);
* ``cpu_s_per_call``: CPU seconds of snakemake and its jobs (user + system, server excluded)
  per ok request;
* ``kills``: the phases the run was SIGKILLed in (play, judge, store, cycled; see
  :class:`KillPlan`); with kills also ``store_equal`` (every table's sorted-row checksum equals an
  uninterrupted run's, leaving out wall-clock and cache-hit columns).

The work folder is kept (``--workdir``; default a fresh temporary folder) for inspection.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from store_checksums import table_checksums  # noqa: E402

# Columns that legitimately differ between an interrupted and an uninterrupted run: wall-clock
# values, and whether an attempt came from the cache (a rerun replays what the killed run paid).
RESUME_VOLATILE = {"latency_s", "created_at", "value_version", "cache_hit"}
# profiles: the workflow profile (rerun-incomplete, keep-going) applies as for a user
COPIED = ("Snakefile", "workflow", "config", "resources", "src", "profiles")
FAULTS = {"429": 0.05, "500": 0.01, "timeout": 0.005}
SMALL_OVERLAY: dict[str, Any] = {
    "replicates": 1,
    "games": ["prisoners_dilemma"],
    "mechanisms": ["NoMechanism", "Repetition", "ReputationFirstOrder", "Mediation", "Contracting"],
    "mechanism_params": {"Repetition": {"num_rounds": 4}},
}


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def prepare(work: Path, port: int, small: bool, sizing: dict[str, Any] | None = None) -> list[str]:
    """Copy the workflow into ``work`` and write the run overlay (``sizing``: config keys such as
    ``games`` or ``replicates`` replacing the paper grid's); return the configfile args."""
    work.mkdir(parents=True, exist_ok=True)
    for item in COPIED:
        source, target = REPO / item, work / item
        if target.exists():
            continue
        (shutil.copytree if source.is_dir() else shutil.copy)(source, target)
    base = yaml.safe_load((REPO / "config" / "paper_sim.yaml").read_text(encoding="utf-8"))
    api_base = f"http://127.0.0.1:{port}/v1"
    overlay: dict[str, Any] = {"agents": base["agents"], "judge": base["judge"]}
    for spec in [*overlay["agents"], overlay["judge"]]:
        spec["params"]["api_base"] = api_base
    if small:
        overlay.update(SMALL_OVERLAY)
        # one cooperative and one defecting CoT agent, one random IO agent
        overlay["agents"] = [overlay["agents"][i] for i in (0, 5, 2)]
    overlay.update(sizing or {})
    (work / "config" / "scale_run.yaml").write_text(yaml.safe_dump(overlay, sort_keys=False), encoding="utf-8")
    return ["--configfile", "config/paper_sim.yaml", "config/scale_run.yaml"]


class Server:
    """The simulated provider as a child process (its own request log per run)."""

    def __init__(self, port: int, log: Path, latency: float, cap: int, faults: bool, seed: int) -> None:
        args = [sys.executable, "-m", "coopeval.simserver", "--port", str(port), "--log", str(log),
                "--latency", str(latency), "--cap", str(cap), "--seed", str(seed), "--timeout-hang", "8",
                "--policy", "qwen/qwen3-30b-a3b-instruct-2507=defecting",
                "--policy", "anthropic/claude-sonnet-4.5=cooperative"]
        if faults:
            args += [arg for name, rate in FAULTS.items() for arg in ("--fault", f"{name}={rate}")]
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        self.log = log
        self.proc = subprocess.Popen(args, env=env, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the sim server did not listen on port {port} within 30 s")

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def ok_count(log: Path) -> int:
    """Answered requests in the log so far."""
    if not log.exists():
        return 0
    return sum(1 for line in log.read_text(encoding="utf-8").splitlines() if '"outcome": "ok"' in line)


class KillPlan:
    """When to SIGKILL the run: a list of phases (``play``, ``judge``, ``store``, cycled for
    more kills). ``play`` fires once the request log holds a drawn number of answers; ``judge``
    a drawn 0.5-3 s after the judge's log is first seen; ``store`` as soon as the store's temporary
    file exists (the store is being built)."""

    PHASES = ("play", "judge", "store")

    def __init__(self, kills: int, expected_ok: int, rng: random.Random) -> None:
        self.pending = [self.PHASES[k % 3] for k in range(kills)]
        self.play_at = rng.randint(expected_ok // 10, expected_ok // 2)
        self.judge_delay = rng.uniform(0.5, 3.0)
        self.fired: list[str] = []
        self.judge_seen: float | None = None
        self.times: list[float] = []

    def due(self, work: Path, log: Path) -> bool:
        """Whether the next planned kill is due now."""
        if not self.pending:
            return False
        phase = self.pending[0]
        if phase == "play":
            return ok_count(log) >= self.play_at
        if phase == "judge":
            if self.judge_seen is None and (work / "results" / "logs" / "judge.log").exists():
                self.judge_seen = time.monotonic()
            return self.judge_seen is not None and time.monotonic() - self.judge_seen >= self.judge_delay
        return (work / "results" / "coopeval.duckdb.tmp").exists()

    def fire(self) -> None:
        """Record the kill (phase and Unix time)."""
        self.fired.append(self.pending.pop(0))
        self.times.append(time.time())


def run_snakemake(work: Path, args: Sequence[str], log: Path, plan: KillPlan, cap: int) -> float:
    """Run snakemake in ``work`` with ``cap`` run-wide provider slots, SIGKILLing its process
    group when ``plan`` says so and rerunning (after ``--unlock``) each time. Returns the wall
    seconds of all runs."""
    env = {**os.environ, "OPENAI_API_KEY": "sim-key", "LITELLM_OFFLINE_MODE": "true",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COOPEVAL_PROVIDER_SLOTS": str(cap),
           "COOPEVAL_PROVIDER_SLOTS_DIR": str(work / "results" / ".slots"),
           "PYTHONPATH": str(work / "src")}  # the jobs import the copied sources, not an installed coopeval
    command = [sys.executable, "-m", "snakemake", *args]
    out = (work / "snakemake_runs.log").open("a", encoding="utf-8")
    started = time.monotonic()
    try:
        while True:
            proc = subprocess.Popen(command, cwd=work, env=env, stdout=out, stderr=out, start_new_session=True)
            killed = False
            while proc.poll() is None:
                if plan.due(work, log):
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    plan.fire()
                    killed = True
                    break
                time.sleep(0.1)
            if killed:
                subprocess.run([sys.executable, "-m", "snakemake", "--unlock", *args[2:]], cwd=work, env=env,
                               stdout=out, stderr=out, check=True)
                continue
            if proc.returncode != 0:
                raise RuntimeError(f"snakemake failed (exit {proc.returncode}); see {work / 'snakemake_runs.log'}")
            return time.monotonic() - started
    finally:
        out.close()


KILL_WINDOW_S = 2.0
"""A request answered less than this many seconds before a kill may not have reached the
killed client's cache yet; repeating it after the rerun is unavoidable."""


def log_measures(log: Path, kill_times: Sequence[float] = ()) -> dict[str, int]:
    """From the request log: requests, answered requests, requests repeated after an answer
    (``repeated_requests``) and, of those, the ones whose first answer came within
    :data:`KILL_WINDOW_S` before a kill (``repeated_in_kill_window``)."""
    answered: dict[str, float] = {}
    requests = ok = repeated = in_window = 0
    for line in log.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        requests += 1
        first = answered.get(row["hash"])
        if first is not None:
            repeated += 1
            in_window += any(0 <= kill - first < KILL_WINDOW_S for kill in kill_times)
        if row["outcome"] == "ok":
            ok += 1
            answered.setdefault(row["hash"], row["t"])
    return {"requests": requests, "ok_requests": ok, "repeated_requests": repeated, "repeated_in_kill_window": in_window}


def store_measures(store: Path) -> dict[str, int]:
    """Decisions, failed decisions and the critical path (attempts) from the store."""
    con = duckdb.connect(str(store), read_only=True)
    try:
        decisions, failed = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE status = 'failed') FROM decisions"
        ).fetchone()
        judged, judge_failed, judge_path = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE status <> 'ok'), coalesce(max(n_attempts), 0) FROM judgements"
        ).fetchone()
        play_path = con.execute(
            "SELECT coalesce(max(chain), 0) FROM (SELECT cell_id, sum(steps) AS chain FROM ("
            "  SELECT cell_id, round, kind, max(n_attempts) AS steps FROM decisions GROUP BY ALL) GROUP BY cell_id)"
        ).fetchone()[0]
    finally:
        con.close()
    return {
        "decisions": int(decisions) + int(judged),
        "failed_decisions": int(failed) + int(judge_failed),
        "critical_path_calls": int(play_path) + int(judge_path),
    }


def run_study(work: Path, port: int, small: bool, latency: float, cap: int, faults: bool, kills: int,
              seed: int, sizing: dict[str, Any] | None = None) -> dict[str, Any]:
    """One whole benchmark run in ``work`` against a server on ``port`` (the same port for runs
    that are compared: ``api_base`` is part of the agents' config, hence of the cell ids)."""
    configs = prepare(work, port, small, sizing)
    log = work / "sim_requests.jsonl"
    log.unlink(missing_ok=True)
    server = Server(port, log, latency, cap, faults, seed)
    try:
        plan = KillPlan(kills, 300 if small else 50_000, random.Random(seed))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        args = ["--cores", "8", "all", *configs]
        wall = run_snakemake(work, args, log, plan, cap)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    finally:
        server.stop()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    measures: dict[str, Any] = {**store_measures(work / "results" / "coopeval.duckdb"), **log_measures(log, plan.times)}
    bound = max(measures["critical_path_calls"] * latency, measures["ok_requests"] * latency / cap)
    measures.update(
        wall_s=round(wall, 1),
        bound_s=round(bound, 1),
        ratio=round(wall / bound, 3) if bound else None,
        cpu_s_per_call=round(cpu / max(measures["ok_requests"], 1), 4),
        requests_per_decision=round(measures["requests"] / max(measures["decisions"], 1), 4),
        kills=plan.fired,
    )
    return measures


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the options, run the benchmark (and the uninterrupted reference run when killing).

    Exits 1 on a failed decision, a repeated request outside a kill window, or a store that
    differs from the uninterrupted run's."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--small", action="store_true", help="test size; implies one kill unless --kills is given")
    p.add_argument("--kills", type=int, default=None, help="SIGKILLs of the run (each followed by a rerun)")
    p.add_argument("--faults", action="store_true", help="inject 5 %% 429, 1 %% 500, 0.5 %% timeouts")
    p.add_argument("--latency", type=float, default=None, help="seconds per answer (default 1; --small 0.05)")
    p.add_argument("--cap", type=int, default=64, help="requests in flight (server cap and api_calls)")
    p.add_argument("--seed", type=int, default=12)
    p.add_argument("--games", nargs="+", default=None, help="games instead of the grid's (a smaller study)")
    p.add_argument("--replicates", type=int, default=None, help="replicates instead of the grid's 3")
    p.add_argument("--per-job", type=int, default=None, help="max_concurrency of a job (default: the cap)")
    p.add_argument("--workdir", type=Path, default=None)
    a = p.parse_args(argv)
    kills = a.kills if a.kills is not None else (1 if a.small else 0)
    latency = a.latency if a.latency is not None else (0.05 if a.small else 1.0)
    root = a.workdir or Path(tempfile.mkdtemp(prefix="coopeval-scale-"))
    chosen = (("games", a.games), ("replicates", a.replicates), ("max_concurrency", a.per_job or a.cap))
    sizing = {k: v for k, v in chosen if v is not None}
    port = free_port()
    result = run_study(root / "run", port, a.small, latency, a.cap, a.faults, kills, a.seed, sizing)
    if kills:
        reference = run_study(root / "reference", port, a.small, latency, a.cap, False, 0, a.seed, sizing)
        ours = table_checksums(str(root / "run" / "results" / "coopeval.duckdb"), RESUME_VOLATILE)
        theirs = table_checksums(str(root / "reference" / "results" / "coopeval.duckdb"), RESUME_VOLATILE)
        result["reference_wall_s"] = reference["wall_s"]
        result["store_equal"] = ours == theirs
        result["tables_differing"] = sorted({t for t, *_ in set(ours) ^ set(theirs)})
    result["workdir"] = str(root)
    print(json.dumps(result), flush=True)
    harness_repeats = result["repeated_requests"] - result["repeated_in_kill_window"]
    failed = result["failed_decisions"] or harness_repeats or (kills and not result["store_equal"])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
