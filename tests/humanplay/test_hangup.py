"""``play-human`` and the signal dispositions it inherits (issue 46, R70 and "SIGHUP from a
script"): a SIGHUP ignored at start (``nohup``, ``trap '' HUP``) does not end it, and a SIGHUP
ends it and its whole run even when it was started with SIGINT ignored, as a background job of a
non-interactive shell is. The stand-in workflow of ``test_run_signals`` keeps each to seconds."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from coopeval.agents.human.seat import SeatFolder, process_alive
from tests.humanplay.test_run_signals import WAIT_S, _job_started, _locks, workdir  # noqa: F401


def _play_human(work: Path, ignored: tuple[signal.Signals, ...]) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "coopeval.cli", "play-human", "--configfile", "run.yaml", "--port", "0", "--seats", "seats"]
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}

    def ignore() -> None:
        for sig in ignored:
            signal.signal(sig, signal.SIG_IGN)

    return subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=ignore)


def test_a_hangup_ignored_at_start_does_not_end_play_human(workdir):  # noqa: F811
    run = _play_human(workdir, (signal.SIGHUP,))
    job = _job_started(workdir)
    run.send_signal(signal.SIGHUP)  # nohup's hang-up: ignored
    run.send_signal(signal.SIGTERM)  # then a SIGTERM, which nohup does not ignore, ends it
    out, _ = run.communicate(timeout=WAIT_S)
    assert run.returncode == 128 + signal.SIGTERM, out
    assert not process_alive(job) and _locks(workdir) == []


def test_a_hangup_ends_a_play_human_started_with_sigint_ignored_and_its_run(workdir):  # noqa: F811
    run = _play_human(workdir, (signal.SIGINT, signal.SIGQUIT))  # a background job of `sh -c '... &'`
    job = _job_started(workdir)
    snakemake = SeatFolder(workdir / "seats").status()["pid"]
    run.send_signal(signal.SIGHUP)
    out, _ = run.communicate(timeout=WAIT_S)
    assert run.returncode == 128 + signal.SIGHUP, out
    assert not process_alive(job) and not process_alive(snakemake) and _locks(workdir) == []
    assert SeatFolder(workdir / "seats").status()["state"] == "stopped"
    assert "Stopped; answers given are kept" in out
