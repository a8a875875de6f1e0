"""The Slurm preflight (issue 25 kind 6) on recorded command outputs: the profile names its
job-status command; a cluster whose sacct does not see a finished job (no slurmdbd) or whose
MinJobAge is too short for squeue is stopped with the fix. Run against a real one-node Slurm
(with and without slurmdbd) by benchmarks/slurm_smoke.sh."""

from __future__ import annotations

import subprocess
from collections.abc import Sequence
from pathlib import Path

import pytest

from coopeval.cli import main
from coopeval.pipeline.slurm_preflight import (
    check_status_source,
    min_job_age,
    profile_status_command,
    scontrol_config,
)

REPO = Path(__file__).resolve().parents[2]
NO_DBD = "AccountingStorageType   = accounting_storage/none\nMinJobAge               = 300 sec\nClusterName = test\n"
WITH_DBD = "AccountingStorageType   = accounting_storage/slurmdbd\nMinJobAge               = 10 sec\n"


def fake(outputs: dict[str, str | list[str]], calls: list[list[str]]):
    """A runner answering each program with its recorded output (a list: one answer per call,
    the last one repeated)."""
    seen: dict[str, int] = {}

    def run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
        calls.append(list(command))
        answer = outputs.get(command[0], "")
        if isinstance(answer, list):
            n = seen[command[0]] = seen.get(command[0], -1) + 1
            answer = answer[min(n, len(answer) - 1)]
        return subprocess.CompletedProcess(list(command), 0, stdout=answer, stderr="")

    return run


def no_wait(seconds: float) -> None:
    return None


def test_the_profile_sets_the_status_command_explicitly(tmp_path: Path) -> None:
    assert profile_status_command(REPO / "workflow" / "profiles" / "slurm" / "config.yaml") == "sacct"
    bare = tmp_path / "config.yaml"
    bare.write_text("executor: slurm\n")
    with pytest.raises(ValueError, match="slurm-status-command is None; set it explicitly"):
        profile_status_command(bare)


def test_sacct_without_slurmdbd_stops_naming_slurmdbd() -> None:
    calls: list[list[str]] = []
    result = check_status_source("sacct", fake({"scontrol": NO_DBD, "sbatch": "42\n", "sacct": ""}, calls), no_wait)
    assert not result.ok
    assert "no working job accounting (slurmdbd)" in result.message and "test job 42 (state none" in result.message
    assert "accounting_storage/none" in result.message and "`slurm-status-command: squeue`" in result.message
    assert "squeue does not report the test job" in result.message
    assert calls[1][:3] == ["sbatch", "--parsable", "--wait"] and calls[2][-2:] == ["-j", "42"]
    # the test job writes no slurm-<id>.out into the working directory
    assert calls[1][calls[1].index("-o") + 1] == "/dev/null"
    # sacct asked 5 times (the record may come late), then squeue once for the alternative
    assert [c[0] for c in calls] == ["scontrol", "sbatch"] + ["sacct"] * 5 + ["squeue"]


def test_sacct_failing_says_when_squeue_works_here() -> None:
    outputs: dict[str, str | list[str]] = {"scontrol": NO_DBD, "sbatch": "42\n", "sacct": "", "squeue": "42 COMPLETED\n"}
    result = check_status_source("sacct", fake(outputs, []), no_wait)
    assert not result.ok and "slurmdbd" in result.message
    assert "squeue does report it (MinJobAge 300 s): set `slurm-status-command: squeue`" in result.message


def test_a_late_accounting_record_is_waited_for() -> None:
    waits: list[float] = []
    outputs: dict[str, str | list[str]] = {"scontrol": WITH_DBD, "sbatch": "5\n", "sacct": ["", "5|RUNNING\n", "5|COMPLETED\n"]}
    calls: list[list[str]] = []
    result = check_status_source("sacct", fake(outputs, calls), waits.append)
    assert result.ok and "test job 5 as COMPLETED" in result.message
    assert [c[0] for c in calls].count("sacct") == 3 and waits == [2.0, 2.0]


def test_a_test_job_that_cannot_run_is_reported() -> None:
    def run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
        if command[0] == "sbatch":
            return subprocess.CompletedProcess(list(command), 124, stdout="", stderr="no answer within 120 s")
        return subprocess.CompletedProcess(list(command), 0, stdout=WITH_DBD, stderr="")

    result = check_status_source("sacct", run, no_wait)
    assert not result.ok and "did not finish: no answer within 120 s" in result.message


def test_sacct_with_accounting_passes() -> None:
    result = check_status_source("sacct", fake({"scontrol": WITH_DBD, "sbatch": "7;cluster\n", "sacct": "7|COMPLETED\n"}, []), no_wait)
    assert result.ok and "test job 7 as COMPLETED" in result.message


def test_squeue_needs_a_min_job_age_of_two_minutes() -> None:
    short = check_status_source("squeue", fake({"scontrol": WITH_DBD, "sbatch": "9\n", "squeue": "9 COMPLETED\n"}, []), no_wait)
    assert not short.ok and "MinJobAge is 10 s" in short.message and ">= 120 s" in short.message
    ok = check_status_source("squeue", fake({"scontrol": NO_DBD, "sbatch": "9\n", "squeue": "9 COMPLETED\n"}, []), no_wait)
    assert ok.ok and "MinJobAge 300 s" in ok.message
    gone = check_status_source("squeue", fake({"scontrol": NO_DBD, "sbatch": "9\n", "squeue": ""}, []), no_wait)
    assert not gone.ok and "does not report the finished test job 9" in gone.message


def test_min_job_age_units() -> None:
    assert [min_job_age(scontrol_config(f"MinJobAge = {v}")) for v in ("300 sec", "300", "5 min", "1h", "soon")] == [300, 300, 300, 3600, None]
    assert min_job_age({}) is None


def test_the_cli_reports_a_bad_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "config.yaml"
    bare.write_text("slurm-status-command: sometimes\n")
    assert main(["slurm-preflight", "--profile", str(bare)]) == 2
    assert "slurm-status-command is 'sometimes'" in capsys.readouterr().err
