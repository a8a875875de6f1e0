"""``benchmarks/local_model.py --help`` shows every option's default (issue 46, the benchmark)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_benchmarks_help_shows_its_defaults() -> None:
    shown = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "local_model.py"), "--help"],
        capture_output=True, text=True, check=True, env={"PYTHONPATH": str(REPO / "src"), "COLUMNS": "200", "PATH": "/usr/bin:/bin"},
    ).stdout
    for default in ("timed calls per weights in part 1 (default: 8)", "timed calls per scenario (default: 6)",
                    "CoT reasoning caps (chars) (default: [320])", "(default: ['IO', 'CoT'])", "(default: [2, 5])"):
        assert default in " ".join(shown.split()), default
