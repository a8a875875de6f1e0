"""``coopeval slurm-preflight``: does the job-status source the Slurm profile uses see a finished
job? (issue 25 kind 6)

snakemake-executor-plugin-slurm learns that a job finished from its status command: ``sacct``
(Slurm's accounting, served by **slurmdbd**) or ``squeue`` (slurmctld's memory, which forgets a
finished job ``MinJobAge`` seconds after it ends). On a cluster without slurmdbd, ``sacct``
answers nothing for a job that has finished, and Snakemake waits for it for ever (seen: a 4 s job,
then 12+ minutes idle). The profile (``workflow/profiles/slurm/config.yaml``) therefore names its
status command explicitly (``slurm-status-command``), and this check, run on the submit host
before a run:

1. reads that command from the profile and ``MinJobAge`` / ``AccountingStorageType`` from
   ``scontrol show config``;
2. submits a test job (``sbatch --wait --wrap true``) and asks the status command about it, as
   the plugin would;
3. passes when the finished job is reported ``COMPLETED``; otherwise it stops naming slurmdbd (for
   ``sacct``) or ``MinJobAge`` (for ``squeue``: it must be at least
   :data:`MIN_JOB_AGE_S`, three of the plugin's 40 s status intervals) and the profile line to
   change.

Not tested on a real cluster yet (the Slurm smoke of ``benchmarks/slurm_smoke.sh`` does not run
it); the decisions are tested on recorded command outputs.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "MIN_JOB_AGE_S",
    "PROFILE",
    "PreflightResult",
    "add_slurm_preflight_parser",
    "check_status_source",
    "min_job_age",
    "profile_status_command",
]

PROFILE = Path("workflow/profiles/slurm/config.yaml")
STATUS_KEY = "slurm-status-command"
STATUS_COMMANDS = ("sacct", "squeue")
MIN_JOB_AGE_S = 120
"""Shortest MinJobAge (seconds) with which ``squeue`` still lists a job at the plugin's status
check: 3 × its initial 40 s interval (the plugin's own threshold)."""

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def _run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(list(command), capture_output=True, text=True, timeout=120, check=False)


@dataclass(frozen=True)
class PreflightResult:
    """``ok`` and the message to print (the fix when not ok)."""

    ok: bool
    message: str


def profile_status_command(profile: str | Path = PROFILE) -> str:
    """The ``slurm-status-command`` the profile sets.

    Raises
    ------
    ValueError
        The profile does not set it, or sets something other than ``sacct`` / ``squeue``.
    """
    data = yaml.safe_load(Path(profile).read_text(encoding="utf-8")) or {}
    value = data.get(STATUS_KEY)
    if value not in STATUS_COMMANDS:
        raise ValueError(
            f"{profile}: {STATUS_KEY} is {value!r}; set it explicitly to one of {STATUS_COMMANDS} "
            "(the plugin's guess depends on the submit host and hides a cluster without accounting)"
        )
    return str(value)


def scontrol_config(text: str) -> dict[str, str]:
    """``Key = Value`` lines of ``scontrol show config`` as a dict."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep and key.strip() and " " not in key.strip():
            out[key.strip()] = value.strip()
    return out


def min_job_age(config: dict[str, str]) -> int | None:
    """MinJobAge in seconds (``300 sec``, ``300``, ``5 min``, ``1h``); None if absent or unreadable."""
    raw = config.get("MinJobAge")
    match = re.fullmatch(r"(\d+)\s*([a-z]*)", raw or "", flags=re.IGNORECASE)
    if match is None:
        return None
    factor = {"": 1, "s": 1, "sec": 1, "secs": 1, "seconds": 1, "m": 60, "min": 60, "mins": 60, "minutes": 60,
              "h": 3600, "hour": 3600, "hours": 3600}.get(match.group(2).lower())
    return None if factor is None else int(match.group(1)) * factor


def _state(output: str, job_id: str) -> str | None:
    for line in output.splitlines():
        fields = [f.strip() for f in re.split(r"[|\s]+", line.strip()) if f.strip()]
        if len(fields) >= 2 and fields[0] == job_id:
            return fields[1].upper()
    return None


def check_status_source(status_command: str, run: Runner = _run) -> PreflightResult:
    """Submit a finished test job and check that ``status_command`` reports it (see module doc).

    ``run`` runs one command and returns its completed process (tests pass recorded outputs).

    Raises
    ------
    ValueError
        An unknown status command.
    """
    if status_command not in STATUS_COMMANDS:
        raise ValueError(f"status command must be one of {STATUS_COMMANDS}, not {status_command!r}")
    config = scontrol_config(run(["scontrol", "show", "config"]).stdout)
    accounting = config.get("AccountingStorageType", "unknown")
    age = min_job_age(config)
    submitted = run(["sbatch", "--parsable", "--wait", "-t", "1", "-J", "coopeval-preflight", "--wrap", "true"])
    if submitted.returncode != 0 or not submitted.stdout.strip():
        return PreflightResult(False, f"the test job could not be submitted: {submitted.stderr.strip() or submitted.stdout.strip()}")
    job_id = submitted.stdout.strip().split(";")[0]
    if status_command == "sacct":
        query = run(["sacct", "-X", "--parsable2", "--noheader", "--format=JobIdRaw,State", "-j", job_id])
        state = _state(query.stdout, job_id)
        if state != "COMPLETED":
            return PreflightResult(
                False,
                f"sacct does not report the finished test job {job_id} (state {state or 'none'}; "
                f"AccountingStorageType = {accounting}): this cluster has no job accounting (slurmdbd), and "
                "Snakemake would wait for ever for jobs that have finished. Either run slurmdbd, or set "
                f"`{STATUS_KEY}: squeue` in {PROFILE} with MinJobAge >= {MIN_JOB_AGE_S} s in slurm.conf "
                f"(now {age if age is not None else 'unknown'} s)",
            )
        return PreflightResult(True, f"sacct reports the finished test job {job_id} as COMPLETED (accounting: {accounting})")
    if age is None or age < MIN_JOB_AGE_S:
        return PreflightResult(
            False,
            f"MinJobAge is {age if age is not None else 'unknown'} s: squeue forgets a finished job before the "
            f"plugin's status check; raise MinJobAge to >= {MIN_JOB_AGE_S} s in slurm.conf, or run slurmdbd and set "
            f"`{STATUS_KEY}: sacct` in {PROFILE}",
        )
    query = run(["squeue", "-h", "-t", "all", "-j", job_id, "-o", "%i %T"])
    state = _state(query.stdout, job_id)
    if state != "COMPLETED":
        return PreflightResult(False, f"squeue does not report the finished test job {job_id} (state {state or 'none'}, MinJobAge {age} s)")
    return PreflightResult(True, f"squeue reports the finished test job {job_id} as COMPLETED (MinJobAge {age} s)")


def run_slurm_preflight(args: argparse.Namespace) -> int:
    """CLI handler: 0 when the profile's status command sees a finished job, 1 otherwise."""
    try:
        command = profile_status_command(args.profile)
    except (OSError, ValueError) as exc:
        print(f"slurm preflight: {exc}", file=sys.stderr)
        return 2
    result = check_status_source(command)
    print(f"slurm preflight: {'PASS' if result.ok else 'FAIL'}: {result.message}", file=sys.stdout if result.ok else sys.stderr)
    return 0 if result.ok else 1


def add_slurm_preflight_parser(subparsers: Any) -> None:
    """Register ``coopeval slurm-preflight``."""
    parser = subparsers.add_parser(
        "slurm-preflight",
        help="check that the Slurm profile's job-status command reports a finished job (slurmdbd, MinJobAge)",
        description="Submit a test job and check that the status command the Slurm profile sets "
        f"({STATUS_KEY}) reports it as finished; names slurmdbd or MinJobAge when it does not.",
    )
    parser.add_argument("--profile", type=Path, default=PROFILE, help=f"the profile's config.yaml (default {PROFILE})")
    parser.set_defaults(handler=run_slurm_preflight)
