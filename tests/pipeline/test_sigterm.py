"""SIGTERM on a cluster run takes Snakemake's cancelling path (issue 25 kind 6): the handler
installed from the workflow's onstart hook raises KeyboardInterrupt, which Snakemake's scheduler
answers by cancelling the executor's active jobs. Local runs and job processes keep the handler
they had. The whole path (scancel of running Slurm jobs, exit) is checked on a real one-node
Slurm by benchmarks/slurm_smoke.sh."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from coopeval.pipeline.sigterm import sigterm_cancels_remote_jobs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def restore_sigterm() -> Iterator[None]:
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def test_remote_run_sigterm_raises_keyboard_interrupt(restore_sigterm: None) -> None:
    assert sigterm_cancels_remote_jobs(SimpleNamespace(local_exec=False, is_main_process=True))
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)  # interrupted at once: the handler runs in the main thread


@pytest.mark.parametrize(("local_exec", "main"), [(True, True), (False, False), (True, False)])
def test_local_runs_and_job_processes_keep_their_handler(restore_sigterm: None, local_exec: bool, main: bool) -> None:
    def mine(signum: int, frame: object) -> None:
        return None

    signal.signal(signal.SIGTERM, mine)
    assert not sigterm_cancels_remote_jobs(SimpleNamespace(local_exec=local_exec, is_main_process=main))
    assert signal.getsignal(signal.SIGTERM) is mine


def test_the_workflow_installs_it_at_start() -> None:
    """The onstart hook (run after Snakemake's scheduler installed its own graceful SIGTERM
    handler, which this must replace) calls it."""
    common = (REPO / "workflow" / "rules" / "common.smk").read_text(encoding="utf-8")
    onstart = common.split("\nonstart:\n", 1)[1].split("\n\n\n", 1)[0]
    assert "sigterm_cancels_remote_jobs(workflow)" in onstart
