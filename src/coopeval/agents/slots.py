"""One cap on provider calls in flight across every job of a run (issue 12 item 3).

Snakemake runs each cell in its own process, so a per-job semaphore alone cannot keep the
whole run under a provider's limit without reserving capacity a job may not use. With
``COOPEVAL_PROVIDER_SLOTS=N`` (and optionally ``COOPEVAL_PROVIDER_SLOTS_DIR``, default
``results/.slots``) every remote call first takes one of N slots, each an exclusive
``flock`` on a file of that folder: at most N calls are in flight over all processes, a
free slot goes to whichever job asks first, and a killed job's slots are released by the
kernel. Unset, nothing is limited beyond the per-job semaphore.

Within a process, waiters line up behind one asyncio lock and only the first in line polls the
lock files: with hundreds of calls waiting in each of eight jobs, polling by every waiter would
spend a core on ``flock`` calls.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import random
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from coopeval.core.environment import env_value

SLOTS_ENV = "COOPEVAL_PROVIDER_SLOTS"
SLOTS_DIR_ENV = "COOPEVAL_PROVIDER_SLOTS_DIR"
_MAX_WAIT_S = 0.01  # longest pause between two scans of the slots (seconds)


class ProviderSlots:
    """``n`` cross-process slots backed by lock files in ``directory``.

    Raises
    ------
    ValueError
        ``n`` < 1.
    """

    def __init__(self, directory: str | Path, n: int) -> None:
        if n < 1:
            raise ValueError(f"{SLOTS_ENV} must be a positive integer, not {n}")
        self.n = n
        folder = Path(directory)
        folder.mkdir(parents=True, exist_ok=True)
        self._fds = [os.open(folder / f"slot_{i:04d}", os.O_RDWR | os.O_CREAT, 0o600) for i in range(n)]
        self._held: set[int] = set()
        # the line of this process's waiters, one per event loop (tests run several loops)
        self._lines: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()

    def _try(self, i: int) -> bool:
        if i in self._held:  # flock does not exclude a second lock through the same descriptor
            return False
        try:
            fcntl.flock(self._fds[i], fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        self._held.add(i)
        return True

    def _scan(self) -> int | None:
        """Take the first free slot, scanning all from a random start; None if all are held."""
        start = random.randrange(self.n)
        return next((i for i in (*range(start, self.n), *range(start)) if self._try(i)), None)

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        """Hold one slot for the duration of the block (waits while all are taken: the first
        waiter of this process scans the slots every 2-10 ms, the others wait behind it)."""
        line = self._lines.setdefault(asyncio.get_running_loop(), asyncio.Lock())
        async with line:
            wait = 0.002
            while (taken := self._scan()) is None:
                await asyncio.sleep(wait)
                wait = min(wait * 2, _MAX_WAIT_S)
        try:
            yield
        finally:
            fcntl.flock(self._fds[taken], fcntl.LOCK_UN)
            self._held.discard(taken)

    def close(self) -> None:
        """Close the lock files (releasing any slot still held)."""
        for fd in self._fds:
            os.close(fd)
        self._fds = []


def slots_from_env() -> ProviderSlots | None:
    """The run's slots from ``COOPEVAL_PROVIDER_SLOTS`` (unset or empty → None) in
    ``COOPEVAL_PROVIDER_SLOTS_DIR`` (default ``results/.slots``), both declared in
    :data:`coopeval.core.environment.ENVIRONMENT`.

    Raises
    ------
    coopeval.core.environment.EnvironmentSettingError
        A value that is not a positive integer (the message names the variable).
    """
    n = env_value(SLOTS_ENV)
    if n is None:
        return None
    return ProviderSlots(env_value(SLOTS_DIR_ENV), int(n))
