"""``play-human --tty`` on a terminal it cannot write to or read from (issue 46, "--tty"): a seats
folder whose path has a letter an ASCII terminal cannot show does not crash at the ``Seats: …``
line, and a terminal that closes (its output a pipe nobody reads any more, a pseudo-terminal hung
up under ``nohup``, an input descriptor closed before the start) ends ``--tty`` through the front
end's own stop: the run's status says "stopped", snakemake and its job end and the workflow's
lock is released. The stand-in workflow of ``test_run_signals`` keeps each to seconds."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from coopeval.agents.human.seat import SeatFolder, process_alive
from tests.humanplay.test_run_signals import (  # noqa: F401
    WAIT_S,
    _job_started,
    _locks,
    _wait,
    workdir,
)

SEATS = "si\u00e8ges"
"""A seats folder whose name an ASCII terminal cannot show (``sièges``)."""

ASCII_TERMINAL = {"LANG": "C", "LC_ALL": "C", "PYTHONIOENCODING": "ascii"}


def _env() -> dict[str, str]:
    src = str(Path(__file__).resolve().parents[2] / "src")
    return {**os.environ, **ASCII_TERMINAL, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}


def _command(*extra: str) -> list[str]:
    return [sys.executable, "-m", "coopeval.cli", "play-human", "--tty", "--seats", SEATS, *extra]


def _read_until(fd: int, marker: bytes, already: bytes = b"") -> bytes:
    """What ``fd`` gives until ``marker`` has been read (a hang guard of :data:`WAIT_S`)."""
    out, deadline = already, time.monotonic() + WAIT_S
    while marker not in out:
        assert time.monotonic() < deadline, f"never printed {marker!r}: {out[-500:]!r}"
        if select.select([fd], [], [], 0.2)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"closed before {marker!r}: {out[-500:]!r}"
            out += chunk
    return out


def _ask(work: Path) -> None:
    """A question for the person (asked by this process, so it stays open while the test runs)."""
    SeatFolder(work / SEATS).ask("alice", "q1", {
        "agent": "human/alice(IO)", "model": "human/alice", "kind": "action", "attempt": 0,
        "messages": [{"role": "user", "content": "Choose."}], "form": {"type": "distribution", "keys": ["A0", "A1"]},
        "position": {"round": 1},
    })  # fmt: skip


def test_a_seats_path_an_ascii_terminal_cannot_show_does_not_crash_the_seats_line(tmp_path):
    run = subprocess.Popen(_command("--no-run"), cwd=tmp_path, env=_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert run.stdout is not None
        shown = _read_until(run.stdout.fileno(), b"Waiting for the next question")
        folder = SeatFolder(tmp_path / SEATS)
        folder.set_status({"state": "finished", "message": "done"})  # the run it serves ended
        out, err = run.communicate(timeout=WAIT_S)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    assert f"Seats: {tmp_path / 'si?ges'}\n".encode() in shown  # the letter replaced, the line printed
    assert b"Traceback" not in err and b"UnicodeEncodeError" not in err
    assert (shown + out).decode("ascii").endswith("The run finished: no question is open.\n")


def _stopped(work: Path, group: int, job: int, run: subprocess.Popen[Any]) -> None:
    """The closed terminal ended ``play-human`` through its own stop."""
    assert run.wait(timeout=WAIT_S) == 1
    assert SeatFolder(work / SEATS).status()["state"] == "stopped"
    assert not process_alive(group) and not process_alive(job)  # stopped by play-human itself, not left to the tether
    assert _locks(work) == []


def test_a_terminal_output_nobody_reads_any_more_ends_tty_through_its_stop(workdir):  # noqa: F811
    """stdout a pipe whose reader went away (a closed ssh session's pipe): the first line written
    after that is a broken pipe."""
    run = subprocess.Popen(_command("--configfile", "run.yaml"), cwd=workdir, env=_env(), stdin=subprocess.PIPE,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert run.stdout is not None and run.stderr is not None
        _read_until(run.stdout.fileno(), b"Waiting for the next question")
        job = _job_started(workdir)
        group = SeatFolder(workdir / SEATS).status()["pid"]
        run.stdout.close()  # nobody reads the terminal's output any more
        _ask(workdir)  # its question is the next line written
        _stopped(workdir, group, job, run)
        err = run.stderr.read().decode("ascii", "replace")
    finally:
        if run.poll() is None:
            run.kill()
    assert "Stopped; answers given are kept" in err and "Traceback" not in err


def test_a_hung_up_terminal_under_nohup_ends_tty_through_its_stop(workdir):  # noqa: F811
    """A pseudo-terminal closed while ``--tty`` waits for the answer; SIGHUP ignored (``nohup``),
    so only the terminal's reads and writes say it is gone."""
    master, slave = os.openpty()
    run = subprocess.Popen(_command("--configfile", "run.yaml"), cwd=workdir, env=_env(), stdin=slave, stdout=slave, stderr=slave,
                           preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))  # fmt: skip
    os.close(slave)
    try:
        shown = _read_until(master, b"Waiting for the next question")
        job = _job_started(workdir)
        group = SeatFolder(workdir / SEATS).status()["pid"]
        _ask(workdir)
        _read_until(master, b"percentages> ", shown)
        os.close(master)  # the terminal is gone
        master = -1
        _stopped(workdir, group, job, run)
    finally:
        if master >= 0:
            os.close(master)
        if run.poll() is None:
            run.kill()


def test_a_closed_input_descriptor_ends_tty_through_its_stop(workdir):  # noqa: F811
    """Standard input closed before the start (``<&-``): Python has no ``sys.stdin``; nothing can be
    typed, so the run is stopped at once, with one line saying why."""
    run = subprocess.Popen(_command("--configfile", "run.yaml"), cwd=workdir, env=_env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, preexec_fn=lambda: os.close(0))  # fmt: skip
    try:
        _, err = run.communicate(timeout=WAIT_S)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 1, err
    assert SeatFolder(workdir / SEATS).status()["state"] == "stopped"
    assert err.decode("ascii").splitlines() == [
        "--tty: the terminal's input or output is closed, so no answer can be typed; run play-human again from a terminal "
        "(answers given are kept)",
        "Stopped; answers given are kept (run the same command to resume).",
    ]
    _wait(lambda: _locks(workdir) == [], "the lock released")
    assert not (workdir / "done.txt").exists()
