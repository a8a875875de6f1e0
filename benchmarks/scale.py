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
  ``repeated_requests``: requests whose hash had already been answered ``ok``;
  ``repeated_lost_at_kill`` those whose first answer had not reached the client's response cache
  when a SIGKILL came (checked by the answer's response id in a snapshot of the cache taken right
  after the kill: the answer was in flight, so asking again is unavoidable);
  ``harness_repeats`` every other repeat, a call paid twice (must be 0);
* ``bound_s`` = max(critical path × latency, ok requests × latency / cap), where the critical
  path is the longest chain of dependent attempts: per cell, the sum over its (round, kind)
  steps of the most attempts any decision of that step needed, plus the judge's longest
  decision (the judge starts after every cell); ``ratio`` = wall_s / bound_s;
* ``requests_per_decision``: requests / decisions (transport retries and re-asks push it above 1);
* ``cpu_ms_per_call`` (and ``cpu_s_per_call``): CPU milliseconds (seconds) of snakemake and
  its jobs (user + system, the server excluded) per ok request, start-up, store, figures and
  tables included (``benchmarks/call_overhead.py`` measures one play job's per-call path alone);
* ``failed`` (= ``failed_decisions``) and ``repeats`` (= ``harness_repeats``): the two counts
  that must be 0;
* ``estimate_decisions_min``/``_max``, ``estimate_input_tokens``: ``coopeval estimate`` of the
  run's config (issue 24), and ``decisions_per_estimate``, ``prompt_tokens_per_estimate``: the
  recorded decisions and first-attempt prompt tokens (the simulated provider's counts) over
  the estimate's ``decisions_max`` and input tokens;
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
import sqlite3
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import duckdb
import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from store_checksums import table_checksums  # noqa: E402

from coopeval.core.schemas import TRANSPORT_COLUMNS  # noqa: E402
from coopeval.simserver.process import free_port, start_server, stop_server  # noqa: E402
from coopeval.simserver.server import response_id  # noqa: E402

# Columns that legitimately differ between an interrupted and an uninterrupted run: wall-clock
# values, and whether an attempt came from the cache (a rerun replays what the killed run paid).
RESUME_VOLATILE = {"latency_s", "created_at", "value_version", "cache_hit", *TRANSPORT_COLUMNS}
# profiles: the workflow profile (rerun-incomplete, keep-going) applies as for a user
COPIED = ("Snakefile", "workflow", "config", "resources", "src", "profiles")
FAULTS = {"429": 0.05, "500": 0.01, "timeout": 0.005}
SMALL_OVERLAY: dict[str, Any] = {
    "replicates": 1,
    "games": ["prisoners_dilemma"],
    "mechanisms": ["NoMechanism", "Repetition", "ReputationFirstOrder", "Mediation", "Contracting"],
    "mechanism_params": {"Repetition": {"num_rounds": 4}},
}


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
        options = ["--latency", str(latency), "--cap", str(cap), "--seed", str(seed), "--timeout-hang", "8",
                   "--policy", "qwen/qwen3-30b-a3b-instruct-2507=defecting",
                   "--policy", "anthropic/claude-sonnet-4.5=cooperative"]
        if faults:
            options += [arg for name, rate in FAULTS.items() for arg in ("--fault", f"{name}={rate}")]
        self.log = log
        self.proc = start_server(port, log, options, env={**os.environ, "PYTHONPATH": str(REPO / "src")})

    def stop(self) -> None:
        """Stop the server."""
        stop_server(self.proc)


class LogTail:
    """Answered requests in the server's request log so far, reading only the lines appended
    since the last call (the log of a full run is ~10 MB; rereading it ten times a second would
    take CPU from the run being measured)."""

    def __init__(self, log: Path) -> None:
        self.log = log
        self.offset = 0
        self.ok = 0

    def ok_count(self) -> int:
        """Lines with outcome ``ok`` (complete lines only)."""
        if not self.log.exists():
            return self.ok
        with self.log.open("rb") as f:
            f.seek(self.offset)
            chunk = f.read()
        complete = chunk[: chunk.rfind(b"\n") + 1]
        self.offset += len(complete)
        self.ok += complete.count(b'"outcome": "ok"')
        return self.ok


class KillPlan:
    """When to SIGKILL the run: a list of phases (``play``, ``judge``, ``store``, cycled for
    more kills). ``play`` fires once the request log holds a drawn number of answers; ``judge``
    a drawn 0.5-3 s after the first judge shard's log is seen; ``store`` as soon as the store's temporary
    file exists (the store is being built)."""

    PHASES = ("play", "judge", "store")

    def __init__(self, kills: int, expected_ok: int, rng: random.Random) -> None:
        self.pending = [self.PHASES[k % 3] for k in range(kills)]
        self.play_at = rng.randint(expected_ok // 10, expected_ok // 2)
        self.judge_delay = rng.uniform(0.5, 3.0)
        self.fired: list[str] = []
        self.judge_seen: float | None = None
        self.kills: list[tuple[float, set[str]]] = []
        self.tail: LogTail | None = None

    def due(self, work: Path, log: Path) -> bool:
        """Whether the next planned kill is due now."""
        if not self.pending:
            return False
        phase = self.pending[0]
        if phase == "play":
            if self.tail is None:
                self.tail = LogTail(log)
            return self.tail.ok_count() >= self.play_at
        if phase == "judge":
            judge_logs = work / "results" / "logs" / "judge"  # one log per judge shard
            if self.judge_seen is None and judge_logs.is_dir() and any(judge_logs.iterdir()):
                self.judge_seen = time.monotonic()
            return self.judge_seen is not None and time.monotonic() - self.judge_seen >= self.judge_delay
        return (work / "results" / "coopeval.duckdb.tmp").exists()

    def fire(self, cache_dir: Path) -> None:
        """Record the kill: its phase, Unix time and the response ids in the cache right after it."""
        self.fired.append(self.pending.pop(0))
        self.kills.append((time.time(), cached_response_ids(cache_dir)))


def sim_env(work: Path, cap: int) -> dict[str, str]:
    """The environment of every snakemake run of the benchmark: a dummy key, litellm offline,
    ``cap`` run-wide provider slots, and the copied sources first on the path (the jobs import
    the work folder's ``src``, not an installed coopeval)."""
    return {**os.environ, "OPENAI_API_KEY": "sim-key", "LITELLM_OFFLINE_MODE": "true",
            "LITELLM_LOCAL_MODEL_COST_MAP": "True", "COOPEVAL_PROVIDER_SLOTS": str(cap),
            "COOPEVAL_PROVIDER_SLOTS_DIR": str(work / "results" / ".slots"), "PYTHONPATH": str(work / "src")}


def timed_snakemake(work: Path, args: Sequence[str], cap: int) -> float:
    """Run ``snakemake *args`` in ``work`` to completion; return its wall seconds.

    Raises
    ------
    RuntimeError
        snakemake exited non-zero (the message names the log, ``snakemake_runs.log``).
    """
    started = time.monotonic()
    with (work / "snakemake_runs.log").open("a", encoding="utf-8") as out:
        code = subprocess.run([sys.executable, "-m", "snakemake", *args], cwd=work, env=sim_env(work, cap),
                              stdout=out, stderr=out).returncode
    if code != 0:
        raise RuntimeError(f"snakemake {' '.join(args)} failed (exit {code}); see {work / 'snakemake_runs.log'}")
    return time.monotonic() - started


def replay_measures(work: Path, configs: Sequence[str], log: Path, cap: int) -> dict[str, Any]:
    """Replay every play job of the finished run from the response cache
    (``--forcerun play_<study> --until play_<study>``, the server still up) and measure it:
    ``replay_decisions`` (rows of every play job's ``decisions.parquet``), ``replay_s`` (wall
    seconds of that snakemake run, start-up included), ``replay_decisions_per_s`` and
    ``replay_requests`` (requests the server saw meanwhile; 0 unless a call missed the cache)."""
    studies = yaml.safe_load((work / "config" / "paper_sim.yaml").read_text(encoding="utf-8"))["studies"]
    rules = [f"play_{study}" for study in studies]
    before = len(log.read_bytes().splitlines())
    wall = timed_snakemake(work, ["--cores", "8", *configs, "--forcerun", *rules, "--until", *rules, "--", "all"], cap)
    requests = len(log.read_bytes().splitlines()) - before
    con = duckdb.connect()
    try:
        pattern = str(work / "results" / "play" / "**" / "decisions.parquet")
        decisions = int(con.execute("SELECT count(*) FROM read_parquet(?)", [pattern]).fetchone()[0])
    finally:
        con.close()
    return {"replay_decisions": decisions, "replay_s": round(wall, 1),
            "replay_decisions_per_s": round(decisions / wall, 1), "replay_requests": requests}


def run_snakemake(work: Path, args: Sequence[str], log: Path, plan: KillPlan, cap: int) -> float:
    """Run snakemake in ``work`` with ``cap`` run-wide provider slots, SIGKILLing its process
    group when ``plan`` says so and rerunning (after ``--unlock``) each time. Returns the wall
    seconds of all runs."""
    env = sim_env(work, cap)
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
                    plan.fire(work / "results" / ".cache")
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


def cached_response_ids(cache_dir: Path) -> set[str]:
    """Provider response ids of every reply in the response cache at ``cache_dir`` (its
    ``cache.db``, read-only, plus replies kept in ``unwritten.jsonl`` for the next open): the
    answers that reached the client."""
    ids: set[str] = set()
    db = cache_dir / "cache.db"
    if db.exists():
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        try:
            for (value,) in con.execute("SELECT value FROM Cache WHERE value IS NOT NULL"):
                ids.add(json.loads(zlib.decompress(value)).get("response_id", ""))
        finally:
            con.close()
    unwritten = cache_dir / "unwritten.jsonl"
    if unwritten.exists():
        for line in unwritten.read_text(encoding="utf-8").splitlines():
            ids.add(json.loads(line)["value"].get("response_id", ""))
    return ids


def log_measures(log: Path, kills: Sequence[tuple[float, set[str]]] = ()) -> dict[str, int]:
    """From the request log: requests, answered requests, requests repeated after an answer
    (``repeated_requests``) and, of those, the ones whose previous answer never reached the
    client (``repeated_lost_at_kill``): a SIGKILL came after that answer's request started and
    before the repeat, and the cache snapshot taken right after the kill (``kills``: Unix time,
    :func:`cached_response_ids`) lacks the answer's
    :func:`~coopeval.simserver.server.response_id` (in flight, or received but not yet written,
    when the process died). A log line's ``t`` is when the answer was sent, so its request
    started ``latency_s`` earlier: an answer sent just after a kill was asked by the killed
    process. Every other repeat is a call paid twice by the harness (``harness_repeats``)."""
    asked: dict[str, float] = {}  # hash -> start of the request of its latest answer
    requests = ok = repeated = lost = 0
    for line in log.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        requests += 1
        previous = asked.get(row["hash"])
        if previous is not None:
            repeated += 1
            kill = next(((t, ids) for t, ids in kills if previous <= t <= row["t"]), None)
            lost += kill is not None and response_id(row["hash"]) not in kill[1]
        if row["outcome"] == "ok":
            ok += 1
            asked[row["hash"]] = row["t"] - float(row.get("latency_s", 0.0))
    return {"requests": requests, "ok_requests": ok, "repeated_requests": repeated,
            "repeated_lost_at_kill": lost, "harness_repeats": repeated - lost}


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
        prompt_tokens = con.execute(
            "SELECT coalesce(sum(prompt_tokens), 0) FROM llm_calls WHERE attempt = 0 AND NOT starts_with(model, 'bot/')"
        ).fetchone()[0]
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
        "prompt_tokens": int(prompt_tokens),
    }


def estimate_measures(estimate: dict[str, Any], measures: dict[str, Any]) -> dict[str, Any]:
    """``coopeval estimate --json`` of the run's config beside what the run recorded (issue 24):
    the estimate's decision range and input tokens (first attempts), and the recorded decisions
    and first-attempt prompt tokens (as the simulated provider reported them) as fractions of
    the estimate's ``decisions_max`` and input tokens."""
    low = sum(int(s["decisions_min"]) for s in estimate["studies"].values())
    high = sum(int(s["decisions_max"]) for s in estimate["studies"].values())
    tokens = int(estimate["totals"]["input_tokens"])
    return {
        "estimate_decisions_min": low,
        "estimate_decisions_max": high,
        "estimate_input_tokens": tokens,
        "decisions_per_estimate": round(measures["decisions"] / high, 4) if high else None,
        "prompt_tokens_per_estimate": round(measures["prompt_tokens"] / tokens, 4) if tokens else None,
    }


def run_estimate(work: Path, configs: Sequence[str]) -> dict[str, Any]:
    """``coopeval estimate --json`` in the workflow copy ``work`` for the run's ``configs``
    (``--configfile a b`` as passed to snakemake)."""
    files = [f"--configfile={c}" for c in configs if c != "--configfile"]
    done = subprocess.run([sys.executable, "-m", "coopeval.cli", "estimate", "--json", *files], cwd=work,
                          env=sim_env(work, 1), capture_output=True, text=True, check=True)
    return dict(json.loads(done.stdout))


def run_study(work: Path, port: int, small: bool, latency: float, cap: int, faults: bool, kills: int,
              seed: int, sizing: dict[str, Any] | None = None, replay: bool = False) -> dict[str, Any]:
    """One whole benchmark run in ``work`` against a server on ``port`` (the same port for runs
    that are compared: ``api_base`` is part of the agents' config, hence of the cell ids).
    Before the run, ``dry_run_s`` times ``snakemake -n all`` on the empty work folder; with
    ``replay``, :func:`replay_measures` follows the run."""
    configs = prepare(work, port, small, sizing)
    log = work / "sim_requests.jsonl"
    log.unlink(missing_ok=True)
    dry_run = timed_snakemake(work, ["-n", "all", *configs], cap)
    server = Server(port, log, latency, cap, faults, seed)
    extra: dict[str, Any] = {"dry_run_s": round(dry_run, 2)}
    try:
        # the play kill fires after 10-50 % of this many answers: early enough for any sizing
        plan = KillPlan(kills, 300 if small else 4_000, random.Random(seed))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        args = ["--cores", "8", "all", *configs]
        wall = run_snakemake(work, args, log, plan, cap)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if replay:
            extra.update(replay_measures(work, configs, log, cap))
    finally:
        server.stop()
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    # kept beside the request log, so the repeats can be classified again after the run
    (work / "kills.json").write_text(json.dumps(
        [{"phase": phase, "t": t, "cached_response_ids": sorted(ids)} for phase, (t, ids) in zip(plan.fired, plan.kills, strict=False)]
    ), encoding="utf-8")
    measures: dict[str, Any] = {**store_measures(work / "results" / "coopeval.duckdb"), **log_measures(log, plan.kills)}
    measures.update(estimate_measures(run_estimate(work, configs), measures))
    bound = max(measures["critical_path_calls"] * latency, measures["ok_requests"] * latency / cap)
    measures.update(
        wall_s=round(wall, 1),
        bound_s=round(bound, 1),
        ratio=round(wall / bound, 3) if bound else None,
        cpu_s_per_call=round(cpu / max(measures["ok_requests"], 1), 4),
        cpu_ms_per_call=round(1000 * cpu / max(measures["ok_requests"], 1), 2),
        failed=measures["failed_decisions"],
        repeats=measures["harness_repeats"],
        requests_per_decision=round(measures["requests"] / max(measures["decisions"], 1), 4),
        kills=plan.fired,
        **extra,
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
    p.add_argument("--port", type=int, default=None,
                   help="the server's port (default: a free one); runs compared across invocations need the same")
    p.add_argument("--reference", type=Path, default=None,
                   help="with kills: the work folder of an earlier uninterrupted run (same port, seed and sizing) "
                        "to compare with, instead of running one")
    p.add_argument("--replay", action="store_true",
                   help="after the run, replay every play job from the cache (always with --small)")
    a = p.parse_args(argv)
    if a.reference is not None and not (a.reference / "results" / "coopeval.duckdb").is_file():
        # checked now, not after the killed run (~40 min at full scale)
        p.error(f"--reference: {a.reference} holds no results/coopeval.duckdb; pass the `run` folder inside "
                "the earlier run's --workdir")
    kills = a.kills if a.kills is not None else (1 if a.small else 0)
    latency = a.latency if a.latency is not None else (0.05 if a.small else 1.0)
    root = a.workdir or Path(tempfile.mkdtemp(prefix="coopeval-scale-"))
    chosen = (("games", a.games), ("replicates", a.replicates), ("max_concurrency", a.per_job or a.cap))
    sizing = {k: v for k, v in chosen if v is not None}
    port = a.port or free_port()
    result = run_study(root / "run", port, a.small, latency, a.cap, a.faults, kills, a.seed, sizing, a.replay or a.small)
    if kills:
        reference_dir = a.reference or root / "reference"
        if a.reference is None:
            result["reference_wall_s"] = run_study(reference_dir, port, a.small, latency, a.cap, False, 0, a.seed,
                                                   sizing)["wall_s"]
        ours = table_checksums(str(root / "run" / "results" / "coopeval.duckdb"), RESUME_VOLATILE)
        theirs = table_checksums(str(reference_dir / "results" / "coopeval.duckdb"), RESUME_VOLATILE)
        result["reference"] = str(reference_dir)
        result["store_equal"] = ours == theirs
        result["tables_differing"] = sorted({t for t, *_ in set(ours) ^ set(theirs)})
    result["workdir"] = str(root)
    print(json.dumps(result), flush=True)
    failed = result["failed_decisions"] or result["harness_repeats"] or (kills and not result["store_equal"])
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
