"""Profile precedence (issue 13, kind 10a): a user's ``--profile`` wins over the workflow's own
settings. Snakemake lets the auto-loaded workflow profile (``profiles/default/``) override a
``--profile`` top-level key by key, so that file must hold no key a user sets to tune a run;
the ``local_llm`` default lives in the workflow and yields to any value the run provides."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from coopeval.pipeline.studies import local_llm_jobs
from tests.pipeline.workflow_copy import copy_workflow

REPO = Path(__file__).resolve().parents[2]
# Settings every shipped profile sets the same way (workflow/profiles/slurm included).
ALLOWED_WORKFLOW_PROFILE_KEYS = {"rerun-incomplete", "keep-going", "scheduler"}


def test_auto_loaded_profile_sets_no_tunable_key():
    settings = yaml.safe_load((REPO / "profiles" / "default" / "config.yaml").read_text())
    assert set(settings) <= ALLOWED_WORKFLOW_PROFILE_KEYS
    slurm = yaml.safe_load((REPO / "workflow" / "profiles" / "slurm" / "config.yaml").read_text())
    for key, value in settings.items():
        assert slurm.get(key) == value, key


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("profiles"), "profiles")


def _local_llm_in_effect(work: Path, *args: str) -> int:
    command = [sys.executable, "-m", "snakemake", "-n", "all", *args, "--configfile", "config/smoke.yaml"]
    result = subprocess.run(command, cwd=work, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "workflow specific profile profiles/default" in result.stderr  # the auto-load happened
    found = re.findall(r"coopeval: local_llm = (\d+) embedded-model jobs", result.stderr)
    assert len(found) == 1, result.stderr[-3000:]
    return int(found[0])


@pytest.mark.slow
def test_user_profile_resources_win(workdir):
    profile = workdir / "mine"
    profile.mkdir(exist_ok=True)
    (profile / "config.yaml").write_text("cores: 2\nresources:\n  local_llm: 7\n")
    assert _local_llm_in_effect(workdir, "--profile", "mine") == 7


@pytest.mark.slow
def test_workflow_default_and_command_line(workdir):
    usable = len(os.sched_getaffinity(0))
    assert _local_llm_in_effect(workdir, "--cores", "1") == 1
    assert _local_llm_in_effect(workdir, "--cores", "2") == min(2, usable)
    # issue 45: the default uses every core given, up to the CPUs the machine has
    assert _local_llm_in_effect(workdir, "--cores", "64") == min(64, usable)
    assert _local_llm_in_effect(workdir, "--cores", "2", "--resources", "local_llm=3") == 3


@pytest.mark.parametrize(
    ("cores", "jobs", "usable", "expected"),
    [(1, None, 2, 1), (8, None, 2, 2), (8, None, 8, 8), (16, None, 12, 12), (None, 50, 2, 50), (None, None, 4, 1)],
)
def test_local_llm_jobs_is_the_cores_given_capped_at_the_usable_cpus(cores, jobs, usable, expected):
    assert local_llm_jobs(cores, jobs, usable) == expected


def test_local_llm_jobs_refuses_zero_cores():
    with pytest.raises(ValueError, match="--cores = 0"):
        local_llm_jobs(0, None, 2)
