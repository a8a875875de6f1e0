"""A copy of the workflow in a scratch folder, for tests that run snakemake as a user would."""

from __future__ import annotations

import shutil
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WORKFLOW_ITEMS = ("Snakefile", "workflow", "config", "resources", "src")


def copy_workflow(work: Path, *extra: str) -> Path:
    """Copy the Snakefile, rules, configs, prompts and package (plus ``extra`` items, e.g.
    ``profiles``) from the repository into ``work``; return ``work``."""
    for item in (*WORKFLOW_ITEMS, *extra):
        source = REPO / item
        (shutil.copytree if source.is_dir() else shutil.copy)(source, work / item)
    return work
