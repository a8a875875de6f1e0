"""The layer and independence contracts (pyproject.toml, [tool.importlinter]) hold, and the
linter really fails on a wrong import direction (a contract that inverts two layers)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _lint_imports(*args: str) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("lint-imports", path=str(Path(sys.executable).parent)) or "lint-imports"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.run([exe, *args], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)


def test_project_contracts_are_kept():
    result = _lint_imports()
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


def test_a_wrong_import_direction_is_reported(tmp_path):
    # coopeval.pipeline imports coopeval.core (allowed); declaring core above pipeline must fail.
    contract = tmp_path / "inverted.toml"
    contract.write_text(
        '[tool.importlinter]\nroot_package = "coopeval"\n\n'
        '[[tool.importlinter.contracts]]\nname = "inverted"\ntype = "layers"\n'
        'layers = ["coopeval.core", "coopeval.pipeline"]\n'
    )
    result = _lint_imports("--config", str(contract))
    assert result.returncode != 0
    assert "inverted BROKEN" in result.stdout
    assert "coopeval.pipeline" in result.stdout and "coopeval.core" in result.stdout
