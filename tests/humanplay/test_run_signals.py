"""``coopeval play-human`` ends the run it started whichever way it is ended (Ctrl-C, SIGTERM, a
closed terminal's SIGHUP), snakemake's lock is released so the same command resumes, and a run
still alive on the same seats folder is reported in one line naming it.

A stand-in workflow (one job that records its pid and sleeps, like a play job waiting for a
person) keeps these tests to a few seconds of snakemake start-up each.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from coopeval.agents.human.seat import SeatFolder, process_alive
from coopeval.cli import main

SNAKEFILE = """\
rule all:
    output: "done.txt"
    shell: "echo $$ > job.pid; sleep 600; touch {output}"
"""

WAIT_S = 120.0
"""Hang guard (snakemake start-up on a loaded machine), not a timing."""


def _wait(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.1)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    (tmp_path / "Snakefile").write_text(SNAKEFILE)
    (tmp_path / "run.yaml").write_text("x: 1\n")
    return tmp_path


def _play_human(work: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "coopeval.cli", "play-human", "--configfile", "run.yaml", "--port", "0", "--seats", "seats"]
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _job_started(work: Path, before: str = "") -> int:
    """Wait for the stand-in job to record its pid (one other than ``before``); return it."""
    pid_file = work / "job.pid"
    _wait(lambda: pid_file.exists() and pid_file.read_text().strip() not in ("", before), "a job started")
    return int(pid_file.read_text())


def _locks(work: Path) -> list[str]:
    folder = work / ".snakemake" / "locks"
    return sorted(p.name for p in folder.iterdir()) if folder.exists() else []


def _resumes_and_ends_at_ctrl_c(work: Path, job: int) -> None:
    """The same command resumes (its job starts: the lock was free), and Ctrl-C ends it too."""
    again = _play_human(work)
    second = _job_started(work, before=str(job))
    again.send_signal(signal.SIGINT)
    out, _ = again.communicate(timeout=WAIT_S)
    assert again.returncode == 130, out
    assert not process_alive(second) and _locks(work) == []


@pytest.mark.parametrize("ending", [signal.SIGHUP, signal.SIGTERM])
def test_a_signal_that_ends_play_human_ends_its_run_and_releases_the_lock(workdir, ending):
    run = _play_human(workdir)
    job = _job_started(workdir)
    snakemake = SeatFolder(workdir / "seats").status()["pid"]
    assert process_alive(snakemake) and _locks(workdir)  # the run holds the workflow's lock
    run.send_signal(ending)
    out, _ = run.communicate(timeout=WAIT_S)
    assert run.returncode == 128 + ending, out
    assert not process_alive(job) and not process_alive(snakemake)
    assert _locks(workdir) == []
    assert SeatFolder(workdir / "seats").status()["state"] == "stopped"
    _resumes_and_ends_at_ctrl_c(workdir, job)


def test_a_play_human_killed_with_sigkill_still_ends_its_run_and_the_rerun_resumes(workdir):
    """SIGKILL cannot be caught: the run is tethered to play-human (``coopeval.humanplay.tether``),
    so snakemake is interrupted as by Ctrl-C, stops its job and releases the lock."""
    run = _play_human(workdir)
    job = _job_started(workdir)
    snakemake = SeatFolder(workdir / "seats").status()["pid"]
    run.kill()
    run.communicate(timeout=WAIT_S)
    _wait(lambda: not process_alive(job) and not process_alive(snakemake), "the run ended")
    _wait(lambda: _locks(workdir) == [], "the lock released")
    _resumes_and_ends_at_ctrl_c(workdir, job)


def test_a_live_run_on_the_seats_folder_is_reported_in_one_line(workdir, capsys, monkeypatch):
    run = _play_human(workdir)
    _job_started(workdir)
    group = SeatFolder(workdir / "seats").status()["pid"]
    run.kill()  # play-human gone without a word (SIGKILL); its run lives on
    run.communicate(timeout=WAIT_S)
    try:
        monkeypatch.chdir(workdir)
        assert main(["play-human", "--configfile", "run.yaml", "--port", "0", "--seats", "seats"]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0
        assert f"still running (snakemake, process group {group}" in err and f"kill -INT -{group}" in err
    finally:
        os.killpg(group, signal.SIGINT)
        _wait(lambda: not process_alive(group), "the orphaned run ended")


def test_a_lock_held_by_a_snakemake_started_otherwise_is_named_in_one_line(workdir, capsys, monkeypatch):
    other = subprocess.Popen([sys.executable, "-m", "snakemake", "--cores", "1", "all", "--configfile", "run.yaml"], cwd=workdir,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        _job_started(workdir)
        monkeypatch.chdir(workdir)
        assert main(["play-human", "--configfile", "run.yaml", "--port", "0", "--seats", "seats"]) == 1
        out = capsys.readouterr().out.strip().splitlines()[-1]
        assert out.startswith("snakemake exited 1: the working directory is locked by another snakemake run;")
        assert "snakemake --unlock" in out and SeatFolder(workdir / "seats").status()["message"] == out
    finally:
        os.killpg(other.pid, signal.SIGINT)
        other.wait(timeout=WAIT_S)
