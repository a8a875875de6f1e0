"""``play-human`` and the signals it gets (issue 46, R70 and "SIGHUP from a script"): a SIGHUP
ignored at start (``nohup``, ``trap '' HUP``) does not end it, and a second signal arriving while
the first one's stop runs does not interrupt that stop. The stand-in workflow of
``test_run_signals`` keeps each to seconds."""

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


def test_a_second_signal_during_the_stop_does_not_interrupt_it(workdir):  # noqa: F811
    """A SIGTERM right behind a SIGHUP (a closing terminal, then a supervisor) used to interrupt the
    stop the first one started, with a traceback and exit 1; and a signal already delivered when
    the stop began printed "Signal N ignored due to race condition". Which of the two is handled
    first depends on the thread the kernel hands each to, so the exit status is either's."""
    run = _play_human(workdir, ())
    job = _job_started(workdir)
    snakemake = SeatFolder(workdir / "seats").status()["pid"]
    run.send_signal(signal.SIGHUP)
    run.send_signal(signal.SIGTERM)
    out, _ = run.communicate(timeout=WAIT_S)
    assert run.returncode in (128 + signal.SIGHUP, 128 + signal.SIGTERM), out
    assert "Traceback" not in out and "race condition" not in out and "Stopped; answers given are kept" in out
    assert not process_alive(job) and not process_alive(snakemake) and _locks(workdir) == []
    assert SeatFolder(workdir / "seats").status()["state"] == "stopped"
