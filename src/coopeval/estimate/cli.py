"""``coopeval estimate [--configfile FILE]… [--json] [--latency S] [--cap N] [--out FILE]``.

Loads ``config/config.yaml`` and the overlays in order, exactly as the workflow merges and
validates them (a config error is reported with the same message, exit code 2), simulates the
run (:mod:`coopeval.estimate`) and prints the estimate as tables (rich) or one JSON object;
``--out`` also writes the JSON to a file (the ``estimate`` target's ``results/estimate.json``).
No API key is needed and no model is called.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

__all__ = ["DEFAULT_CONFIG", "add_estimate_parser", "run_estimate", "write_estimate"]

DEFAULT_CONFIG = Path("config/config.yaml")
"""Always loaded first, as the workflow's ``configfile`` (relative to the working directory)."""


def add_estimate_parser(subparsers: Any) -> None:
    """Register ``coopeval estimate``."""
    parser = subparsers.add_parser(
        "estimate",
        help="calls, tokens, dollars and wall time of a config, before any paid call",
        description="Simulate a run of the config with scripted stand-ins for every model and print, per study, "
        "group, model and decision kind, the decisions (a range where they depend on answers), calls, input "
        "and output tokens and dollars, plus cache hits and a wall-time bound (docs/estimate.md). No API key needed.",
    )
    parser.add_argument("--configfile", action="extend", nargs="+", default=[], type=Path, metavar="FILE",
                        help="config overlay merged on config/config.yaml (repeatable, in order)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of tables")
    parser.add_argument("--latency", type=float, default=1.0, metavar="S", help="assumed seconds per model call (default 1)")
    parser.add_argument("--cap", type=int, default=None, metavar="N",
                        help="model calls in flight over the run (default: COOPEVAL_PROVIDER_SLOTS, else max_concurrency)")
    parser.add_argument("--every-replicate", action="store_true",
                        help="simulate every cell in full (default: one for all replicates, and for all models of a single-model "
                        "cell; evolution cells shrunk to their repeated units, docs/estimate.md)")
    parser.add_argument("--out", type=Path, default=None, metavar="FILE", help="also write the JSON to FILE")
    parser.set_defaults(handler=run_estimate)


def _bad_input(message: str) -> int:
    print(f"coopeval estimate: error: {message}", file=sys.stderr)
    return 2


def run_estimate(args: argparse.Namespace) -> int:
    """Handler of ``coopeval estimate``: 0 when printed; 2 (the message on stderr, as
    ``coopeval``'s other bad-input errors) for a config that does not load or validate (the
    workflow's own message) or a non-positive ``--latency`` / ``--cap``."""
    from coopeval.core.environment import EnvironmentSettingError
    from coopeval.core.errors import ConfigError
    from coopeval.pipeline.config import load_config

    if not (math.isfinite(args.latency) and args.latency > 0) or (args.cap is not None and args.cap < 1):
        return _bad_input("--latency must be a finite number of seconds > 0 and --cap a positive integer")
    if args.out is not None and Path(args.out).suffix.lower() in (".yaml", ".yml"):
        return _bad_input(f"--out: {args.out} names a YAML file (a config?); the estimate is JSON, e.g. results/estimate.json")
    if args.out is not None and Path(args.out).is_dir():
        return _bad_input(f"--out: {args.out} is a folder; pass a file name, e.g. {Path(args.out) / 'estimate.json'}")
    if not DEFAULT_CONFIG.is_file():
        return _bad_input(
            f"no {DEFAULT_CONFIG} in {Path.cwd()}: the estimate merges --configfile over it, as the workflow does; "
            "run it from the repository's root folder"
        )
    from coopeval.estimate.tokens import FactsWorker

    # litellm's import (2-5 s) starts in a child before anything else; closed if no model needs it
    worker = FactsWorker() if "litellm" not in sys.modules else None
    try:
        try:
            config = load_config([DEFAULT_CONFIG, *args.configfile])
        except ConfigError as exc:
            return _bad_input(str(exc))
        except OSError as exc:  # a YAML error is a ConfigError naming its file
            return _bad_input(f"--configfile: cannot read the config ({exc})")
        from coopeval.estimate.report import estimate_config, render_table
        from coopeval.pipeline.studies import all_cells, empty_studies_error

        cells = all_cells(config)
        empty = empty_studies_error(cells)  # as the workflow refuses it when it parses
        if empty is not None:
            return _bad_input(empty)
        try:
            with contextlib.redirect_stderr(io.StringIO()):  # the simulated cells' progress lines
                estimate = estimate_config(
                    config, latency_s=args.latency, cap=args.cap, every_replicate=args.every_replicate, background=True, facts_worker=worker,
                    processes=min(2, os.cpu_count() or 1), cells=cells,
                )
        except (EnvironmentSettingError, ConfigError) as exc:  # ConfigError: a model file no run could load
            return _bad_input(str(exc))
    finally:
        if worker is not None:
            worker.close()
    problems, over_budget = _run_start_problems(config, estimate)
    payload = estimate.to_json()
    if args.out is not None:
        _write_json(payload, args.out)
    if args.json:
        json.dump(payload, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        from rich.console import Console

        render_table(estimate, Console(width=200))
    from coopeval.estimate.windows import print_window_warnings

    print_window_warnings(config, largest=estimate.largest)  # as the run's onstart prints them, one line each
    if over_budget is not None:
        print(f"coopeval estimate: a run of this config stops before its first call: {over_budget}", file=sys.stderr)
    if problems:  # the words the workflow's onstart stops with
        return _bad_input("invalid configuration:\n  " + "\n  ".join(problems))
    return 0


def _run_start_problems(config: Mapping[str, Any], estimate: Any) -> tuple[list[str], str | None]:
    """What a run of ``config`` would stop on when it starts (:func:`~coopeval.pipeline.studies.run_start_errors`:
    unroutable models, from the estimate's litellm child where it asked; an unusable
    ``cache_dir``) and its budget error (:func:`~coopeval.estimate.report.budget_error`)."""
    from coopeval.agents.registry import routing_error
    from coopeval.estimate.report import budget_error
    from coopeval.pipeline.studies import run_start_errors

    def route(model: str) -> str | None:
        known = estimate.models.get(model)
        return known["routing_error"] if known is not None else routing_error(model)

    return run_start_errors(config, route), budget_error(config, estimate)


def _write_json(payload: Mapping[str, Any], path: str | Path) -> None:
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")


def write_estimate(config: Mapping[str, Any], path: str | Path, latency_s: float = 1.0) -> None:
    """The ``estimate`` rule: estimate the validated ``config``, write its JSON to ``path`` and
    print the tables to stderr (the job's log)."""
    from rich.console import Console

    from coopeval.estimate.report import estimate_config, render_table

    with contextlib.redirect_stderr(io.StringIO()):
        estimate = estimate_config(config, latency_s=latency_s)
    _write_json(estimate.to_json(), path)
    render_table(estimate, Console(file=sys.stderr, width=200))
