"""CPU time of the workflow's ``comparisons`` rule with and without the DR rank rows.

Usage::

    python benchmarks/comparisons_dr.py [--config config/config.yaml] [--repeat 1]

Plays the config's CoopEval cells with seeded noisy bots standing in for the models (every
``local/…`` or API model entry keeps its seat and name; its answer is a random distribution
over the actions, a different one at every decision, so every match-up's payoffs differ as a
temperature-1 model's do: the expensive case for the DR bootstrap, whose LP solves are one
per distinct resampled tensor), computes each cell's ``metrics`` as the ``evaluate`` rule
does, writes them as Parquet in a temporary folder and
times :func:`coopeval.studies.coopeval.comparison_outputs.write_comparisons` (the rule's body)
without and with ``dr_rule``. Prints one JSON line: cells, and per variant the rows written,
the DR rows, the CPU seconds (``time.process_time``, this process) and the deviation-rating
solves of the DR bootstrap (distinct resampled tensors) and their CPU seconds, by number S of
agent types.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    """Play the cells, time the comparisons with and without DR, print the figures."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--config", type=Path, default=ROOT / "config" / "config.yaml")
    p.add_argument("--repeat", type=int, default=1)
    a = p.parse_args()
    sys.path[:0] = [str(ROOT / "src"), str(ROOT)]
    import polars as pl
    import yaml

    from coopeval.agents.bots import UniformRandom
    from coopeval.agents.registry import agent_name
    from coopeval.core.io import write_parquet_atomic
    from coopeval.studies.coopeval.comparison_outputs import write_comparisons
    from coopeval.studies.coopeval.evaluate import evaluate_cell
    from coopeval.studies.coopeval.mechanisms.catalog import mechanism_info
    from coopeval.studies.coopeval.parse import matchup_scores
    from coopeval.studies.coopeval.tables import dr_bootstrap
    from coopeval.studies.coopeval.tables.roster import table_agents
    from tests.helpers import play_study_cell, study_cells

    class Noisy(UniformRandom):
        """Random integer percents over the actions, seeded per stand-in."""

        def __init__(self, name: str, seed: int) -> None:
            super().__init__("noisy")
            self.name = self.model = name
            self.rng = random.Random(seed)

        def action(self, fmt: Any, state: Any) -> dict[str, int]:
            n = int(state["n_actions"])
            cuts = sorted(self.rng.randint(0, 100) for _ in range(n - 1))
            shares = [b - a for a, b in zip([0, *cuts], [*cuts, 100], strict=True)]
            return {token: (shares[i] if i < n else 0) for i, token in enumerate(fmt.keys)}

    config = yaml.safe_load(a.config.read_text(encoding="utf-8"))
    models = [agent_name(e) for e in config["agents"] if not str(e["model"]).startswith("bot/")]
    evaluation = config["evaluation"]
    overlay = {k: config[k] for k in ("seed", "replicates", "games", "mechanisms", "mechanism_params", "agents") if k in config}
    specs = [s for s in study_cells("coopeval", overlay) if s.get("variant", "default") == "default"]
    with tempfile.TemporaryDirectory() as tmp:
        scores_files, metrics_files = [], []
        for i, spec in enumerate(specs):
            stand_ins = {name: Noisy(name, zlib.crc32(f"{i}:{name}".encode())) for name in models}
            tables, _ = play_study_cell("coopeval", spec, stand_ins)
            scores = matchup_scores(tables["decisions"], tables["matchups"])
            matchups = tables["matchups"]
            ids = {"cell_id": spec["cell_id"], "source": "ours", "run": matchups["run"][0], "mechanism": spec["mechanism"],
                   "game": matchups["game"][0]}
            metrics, _ = evaluate_cell(scores, matchups, ids, has_metagame=not mechanism_info(spec["mechanism"]).population_game,
                                       steps=evaluation["steps"], lr=evaluation["lr"], dr_rule=evaluation["dr_rule"],
                                       llm=table_agents(spec["agents"]).llm)
            scores_files.append(Path(tmp) / f"scores{i}.parquet")
            metrics_files.append(Path(tmp) / f"metrics{i}.parquet")
            write_parquet_atomic(scores, scores_files[-1])
            write_parquet_atomic(metrics, metrics_files[-1])
        out: dict[str, object] = {"config": str(a.config), "cells": len(specs)}
        solve, solves, solve_s = dr_bootstrap.deviation_ratings, Counter[str](), Counter[str]()

        def counted(tensor: Any, **kwargs: Any) -> Any:
            started = time.process_time()
            try:
                return solve(tensor, **kwargs)
            finally:
                solves[f"S={tensor.shape[0]}"] += 1
                solve_s[f"S={tensor.shape[0]}"] += time.process_time() - started

        dr_bootstrap.deviation_ratings = counted  # type: ignore[assignment]
        for label, rule in (("without_dr", None), ("with_dr", evaluation["dr_rule"])):
            times = []
            solves.clear()
            solve_s.clear()
            for _ in range(a.repeat):
                started = time.process_time()
                frame = write_comparisons(scores_files, metrics_files, Path(tmp) / "out.parquet", steps=evaluation["steps"],
                                          lr=evaluation["lr"], dr_rule=rule)
                times.append(round(time.process_time() - started, 2))
            out[label] = {"rows": frame.height, "dr_rows": frame.filter(pl.col("metric") == "DR").height, "cpu_s": times,
                          "dr_solves": dict(solves),
                          "dr_solve_cpu_s": {k: round(v, 2) for k, v in solve_s.items()}}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
