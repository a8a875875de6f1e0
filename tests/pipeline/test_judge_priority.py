"""The cells the judge reads are played before the others and the judge runs as soon as they
are (workflow/rules/common.smk, PLAYED_FIRST): with one core, the order of the jobs snakemake
starts is NoMechanism's cells (the only ones with a CoT agent, as in the default config), the judge, then the costlier
Repetition cells, which a cost-only priority would start first (docs/measurements.md#main-job)."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.pipeline.workflow_copy import copy_workflow

CONFIG = """\
studies: [coopeval]
games: [prisoners_dilemma, stag_hunt]
mechanisms: [Repetition, NoMechanism]
agents:
  - {model: mock/m, style: IO}
  - {model: mock/m, style: CoT, label: mini, mechanisms: [NoMechanism]}
  - {model: bot/tit-for-tat}
judge: {model: mock/judge, style: IO, params: {}, sample_size: 4, min_chars: 1}
"""


@pytest.mark.slow
def test_judged_cells_and_the_judge_start_before_costlier_cells(tmp_path):
    work = copy_workflow(tmp_path)
    (work / "order.yaml").write_text(CONFIG)
    command = [
        sys.executable,
        "-m",
        "snakemake",
        "--cores",
        "1",
        "all",
        "--configfile",
        "order.yaml",
    ]
    result = subprocess.run(
        command, cwd=work, env=dict(os.environ), capture_output=True, text=True, timeout=600
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log[-3000:]
    started = re.findall(r"output: results/(play/coopeval/\w+|judge/shards)/", log)
    assert started[:3] == [
        "play/coopeval/NoMechanism",
        "play/coopeval/NoMechanism",
        "judge/shards",
    ], started
    assert started[3:5] == ["play/coopeval/Repetition", "play/coopeval/Repetition"], started
