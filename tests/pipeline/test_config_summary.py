"""The effective config is shown and kept (issue 13 kind 10b)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from coopeval.core.io import write_text_if_changed
from coopeval.pipeline.config import (
    EFFECTIVE_CONFIG_PATH,
    config_summary,
    effective_config_yaml,
    validate_config,
)
from coopeval.pipeline.studies import all_cells

REPO = Path(__file__).resolve().parents[2]


def small_config() -> dict:
    return validate_config(
        {
            "studies": ["coopeval"],
            "seed": 5,
            "replicates": 2,
            "agents": [{"model": "bot/tit-for-tat"}, {"model": "mock/m", "style": "CoT", "label": "mini"}],
            "games": ["stag_hunt", "prisoners_dilemma"],
            "mechanisms": ["NoMechanism"],
        }
    )


def test_summary_lists_files_studies_cells_and_roster() -> None:
    config = small_config()
    text = config_summary(config, all_cells(config), ["config/config.yaml", "my.yaml"])
    assert text.splitlines() == [
        "coopeval config: config/config.yaml, my.yaml → results/config.effective.yaml",
        "  studies: coopeval (4 cells)",  # 2 games × 1 mechanism × 2 replicates
        "  agents (2): bot/tit-for-tat, mini(CoT)",
        "  games (2): stag_hunt, prisoners_dilemma",
        "  mechanisms (1): NoMechanism",
        "  replicates: 2, seed: 5",
    ]


def test_effective_config_round_trips() -> None:
    config = small_config()
    text = effective_config_yaml(config, ["config/config.yaml", "my.yaml"])
    assert text.startswith("# The effective config of the last run: merged from config/config.yaml, my.yaml (in this order)")
    assert yaml.safe_load(text) == config
    assert validate_config(yaml.safe_load(text)) == config  # a run can be repeated from it


def test_written_only_when_changed(tmp_path: Path) -> None:
    path = tmp_path / "results" / "config.effective.yaml"
    assert write_text_if_changed(path, "a: 1\n") is True
    os.utime(path, (1_000_000, 1_000_000))
    assert write_text_if_changed(path, "a: 1\n") is False and path.stat().st_mtime == 1_000_000
    assert write_text_if_changed(path, "a: 2\n") is True and path.read_text() == "a: 2\n"


@pytest.mark.slow
def test_snakemake_prints_once_and_writes_only_on_change(tmp_path: Path) -> None:
    files = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
    for name in files:
        if (REPO / name).is_file():
            (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, tmp_path / name)
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    smk = [sys.executable, "-m", "snakemake", "--cores", "1"]
    smoke = ["--configfile", "config/smoke.yaml"]  # last: --configfile takes every argument after it
    dry = subprocess.run([*smk, "-n", "all", *smoke], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert dry.returncode == 0 and not (tmp_path / EFFECTIVE_CONFIG_PATH).exists()  # a dry run writes nothing
    assert "coopeval config: config/config.yaml, config/smoke.yaml → results/config.effective.yaml" in dry.stderr
    run = subprocess.run([*smk, "results/cells.tsv", *smoke], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stderr.count("coopeval config:") == 1
    written = tmp_path / EFFECTIVE_CONFIG_PATH
    assert yaml.safe_load(written.read_text())["seed"] == 7  # smoke.yaml's seed over config.yaml's
    os.utime(written, (1_000_000, 1_000_000))
    again = subprocess.run([*smk, "-f", "results/cells.tsv", *smoke], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and written.stat().st_mtime == 1_000_000
