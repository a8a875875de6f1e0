"""Run a command that is interrupted when the process that started it dies, however it dies.

``python -m coopeval.humanplay.tether PARENT_PID COMMAND...`` runs ``COMMAND`` as its child in
its own process group and asks Linux to signal it when its parent dies (``prctl
(PR_SET_PDEATHSIG)``). ``coopeval play-human`` starts its snakemake run this way, so a
``play-human`` killed with SIGKILL, which it cannot catch, still ends its run as Ctrl-C does:
the whole group (snakemake and the play job waiting for an answer) gets SIGINT, then SIGTERM if
it has not ended within :data:`STOP_WAIT_S`; snakemake releases the workflow's lock and the same
command resumes. While its parent lives the tether only waits: the group's signals (Ctrl-C,
SIGTERM from ``play-human``) are the command's to act on, and it exits with the command's status
(``128 + n`` for a command ended by signal ``n``). Where ``prctl`` does not exist (not Linux)
the run is not tethered, and a rerun names the live run in one line.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import time

__all__ = ["PR_SET_PDEATHSIG", "STOP_WAIT_S", "main", "tethered"]

PR_SET_PDEATHSIG = 1
"""``prctl`` option: the signal this process gets when its parent dies (linux/prctl.h)."""

STOP_WAIT_S = 60.0
"""How long a stopped run may take to end after Ctrl-C (then after SIGTERM) before the next,
harder signal, seconds: when ``play-human`` stops it, and here when ``play-human`` has died."""

_GROUP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def tethered(command: list[str]) -> list[str]:
    """``command`` run through this module, tethered to the calling process."""
    return [sys.executable, "-m", "coopeval.humanplay.tether", str(os.getpid()), *command]


def _default_signals() -> None:
    for sig in _GROUP_SIGNALS:
        signal.signal(sig, signal.SIG_DFL)


def _interrupt_group(child: subprocess.Popen[bytes]) -> None:
    """The parent is gone: SIGINT to the group, then SIGTERM, then SIGKILL, until ``child`` ends."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL):
        os.killpg(os.getpgrp(), sig)  # this process ignores the first two
        deadline = time.monotonic() + STOP_WAIT_S
        while child.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        if child.poll() is not None:
            return


def main(argv: list[str]) -> int:
    """Run ``argv[1:]`` tethered to ``argv[0]`` (the parent's pid); its exit status."""
    parent, command = int(argv[0]), argv[1:]
    for sig in _GROUP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)
    orphaned = False

    def parent_died(_sig: int, _frame: object) -> None:
        nonlocal orphaned
        orphaned = True

    signal.signal(signal.SIGUSR1, parent_died)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGUSR1))
    child = subprocess.Popen(command, preexec_fn=_default_signals)  # this process runs no thread
    while child.poll() is None:
        if orphaned or os.getppid() != parent:
            _interrupt_group(child)
            break
        time.sleep(0.2)
    status = child.wait()
    return 128 - status if status < 0 else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
