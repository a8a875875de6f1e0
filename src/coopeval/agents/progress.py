"""Progress lines of long jobs (play cells, the judge), printed to the job's log."""

from __future__ import annotations

import sys
import time

from coopeval.agents.maker import DecisionMaker


class Progress:
    """Progress lines on stderr for long jobs: one line per finished unit, at most every
    ``interval`` seconds (and always for the last unit), with the maker's call counters.

    Example line: ``[Repetition/stag_hunt/r1] 4/12 matchups, 30 model calls, 0 cache hits, 0 failed decisions, 0 truncated, 41s``.
    """

    def __init__(self, label: str, total: int, maker: DecisionMaker, unit: str = "matchups", interval: float = 2.0) -> None:
        self.label, self.total, self.maker, self.unit, self.interval = label, total, maker, unit, interval
        self.done = 0
        self.started = time.monotonic()
        self._last = 0.0

    def step(self, failed: bool = False) -> None:
        """Count one finished unit; print a line if due."""
        self.done += 1
        now = time.monotonic()
        if self.done == self.total or now - self._last >= self.interval:
            self._last = now
            s = self.maker.stats
            print(
                f"[{self.label}] {self.done}/{self.total} {self.unit}, {s.calls_made} model calls, "
                f"{s.cache_hits} cache hits, {s.failed_decisions} failed decisions, "
                f"{s.truncated} truncated, "
                f"{now - self.started:.0f}s",
                file=sys.stderr,
                flush=True,
            )
