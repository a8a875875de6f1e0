"""SIGTERM stops a cluster run and cancels its jobs (issue 25 kind 6).

Snakemake answers the two stop signals differently. SIGINT (Ctrl-C) raises ``KeyboardInterrupt``
in its scheduler, which then asks the executor to cancel every active job (for
snakemake-executor-plugin-slurm: one ``scancel`` of their Slurm job ids) and exits. SIGTERM, the
signal a batch system, ``timeout`` or ``kill`` sends, only asks it to "exit after finishing
currently running jobs": on a cluster it waits for every submitted job to end, however long its
runtime, and does not cancel them; if the job-status command never reports them finished (Slurm
without slurmdbd, see :mod:`coopeval.pipeline.slurm_preflight`) it waits for ever and only SIGKILL
stops it, leaving the jobs queued.

:func:`sigterm_cancels_remote_jobs`, called from the workflow's ``onstart`` hook (which Snakemake
runs in the main process after its scheduler has installed its own SIGTERM handler, and before the
first job is submitted), makes SIGTERM take the SIGINT path when jobs run through a remote
executor. Jobs are then cancelled at once; Snakemake exits after its job-status thread wakes from
its current wait (snakemake-executor-plugin-slurm 2.8.0 waits between status checks from
``--slurm-init-seconds-before-status-checks``, default 40 s, growing by 10 s to at most 180 s).
Local runs keep Snakemake's own SIGTERM behaviour. Tested on a real one-node Slurm by
``benchmarks/slurm_smoke.sh``.
"""

from __future__ import annotations

import signal
from typing import Any

__all__ = ["sigterm_cancels_remote_jobs"]


def sigterm_cancels_remote_jobs(workflow: Any) -> bool:
    """Make SIGTERM raise ``KeyboardInterrupt`` (Snakemake then cancels the run's jobs).

    ``workflow`` is Snakemake's ``workflow`` object (its ``local_exec`` and ``is_main_process``
    attributes are read). Only for the main process of a run whose jobs go through a remote
    executor (``local_exec`` false, e.g. ``--executor slurm``); otherwise nothing changes.
    Must run in the main thread (``signal.signal`` raises ``ValueError`` elsewhere).

    Returns
    -------
    bool
        True when the handler was installed.
    """
    if workflow.local_exec or not workflow.is_main_process:
        return False
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    return True
