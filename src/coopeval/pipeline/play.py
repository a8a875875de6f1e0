"""The ``play`` job of any study: play one cell and write its Parquet records.

The mid-run journal (``results/.journal/<cell>.jsonl``, never a declared output) gets one line
per attempt and per failed decision, flushed at once. Declared outputs are written to a
temporary name and moved into place only when the whole cell has finished (docs/protocol/engineering.md#journal);
a killed job therefore leaves no partial output, and its rerun replays every answer already
received from the response cache. A second executor of the same cell (a resubmission while the
first still runs) waits for the first and then replays its answers, or stops naming it
(:mod:`coopeval.cache.cell_lock`, ``COOPEVAL_CELL_LOCK``), so no answer is paid twice.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coopeval.agents.maker import CallStats
from coopeval.agents.registry import missing_key_error
from coopeval.cache.cell_lock import cell_lock
from coopeval.cache.response_cache import ResponseCache
from coopeval.core.errors import ConfigError
from coopeval.core.io import write_parquet_atomic
from coopeval.core.journal import Journal
from coopeval.core.prompts import PromptLibrary
from coopeval.pipeline.studies import get_study
from coopeval.studies.base import PlayInputs


def run_cell(
    study: str,
    spec: Mapping[str, Any],
    outputs: Mapping[str, str],
    cache_dir: str,
    journal_dir: str,
    prompts_dir: str,
    max_concurrency: int = 8,
    max_usd: float = 0.0,
    state_dir: str | None = None,
) -> CallStats:
    """Snakemake entry point: play the cell of ``study`` and write one Parquet file per table.

    ``outputs`` maps each of the study's ``play_tables`` to its path; the study may keep
    resumable state below ``<state_dir>/<study>/`` (default ``state_dir``: ``.state`` beside
    ``journal_dir``, i.e. ``results/.state`` in the workflow). Prints one progress line
    with the call counters when the cell is done.

    Raises
    ------
    KeyError
        For an unknown study.
    ConfigError
        An API key the cell's models need is not set (before any call; the variable named).
    coopeval.cache.cell_lock.CellBusyError
        Another process plays the cell and ``COOPEVAL_CELL_LOCK=fail``.
    """
    started = time.monotonic()
    runner = get_study(study)
    if (missing := missing_key_error(runner.cell_models(spec))) is not None:
        raise ConfigError(f"[{runner.label(spec)}] {missing}")
    with cell_lock(cache_dir, f"play-{study}-{spec['cell_id']}"):
        journal = Journal(Path(journal_dir) / f"{spec['cell_id']}.jsonl")
        cache = ResponseCache(cache_dir)
        try:
            own_state = str(Path(state_dir or Path(journal_dir).parent / ".state") / study)
            inputs = PlayInputs(cache, PromptLibrary(prompts_dir), journal, max_concurrency, max_usd, own_state)
            tables, stats = runner.play(spec, inputs)
        finally:
            journal.close()
            cache.close()
        for table, path in outputs.items():
            write_parquet_atomic(tables[table], path)
    print(
        f"[{runner.label(spec)}] done in {time.monotonic() - started:.1f}s: "
        f"{stats.calls_made} model calls, {stats.cache_hits} cache hits, {stats.bot_calls} bot answers, {stats.attempts} attempts, "
        f"{stats.failed_decisions} failed decisions, ${stats.cost_usd:.4f}"
        + (f"; {stats.replayed} cached calls sent again to rebuild the embedded runtime's state "
           f"({stats.replay_mismatches} with another text)" if stats.replayed else ""),
        flush=True,
    )
    return stats
