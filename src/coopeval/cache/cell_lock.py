"""One executor per cell: a lock file per model-calling job (issue 25 kind 4).

Two processes playing the same cell (a cluster resubmission while the first job still runs, two
``snakemake`` invocations on one results folder) would each miss the response cache for every
decision the other has not finished yet, and pay twice. Every job that calls a model (the play
job of every study, each judge shard) therefore holds an exclusive ``flock`` on
``<cache_dir>/locks/<job>.lock`` while it runs. The holder writes its pid, host and start time
into the file, so the other side can name it.

What the second executor does is ``COOPEVAL_CELL_LOCK``:

* ``wait`` (default): it prints who holds the cell, blocks until the holder ends (finished,
  failed or killed: the kernel releases the lock of a dead process), then runs, and every
  answer the first executor received is replayed from the response cache for free;
* ``fail``: it stops at once with :class:`CellBusyError` naming the holder.

The lock files live beside ``cache.db`` because the cache is what the executors share; flock
works across the nodes of a cluster on NFS v4 and Lustre/GPFS with locking enabled.
"""

from __future__ import annotations

import fcntl
import os
import re
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from coopeval.core.environment import env_value

__all__ = ["CELL_LOCK_ENV", "CELL_LOCK_MODES", "LOCK_DIR", "CellBusyError", "cell_lock", "lock_path"]

CELL_LOCK_ENV = "COOPEVAL_CELL_LOCK"
CELL_LOCK_MODES = ("wait", "fail")
LOCK_DIR = "locks"
"""Folder of the lock files inside the response cache directory."""


class CellBusyError(RuntimeError):
    """Another process holds the cell (``COOPEVAL_CELL_LOCK=fail``); ``holder`` is what it wrote
    into the lock file (``pid=… host=… since=…``)."""

    def __init__(self, job: str, path: Path, holder: str) -> None:
        self.job, self.path, self.holder = job, path, holder
        super().__init__(
            f"{job} is already being played by another process ({holder or 'holder unknown'}; lock {path}); "
            f"this executor stops without calling a model. Wait for it, or set {CELL_LOCK_ENV}=wait to queue behind it "
            "and replay its answers from the response cache"
        )


def lock_path(cache_dir: str | os.PathLike[str], job: str) -> Path:
    """The lock file of ``job`` (e.g. ``play-coopeval-<cell_id>``): ``<cache_dir>/locks/<job>.lock``,
    with every character outside ``[A-Za-z0-9._-]`` replaced by ``_``.

    Raises
    ------
    ValueError
        An empty job name.
    """
    if not job:
        raise ValueError("a cell lock needs a job name (study and cell id)")
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", job)
    return Path(cache_dir) / LOCK_DIR / f"{safe}.lock"


def _holder_text(fd: int) -> str:
    os.lseek(fd, 0, os.SEEK_SET)
    return os.read(fd, 4096).decode("utf-8", "replace").strip()


@contextmanager
def cell_lock(cache_dir: str | os.PathLike[str], job: str, mode: str | None = None) -> Iterator[Path]:
    """Hold ``job``'s lock for the duration of the block (yields the lock file's path).

    Parameters
    ----------
    cache_dir:
        The response cache directory the executors share.
    job:
        The job's name, unique per cell: study and cell id, or the judge shard.
    mode:
        ``wait`` or ``fail`` (default: ``COOPEVAL_CELL_LOCK``, else ``wait``).

    Raises
    ------
    CellBusyError
        ``mode == "fail"`` and another process holds the lock.
    ValueError
        An unknown mode.
    """
    chosen = mode if mode is not None else env_value(CELL_LOCK_ENV)
    if chosen not in CELL_LOCK_MODES:
        raise ValueError(f"{CELL_LOCK_ENV} must be one of {CELL_LOCK_MODES}, not {chosen!r}")
    path = lock_path(cache_dir, job)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _holder_text(fd)
            if chosen == "fail":
                raise CellBusyError(job, path, holder) from None
            print(f"[{job}] waiting: another process plays this cell ({holder or 'holder unknown'}; lock {path}); "
                  "its answers will be replayed from the response cache", file=sys.stderr, flush=True)
            started = time.monotonic()
            fcntl.flock(fd, fcntl.LOCK_EX)
            print(f"[{job}] the other executor finished after {time.monotonic() - started:.1f}s; continuing",
                  file=sys.stderr, flush=True)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"pid={os.getpid()} host={socket.gethostname()} since={time.strftime('%Y-%m-%dT%H:%M:%S%z')}\n".encode(), 0)
        try:
            yield path
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
