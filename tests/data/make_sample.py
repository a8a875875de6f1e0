"""Rebuild ``tests/data`` from the full reference folder (``../shared`` beside the clone).

Usage: ``python tests/data/make_sample.py [SHARED_DIR]`` (default ``$COOPEVAL_SHARED_DIR`` or
``../shared``). Copies the oracle vectors and a small
sample of the released run1 data (Xiao215/CoopEval, arXiv 2604.15267; see
``SHARED_DIR/data/README.md`` for provenance), so that a fresh clone runs the tests without
``../shared``:

* every experiment's small files: ``config.json``, ``matchup_payoffs.json``,
  ``agent_average_payoff.json``, ``replicator_dynamics_fitness.json``,
  ``deviation_ratings.json`` and the design files (byte-identical copies);
* ``population_checkpoints.json`` (derived): the recorded replicator population after
  0, 1, 2, 10, 100 and 1000 updates, instead of the 1001-step ``population_history.json``;
* ``records.jsonl`` of the :data:`RECORD_EXPERIMENTS` only (byte-identical copies);
* ``run1_responses_sample.json.gz`` (derived): the 203 moves with a recorded ``response``
  sampled by ``tests/decisions/test_decisions_run1.py``.

The full folder (22 MiB) stays necessary only for the full-run checks, which say so.
"""

from __future__ import annotations

import dataclasses
import gzip
import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
SMALL_FILES = (
    "config.json",
    "matchup_payoffs.json",
    "agent_average_payoff.json",
    "replicator_dynamics_fitness.json",
    "deviation_ratings.json",
    "mediator_design.json",
    "contract_design.json",
)
CHECKPOINTS = (0, 1, 2, 10, 100, 1000)
RECORD_EXPERIMENTS = ("no_mechanism_prisoners_dilemma", "reputation_first_order_prisoners_dilemma")


def main(shared: Path) -> None:
    """Write the sample under ``tests/data`` from ``shared``."""
    run1 = shared / "data" / "coopeval_run1"
    (HERE / "oracles").mkdir(exist_ok=True)
    shutil.copyfile(shared / "oracles" / "dev_vectors.json", HERE / "oracles" / "dev_vectors.json")
    out = HERE / "coopeval_run1"
    if out.exists():
        shutil.rmtree(out)
    for folder in sorted(p for p in run1.iterdir() if p.is_dir()):
        target = out / folder.name
        target.mkdir(parents=True)
        for name in SMALL_FILES:
            if (folder / name).is_file():
                shutil.copyfile(folder / name, target / name)
        history_path = folder / "population_history.json"
        if history_path.is_file():
            history = json.loads(history_path.read_text(encoding="utf-8"))
            checkpoints = {"steps": list(CHECKPOINTS), "populations": [history[s] for s in CHECKPOINTS]}
            (target / "population_checkpoints.json").write_text(json.dumps(checkpoints, indent=1) + "\n")
        if folder.name in RECORD_EXPERIMENTS:
            shutil.copyfile(folder / "records.jsonl", target / "records.jsonl")
    from tests.decisions.test_decisions_run1 import sample_moves

    moves = [dataclasses.asdict(m) for m in sample_moves(run1)]
    with gzip.GzipFile(HERE / "run1_responses_sample.json.gz", "wb", mtime=0) as handle:
        handle.write((json.dumps(moves, indent=0) + "\n").encode("utf-8"))


if __name__ == "__main__":
    sys.path[:0] = [str(REPO / "src"), str(REPO)]
    from tests.shared_data import shared_path

    main(Path(sys.argv[1]) if len(sys.argv) > 1 else shared_path())
