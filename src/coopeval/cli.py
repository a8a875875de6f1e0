"""The ``coopeval`` command line (``evaluate``, ``reproduce``, ``check-answer``, ``estimate``, ``compare``, ``explore``, ``schemas``, ``slurm-preflight``, ``play-human``, ``payoff``).

Each subcommand lives in its own module with an ``add_<name>_parser(subparsers)`` function,
listed in :data:`SUBCOMMANDS` through :func:`lazy_subcommand` (imported when the parser is
built); handlers import the package lazily so ``coopeval --help`` stays fast.
Exit codes: 0 success, 1 computation failure (:class:`~coopeval.core.errors.ComputationError`),
2 bad usage or bad input (:class:`~coopeval.core.errors.CliError`: a one-line message on stderr
naming the field and the fix).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from coopeval.core.environment import use_offline_litellm
from coopeval.core.errors import CliError, ComputationError

__all__ = ["SUBCOMMANDS", "CliError", "ComputationError", "build_parser", "lazy_subcommand", "main"]


def lazy_subcommand(target: str, *args: Any) -> Callable[[Any], None]:
    """The ``add_<name>_parser(subparsers, *args)`` function at ``target`` (``"module:function"``),
    imported only when the parser is built, so that importing this module loads none of the
    subcommands' packages.

    Raises
    ------
    ValueError
        If ``target`` is not of the form ``"module:function"``.
    """
    module, _, name = target.partition(":")
    if not module or not name:
        raise ValueError(f"lazy_subcommand: {target!r} is not 'module:function'; e.g. 'coopeval.estimate.cli:add_estimate_parser'")

    def add(subparsers: Any) -> None:
        getattr(importlib.import_module(module), name)(subparsers, *args)

    add.__name__ = add.__qualname__ = name
    return add


SUBCOMMANDS: list[Callable[[Any], None]] = [
    lazy_subcommand("coopeval.pipeline.evaluate_cli:add_evaluate_parser"),
    lazy_subcommand("coopeval.studies.coopeval.reference.cli:add_reproduce_parser"),
    lazy_subcommand("coopeval.pipeline.check_answer_cli:add_check_answer_parser"),
    lazy_subcommand("coopeval.estimate.cli:add_estimate_parser"),
    lazy_subcommand("coopeval.pipeline.compare_cli:add_compare_parser", CliError),
    lazy_subcommand("coopeval.explorer.cli:add_explore_parser"),
    lazy_subcommand("coopeval.pipeline.answer_schemas:add_schemas_parser"),
    lazy_subcommand("coopeval.pipeline.slurm_preflight:add_slurm_preflight_parser"),
    lazy_subcommand("coopeval.humanplay.cli:add_play_human_parser"),
    lazy_subcommand("coopeval.pipeline.payoff_cli:add_payoff_parser"),
]
"""Functions that each add one subcommand to the ``coopeval`` parser."""


def build_parser() -> argparse.ArgumentParser:
    """Return the ``coopeval`` argument parser with every registered subcommand."""
    parser = argparse.ArgumentParser(
        prog="coopeval",
        description="CoopEval re-implementation (arXiv 2604.15267): evaluation tools.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in SUBCOMMANDS:
        add(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; return the exit code (0 ok, 1 computation failure, 2 bad input)."""
    use_offline_litellm()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse usage errors (2) and --help (0)
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.handler(args))
    except CliError as exc:
        print(f"coopeval {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except ComputationError as exc:
        print(f"coopeval {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader (e.g. `| head`) closed the pipe: not an error of ours.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    sys.exit(main())
