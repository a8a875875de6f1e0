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
2. submits a test job (``sbatch --wait --wrap true``, output to /dev/null) and asks the status
   command about it as the plugin would, a few times over :data:`STATUS_WAIT_S` seconds (the
   accounting record of a job may arrive a moment after it ends; the plugin's first status check
   comes 40 s after a submission);
3. passes when the finished job is reported ``COMPLETED``; otherwise it stops naming slurmdbd (for
   ``sacct``) or ``MinJobAge`` (for ``squeue``: it must be at least :data:`MIN_JOB_AGE_S`, three
   of the plugin's 40 s status intervals) and the profile line to change. When ``sacct`` fails,
   the message says whether ``squeue`` reports the same test job (and MinJobAge suffices), i.e.
   whether ``slurm-status-command: squeue`` works on this cluster.

Tested on recorded command outputs (tests/pipeline/test_slurm_preflight.py) and on a real
one-node Slurm by ``benchmarks/slurm_smoke.sh`` (passes with slurmdbd; with slurmdbd stopped the
``sacct`` profile fails naming slurmdbd and a ``squeue`` profile passes).
"""
from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "MIN_JOB_AGE_S",
    "PROFILE",
    "STATUS_WAIT_S",
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

STATUS_WAIT_S = 8
"""Seconds over which the status command is asked again before the check fails."""
STATUS_ATTEMPTS = 5
COMMAND_TIMEOUT_S = 120
"""Longest wait for one command, the test job included (a busy cluster may queue it longer:
the check then fails saying so)."""

Runner = Callable[[Sequence[str]], "subprocess.CompletedProcess[str]"]


def _run(command: Sequence[str]) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(list(command), capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(list(command), 124, stdout="", stderr=f"no answer within {COMMAND_TIMEOUT_S} s")
    except OSError as exc:  # e.g. the command is not installed on this host
        return subprocess.CompletedProcess(list(command), 127, stdout="", stderr=str(exc))


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


def _poll_state(query: Sequence[str], job_id: str, run: Runner, sleep: Callable[[float], None]) -> str | None:
    """The job's state from ``query``, asked up to STATUS_ATTEMPTS times until it is final."""
    state = None
    for attempt in range(STATUS_ATTEMPTS):
        if attempt:
            sleep(STATUS_WAIT_S / (STATUS_ATTEMPTS - 1))
        state = _state(run(query).stdout, job_id)
        if state == "COMPLETED":
            break
    return state


def _squeue_query(job_id: str) -> list[str]:
    return ["squeue", "-h", "-t", "all", "-j", job_id, "-o", "%i %T"]


def _sacct_query(job_id: str) -> list[str]:
    return ["sacct", "-X", "--parsable2", "--noheader", "--format=JobIdRaw,State", "-j", job_id]


def check_status_source(status_command: str, run: Runner = _run, sleep: Callable[[float], None] = time.sleep) -> PreflightResult:
    """Submit a finished test job and check that ``status_command`` reports it (see module doc).

    ``run`` runs one command and returns its completed process, ``sleep`` waits between status
    queries (tests pass recorded outputs and no wait).

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
    age_text = f"{age if age is not None else 'unknown'} s"
    submitted = run(
        ["sbatch", "--parsable", "--wait", "-t", "1", "-J", "coopeval-preflight", "-o", "/dev/null", "--wrap", "true"]
    )
    if submitted.returncode != 0 or not submitted.stdout.strip():
        return PreflightResult(False, f"the test job could not be submitted or did not finish: {submitted.stderr.strip() or submitted.stdout.strip()}")
    job_id = submitted.stdout.strip().split(";")[0]
    squeue_ok = age is not None and age >= MIN_JOB_AGE_S
    if status_command == "sacct":
        state = _poll_state(_sacct_query(job_id), job_id, run, sleep)
        if state == "COMPLETED":
            return PreflightResult(True, f"sacct reports the finished test job {job_id} as COMPLETED (accounting: {accounting})")
        if squeue_ok and _state(run(_squeue_query(job_id)).stdout, job_id) == "COMPLETED":
            alternative = (
                f"squeue does report it (MinJobAge {age_text}): set `{STATUS_KEY}: squeue` in {PROFILE}, "
                "or run slurmdbd"
            )
        else:
            alternative = (
                f"Either run slurmdbd, or set `{STATUS_KEY}: squeue` in {PROFILE} with MinJobAge >= "
                f"{MIN_JOB_AGE_S} s in slurm.conf (now {age_text}; squeue does not report the test job)"
            )
        return PreflightResult(
            False,
            f"sacct does not report the finished test job {job_id} (state {state or 'none'}; "
            f"AccountingStorageType = {accounting}): this cluster has no working job accounting (slurmdbd), "
            f"and Snakemake would wait for ever for jobs that have finished. {alternative}",
        )
    if not squeue_ok:
        return PreflightResult(
            False,
            f"MinJobAge is {age_text}: squeue forgets a finished job before the "
            f"plugin's status check; raise MinJobAge to >= {MIN_JOB_AGE_S} s in slurm.conf, or run slurmdbd and set "
            f"`{STATUS_KEY}: sacct` in {PROFILE}",
        )
    state = _poll_state(_squeue_query(job_id), job_id, run, sleep)
    if state != "COMPLETED":
        return PreflightResult(False, f"squeue does not report the finished test job {job_id} (state {state or 'none'}, MinJobAge {age_text})")
    return PreflightResult(True, f"squeue reports the finished test job {job_id} as COMPLETED (MinJobAge {age_text})")


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
