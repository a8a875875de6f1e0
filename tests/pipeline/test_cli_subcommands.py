"""The ``coopeval`` subcommands of other modules register through one lazy wrapper
(:func:`coopeval.cli.lazy_subcommand`): importing the CLI loads none of them, building the
parser registers each, and a malformed target is refused with the expected form."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from coopeval.cli import SUBCOMMANDS, build_parser, lazy_subcommand

SRC = str(Path(__file__).resolve().parents[2] / "src")
LAZY_MODULES = (
    "coopeval.pipeline.evaluate_cli",
    "coopeval.pipeline.check_answer_cli",
    "coopeval.studies.coopeval.reference.cli",
    "coopeval.estimate.cli",
    "coopeval.pipeline.compare_cli",
    "coopeval.explorer.cli",
    "coopeval.pipeline.answer_schemas",
    "coopeval.pipeline.slurm_preflight",
)


def test_importing_the_cli_loads_no_subcommand_module() -> None:
    code = f"import sys, coopeval.cli; print(sorted(m for m in {LAZY_MODULES!r} if m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONPATH": SRC})
    assert done.stdout.strip() == "[]"


def test_building_the_parser_registers_each_lazy_subcommand() -> None:
    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    assert {"evaluate", "check-answer", "reproduce", "estimate", "compare", "explore", "schemas", "slurm-preflight", "play-human", "payoff"} <= set(subparsers.choices)
    assert all(m in sys.modules for m in LAZY_MODULES)
    assert "add_estimate_parser" in [add.__name__ for add in SUBCOMMANDS]


@pytest.mark.parametrize("target", ["coopeval.estimate.cli", ":add_estimate_parser", "coopeval.estimate.cli:"])
def test_a_target_without_module_and_function_is_refused(target: str) -> None:
    with pytest.raises(ValueError, match="is not 'module:function'"):
        lazy_subcommand(target)
