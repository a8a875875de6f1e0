"""The Slurm preflight (issue 25 kind 6) on recorded command outputs: the profile names its
job-status command; a cluster whose sacct does not see a finished job (no slurmdbd) or whose
MinJobAge is too short for squeue is stopped with the fix. Not run against a real cluster here."""

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


def fake(outputs: dict[str, str], calls: list[list[str]]):
    def run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
        calls.append(list(command))
        return subprocess.CompletedProcess(list(command), 0, stdout=outputs.get(command[0], ""), stderr="")

    return run


def test_the_profile_sets_the_status_command_explicitly(tmp_path: Path) -> None:
    assert profile_status_command(REPO / "workflow" / "profiles" / "slurm" / "config.yaml") == "sacct"
    bare = tmp_path / "config.yaml"
    bare.write_text("executor: slurm\n")
    with pytest.raises(ValueError, match="slurm-status-command is None; set it explicitly"):
        profile_status_command(bare)


def test_sacct_without_slurmdbd_stops_naming_slurmdbd() -> None:
    calls: list[list[str]] = []
    result = check_status_source("sacct", fake({"scontrol": NO_DBD, "sbatch": "42\n", "sacct": ""}, calls))
    assert not result.ok
    assert "no job accounting (slurmdbd)" in result.message and "test job 42 (state none" in result.message
    assert "accounting_storage/none" in result.message and "`slurm-status-command: squeue`" in result.message
    assert calls[1][:3] == ["sbatch", "--parsable", "--wait"] and calls[2][-2:] == ["-j", "42"]


def test_sacct_with_accounting_passes() -> None:
    result = check_status_source("sacct", fake({"scontrol": WITH_DBD, "sbatch": "7;cluster\n", "sacct": "7|COMPLETED\n"}, []))
    assert result.ok and "test job 7 as COMPLETED" in result.message


def test_squeue_needs_a_min_job_age_of_two_minutes() -> None:
    short = check_status_source("squeue", fake({"scontrol": WITH_DBD, "sbatch": "9\n", "squeue": "9 COMPLETED\n"}, []))
    assert not short.ok and "MinJobAge is 10 s" in short.message and ">= 120 s" in short.message
    ok = check_status_source("squeue", fake({"scontrol": NO_DBD, "sbatch": "9\n", "squeue": "9 COMPLETED\n"}, []))
    assert ok.ok and "MinJobAge 300 s" in ok.message
    gone = check_status_source("squeue", fake({"scontrol": NO_DBD, "sbatch": "9\n", "squeue": ""}, []))
    assert not gone.ok and "does not report the finished test job 9" in gone.message


def test_min_job_age_units() -> None:
    assert [min_job_age(scontrol_config(f"MinJobAge = {v}")) for v in ("300 sec", "300", "5 min", "1h", "soon")] == [300, 300, 300, 3600, None]
    assert min_job_age({}) is None


def test_the_cli_reports_a_bad_profile(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bare = tmp_path / "config.yaml"
    bare.write_text("slurm-status-command: sometimes\n")
    assert main(["slurm-preflight", "--profile", str(bare)]) == 2
    assert "slurm-status-command is 'sometimes'" in capsys.readouterr().err
