"""``coopeval compare STORE --study S --a A --b B``: one paired comparison as a JSON object.

Prints exactly the keys of :data:`coopeval.comparison.record.JSON_FIELDS`; a value that cannot
be computed is ``null`` and ``note`` says why (never NaN). Each study that supports comparisons
is listed in :data:`STUDY_COMPARISONS` with the function that reads its store.
"""

from __future__ import annotations

import argparse
import importlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from coopeval.evaluation.dr_rules import DR_RULES

__all__ = ["STUDY_COMPARISONS", "add_compare_parser"]

STUDY_COMPARISONS: dict[str, str] = {
    "coopeval": "coopeval.studies.coopeval.compare_store:store_comparison",
    "gossip": "coopeval.studies.gossip.comparisons:store_comparison",
    "evolution": "coopeval.studies.evolution.comparisons:store_comparison",
}
"""Study name → ``module:function`` returning one ``comparisons`` row from a store (imported
when used, so ``coopeval --help`` stays fast)."""


def _comparison_function(study: str) -> Callable[..., dict[str, Any]]:
    module, name = STUDY_COMPARISONS[study].split(":")
    function: Callable[..., dict[str, Any]] = getattr(importlib.import_module(module), name)
    return function


def add_compare_parser(subparsers: Any, usage_error: type[Exception]) -> None:
    """Register ``coopeval compare``; bad input raises ``usage_error`` (the CLI's exit-2 error)."""
    from coopeval.comparison.multiplicity import CORRECTIONS, DEFAULT_CORRECTION

    parser = subparsers.add_parser(
        "compare",
        help="paired comparison of two agents with a cluster-bootstrap interval and a permutation p-value",
        description=(
            "Compare two agents of a study on the same co-player profiles, games, mechanisms and"
            " replicates (docs/comparisons.md). Prints one JSON object with the fields a, b, metric,"
            " delta, ci_low, ci_high, p_value, p_adjusted, correction, n_pairs, n_clusters, mde,"
            " method, note; a value that cannot be computed is null and note says why."
        ),
    )
    parser.add_argument("store", metavar="STORE", help="the DuckDB store (results/coopeval.duckdb)")
    parser.add_argument("--study", required=True, help=f"study ({', '.join(STUDY_COMPARISONS)})")
    parser.add_argument("--a", required=True, metavar="A", help="first agent or model (delta = metric(A) − metric(B))")
    parser.add_argument("--b", required=True, metavar="B", help="second agent")
    parser.add_argument("--metric", default=None, help="metric (default: the study's first; coopeval: Mean, Fitness, DR; gossip: cooperation_ratio_mean,"
                        " discounted_return_mean, gini, utility_gap; evolution: donation_fraction, mean_final, robustness)")
    parser.add_argument("--game", default=None, help="only this game (gossip: testbed; evolution: variant; default: every one, pooled)")
    parser.add_argument("--mechanism", default=None, help="only this mechanism (gossip: condition; evolution: protocol; default: every one, pooled)")
    parser.add_argument("--correction", default=DEFAULT_CORRECTION, choices=sorted(CORRECTIONS),
                        help=f"multiplicity correction over all pairs of the selection (default {DEFAULT_CORRECTION})")
    parser.add_argument("--dr-rule", default=None, help="coopeval --metric DR: the deviation-rating rule of the table's DR ranks"
                        f" ({', '.join(DR_RULES)}; default {DR_RULES[0]})")
    parser.add_argument("--seed", type=int, default=0, help="seed of the bootstrap and permutation resamples (default 0)")
    parser.set_defaults(handler=lambda args: run_compare(args, usage_error))


def run_compare(args: argparse.Namespace, usage_error: type[Exception]) -> int:
    """Handle ``coopeval compare``: print the JSON object; exit 0.

    Raises
    ------
    usage_error
        For an unknown study, agent, metric, mechanism, game or DR rule (listing the valid
        names), a missing store, or the same agent twice. Two agents with nothing to compare
        (no shared cell or replicate, fewer than 2 clusters) are not an error: their numbers
        are null and ``note`` says why.
    """
    import duckdb

    from coopeval.comparison.errors import UnknownNameError
    from coopeval.comparison.record import to_json
    from coopeval.core.duckdb_settings import locked_store_message

    if args.study not in STUDY_COMPARISONS:
        raise usage_error(f"--study: unknown {args.study!r}; valid names: {', '.join(sorted(STUDY_COMPARISONS))}")
    if not Path(args.store).is_file():
        raise usage_error(f"STORE: {args.store} is not a file; pass the DuckDB store a run wrote (results/coopeval.duckdb)")
    options: dict[str, Any] = {"mechanism": args.mechanism, "game": args.game, "correction": args.correction, "seed": args.seed}
    if args.metric is not None:
        options["metric"] = args.metric
    if args.dr_rule is not None:
        if args.study != "coopeval":
            raise usage_error(f"--dr-rule: only --study coopeval has deviation ratings, not {args.study!r}; drop --dr-rule")
        options["dr_rule"] = args.dr_rule
    try:
        row = _comparison_function(args.study)(args.store, args.a, args.b, **options)
    except UnknownNameError as exc:
        raise usage_error(str(exc)) from exc
    except ValueError as exc:
        raise usage_error(str(exc)) from exc
    except duckdb.Error as exc:  # not a DuckDB file, or a store without the study's tables
        if (locked := locked_store_message(args.store, exc)) is not None:
            raise usage_error(f"STORE: {locked}") from None
        raise usage_error(
            f"STORE: {args.store} cannot be read as a store with the {args.study} study's tables ({str(exc).splitlines()[0]});"
            " pass the DuckDB store of a run that played the study"
        ) from None
    print(json.dumps(to_json(row), ensure_ascii=False, allow_nan=False))
    return 0
