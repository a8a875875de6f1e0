"""Issue 24: a dry run needs no API key, a real run without its key stops in the first job that
calls the provider (naming the variable), a budget below the estimate stops the run before any
job, and `snakemake estimate` writes the estimate."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.pipeline.workflow_copy import copy_workflow

ROSTER = (
    "studies: [coopeval]\ngames: [prisoners_dilemma]\nmechanisms: [NoMechanism]\n"
    "agents:\n  - {model: openai/gpt-4o-mini, style: IO, params: {max_tokens: 50}}\n  - {model: bot/tit-for-tat}\n"
)


@pytest.fixture(scope="module")
def work(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("workflow"))


def _keyless() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.endswith(("_API_KEY", "_TOKEN"))}


def _snakemake(work, *args: str, timeout: int = 600) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "snakemake", "--cores", "1", *args]
    return subprocess.run(command, cwd=work, env=_keyless(), capture_output=True, text=True, timeout=timeout)


@pytest.mark.slow
@pytest.mark.parametrize("overlay", ["config/paper.yaml", "config/paper_sim.yaml"])
def test_a_dry_run_needs_no_key(work, overlay):
    result = _snakemake(work, "-n", "all", "--configfile", overlay)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]


@pytest.mark.slow
def test_a_run_without_its_key_stops_in_the_first_play_job_naming_it(work):
    (work / "keyed.yaml").write_text(ROSTER)
    result = _snakemake(work, "all", "--configfile", "keyed.yaml")
    assert result.returncode != 0
    assert "API key not set: OPENAI_API_KEY (for openai/gpt-4o-mini)" in result.stdout + result.stderr
    assert not list((work / "results" / "play").rglob("*.parquet"))


@pytest.mark.slow
def test_a_budget_below_the_estimate_stops_the_run_before_any_job(tmp_path):
    work = copy_workflow(tmp_path)
    (work / "budget.yaml").write_text(ROSTER + "max_usd: 0.000001\n")
    result = _snakemake(work, "all", "--configfile", "budget.yaml")
    assert result.returncode != 0
    output = result.stdout + result.stderr
    assert "exceeds max_usd = 1e-06" in output and "--config max_usd=<dollars>" in output
    assert not (work / "results" / "logs" / "play").exists() and not (work / "results" / "play").exists()


@pytest.mark.slow
def test_snakemake_estimate_writes_the_estimate(work):
    (work / "plain.yaml").write_text(ROSTER)
    result = _snakemake(work, "estimate", "--configfile", "plain.yaml", "--forcerun", "estimate")
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    estimate = json.loads((work / "results" / "estimate.json").read_text(encoding="utf-8"))
    assert estimate["studies"]["coopeval"]["decisions_max"] > 0
    assert estimate["totals"]["key_variables"] == ["OPENAI_API_KEY"] and estimate["totals"]["complete"]
