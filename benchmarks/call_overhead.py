"""Harness CPU per model call and replay speed of ONE CoopEval cell, in one process (issue 32).

Usage::

    python benchmarks/call_overhead.py                          # Repetition × Prisoner's Dilemma
    python benchmarks/call_overhead.py --mechanism Contracting --game public_goods
    py-spy record -o play.svg -- python benchmarks/call_overhead.py   # where the time goes

Plays one cell of ``config/paper_sim.yaml`` (six simulated agents, replicate 0) against the
simulated provider (``python -m coopeval.simserver``, latency 0 by default, in its own process)
with :func:`coopeval.pipeline.play.run_cell`, exactly as a play job does, with an empty response
cache; then plays it again from that cache (``--replays`` times). Prints one JSON line:

* ``calls``, ``decisions``: model calls made by the first play and decision rows it wrote;
* ``cpu_ms_per_call``: CPU (user + system) of this process and the children it waited for
  (the server excluded) during the first play, per call: what a play job spends per call
  once it has started (the imports of the benchmark's own set-up excluded, litellm's import
  on the first call included);
* ``replay_s``, ``replay_decisions_per_s``, ``replay_cpu_ms_per_decision``: the best of the
  replays (every answer from the cache, Parquet written as a job does).

Unlike ``benchmarks/scale.py`` (the whole workflow: Snakemake, one process per job, store,
figures) this isolates the per-call path: prompt, cache, litellm, parsing, rows.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    """CPU seconds of this process and its finished children (a job's helper processes; the
    server is reaped only after the measurements, so its CPU never counts)."""
    return sum(u.ru_utime + u.ru_stime for u in map(resource.getrusage, (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)))


def cell_spec(port: int, mechanism: str, game: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The validated paper_sim config (agents pointed at ``port``) and the spec of its cell
    ``mechanism`` × ``game``, replicate 0.

    Raises
    ------
    SystemExit
        No such cell in the config (the valid mechanisms and games are named).
    """
    import yaml

    from coopeval.pipeline.config import merge_overlay, validate_config
    from coopeval.pipeline.studies import all_cells

    config: dict[str, Any] = {}
    for name in ("config.yaml", "paper_sim.yaml"):
        config = merge_overlay(config, yaml.safe_load((REPO / "config" / name).read_text(encoding="utf-8")))
    for spec in [*config["agents"], config["judge"]]:
        spec["params"]["api_base"] = f"http://127.0.0.1:{port}/v1"
    config.update(studies=["coopeval"], replicates=1)
    config = validate_config(config)
    cells = all_cells(config)["coopeval"]
    for cell in cells:
        if cell["mechanism"] == mechanism and cell["game"] == game:
            return config, cell
    raise SystemExit(
        f"no cell {mechanism} × {game}; mechanisms {sorted({c['mechanism'] for c in cells})}, "
        f"games {sorted({c['game'] for c in cells})}"
    )


def play(spec: dict[str, Any], config: dict[str, Any], cache_dir: Path, out: Path) -> tuple[Any, float, float]:
    """Play the cell once as a play job does; return (stats, wall s, CPU s)."""
    from coopeval.pipeline.play import run_cell
    from coopeval.pipeline.studies import get_study, prompts_dir

    study = get_study("coopeval")
    outputs = {table: str(out / f"{table}.parquet") for table in study.play_tables}
    wall, cpu = time.perf_counter(), _cpu()
    stats = run_cell(
        study="coopeval",
        spec=spec,
        outputs=outputs,
        cache_dir=str(cache_dir),
        journal_dir=str(out / "journal"),
        prompts_dir=str(prompts_dir(study, config)),
        max_concurrency=int(config["max_concurrency"]),
    )
    return stats, time.perf_counter() - wall, _cpu() - cpu


def main(argv: list[str] | None = None) -> None:
    """Parse the options, play the cell (calls, then replays) and print the JSON line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--mechanism", default="Repetition")
    p.add_argument("--game", default="prisoners_dilemma")
    p.add_argument("--latency", type=float, default=0.0, help="the server's seconds per answer")
    p.add_argument("--replays", type=int, default=3)
    a = p.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    import os

    os.environ.setdefault("OPENAI_API_KEY", "sim-key")
    from coopeval.core.environment import use_offline_litellm
    from coopeval.simserver.process import free_port, start_server, stop_server

    use_offline_litellm()
    port = free_port()
    config, spec = cell_spec(port, a.mechanism, a.game)
    with tempfile.TemporaryDirectory(prefix="coopeval-overhead-") as tmp:
        work = Path(tmp)
        server = start_server(port, work / "requests.jsonl", ["--latency", str(a.latency)])
        try:
            stats, wall, cpu = play(spec, config, work / "cache", work / "first")
            replays = [play(spec, config, work / "cache", work / f"replay{i}") for i in range(a.replays)]
        finally:
            stop_server(server)
        import duckdb

        decisions = int(duckdb.sql(f"SELECT count(*) FROM '{work / 'first' / 'decisions.parquet'}'").fetchone()[0])  # type: ignore[index]
    best = min(replays, key=lambda r: r[1]) if replays else None
    result = {
        "cell": f"{a.mechanism}/{a.game}",
        "calls": stats.calls_made,
        "decisions": decisions,
        "play_s": round(wall, 2),
        "cpu_ms_per_call": round(1000 * cpu / max(stats.calls_made, 1), 2),
    }
    if best is not None:
        result.update(
            replay_s=round(best[1], 3),
            replay_decisions_per_s=round(decisions / best[1], 1),
            replay_cpu_ms_per_decision=round(1000 * best[2] / max(decisions, 1), 3),
            replay_calls=sum(r[0].calls_made for r in replays),
        )
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
