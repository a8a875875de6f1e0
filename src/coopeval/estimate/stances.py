"""The simulated runs of an estimate, one per :class:`~.standin.Stance`, two of them in a forked
process beside the first.

The cooperative run is played here; with ``processes`` > 1 a forked child plays, at the same
time, the failing run and the cells of the defecting run that it does not take from the
cooperative one (:func:`.simulate.borrowable`), and hands back what they recorded
(:class:`.simulate.PlayedCells`). This process then assembles each run (the borrowed cells, the
judge) exactly as :func:`.simulate.simulate` does in one process, in the same order, so the
estimate is the same either way (``tests/estimate/test_stances.py``). Configs whose cells call
no language model need one run only (every stance plays the bots alike).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import re
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any

from coopeval.agents.registry import is_scripted
from coopeval.estimate.simulate import (
    PlayedCells,
    Simulation,
    assemble,
    borrowable,
    play_cells,
    simulate,
)
from coopeval.estimate.standin import Stance

__all__ = ["POOL_THREAD", "StanceRuns", "fork_is_safe"]


def _play_others(config: Mapping[str, Any], every_replicate: bool, cells: Mapping[str, list[dict[str, Any]]], lent: set[str]) -> tuple[PlayedCells, PlayedCells]:
    """The forked child's part: the defecting run's own cells and the failing run."""
    defecting = play_cells(config, Stance.DEFECTING, every_replicate, cells=cells, borrowed=lent)
    return defecting, play_cells(config, Stance.FAILING, every_replicate, cells=cells)


POOL_THREAD = re.compile(r"polars-\d+|tokio-rt-worker")
"""Names (Linux ``comm``) of the threads polars starts at its first computation: its thread pool
and its async runtime."""


def fork_is_safe() -> bool:
    """Whether a fork of this process copies no lock another thread may hold: no Python thread
    runs but this one and polars has not started its thread pool (:data:`POOL_THREAD`; a forked
    child of a process whose pool runs deadlocks in its first polars computation). Read from
    ``/proc/self/task`` (Linux); False where it cannot be read. The threads of the allocators
    and of numpy's BLAS, started at import, hold no lock a fork copies (they fork safely)."""
    if threading.active_count() != 1:
        return False
    try:
        tasks = os.listdir("/proc/self/task")
        names = [Path(f"/proc/self/task/{task}/comm").read_text(encoding="utf-8").strip() for task in tasks]
    except OSError:
        return False
    return not any(POOL_THREAD.fullmatch(name) for name in names)


class StanceRuns:
    """The simulated runs of the validated ``config`` (see the module docstring): started at
    construction (the forked child, with ``processes`` > 1 and a config that calls a language
    model, when :func:`fork_is_safe`; else the runs are played here one after the other),
    collected by :meth:`runs`. Construct it before this process starts a thread or computes
    with polars."""

    def __init__(
        self, config: Mapping[str, Any], cells: Mapping[str, list[dict[str, Any]]], every_replicate: bool = False, processes: int = 1
    ) -> None:
        self.config, self.cells, self.every_replicate = config, cells, every_replicate
        from coopeval.pipeline.studies import configured_studies

        calls_models = any(not is_scripted(m) for study in configured_studies(config) for m in study.models(config))
        self.lent = set() if every_replicate else borrowable(config, cells)
        self._pool: ProcessPoolExecutor | None = None
        self._future: Any = None
        if processes > 1 and calls_models and fork_is_safe():
            self._pool = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork"))
            self._future = self._pool.submit(_play_others, config, every_replicate, cells, self.lent)
        self.forked = self._future is not None
        """Whether the defecting and failing runs are played in a forked child."""

    def runs(self, after_first: Callable[[Simulation], None] | None = None) -> dict[Stance, Simulation]:
        """Each stance's :class:`~.simulate.Simulation`: the cooperative run first (then
        ``after_first`` is called with it, e.g. to count its prompts while the others finish),
        the same object for every stance when it called no language model."""
        try:
            first = simulate(self.config, Stance.COOPERATIVE, self.every_replicate, cells=self.cells)
            if after_first is not None:
                after_first(first)
            if all(is_scripted(m) for m in first.calls["model"].unique().to_list()):  # nothing to stand in for
                return dict.fromkeys(Stance, first)
            others: tuple[PlayedCells, PlayedCells] | None = None
            if self._future is not None:
                with contextlib.suppress(BrokenProcessPool):  # the child died (e.g. killed): its runs are played here
                    others = self._future.result()
            defecting, failing = others or _play_others(self.config, self.every_replicate, self.cells, self.lent)
            return {
                Stance.COOPERATIVE: first,
                Stance.DEFECTING: assemble(self.config, defecting, None if self.every_replicate else first),
                Stance.FAILING: assemble(self.config, failing),
            }
        finally:
            if self._pool is not None:
                self._pool.shutdown(wait=True, cancel_futures=True)
