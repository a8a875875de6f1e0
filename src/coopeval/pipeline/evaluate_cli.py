"""``coopeval evaluate TENSOR``: Mean, replicator Fitness and deviation ratings of a symmetric
metagame tensor given as JSON (or built from a reference ``matchup_payoffs.json``), printed as
one JSON object (CoopEval, arXiv 2604.15267, docs/protocol/evaluation.md; docs/cli.md).

Bad input raises :class:`~coopeval.core.errors.CliError` naming the field and the fix (exit
code 2); a valid input whose evaluation fails raises
:class:`~coopeval.core.errors.ComputationError` (exit code 1).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import warnings
from typing import Any

from coopeval.core.errors import CliError, ComputationError
from coopeval.evaluation.dr_rules import DR_RULE_ALIASES
from coopeval.studies.coopeval.tables.defaults import REPLICATOR_LR, REPLICATOR_STEPS

__all__ = ["add_evaluate_parser", "run_evaluate"]


def add_evaluate_parser(subparsers: Any) -> None:
    """Register ``coopeval evaluate``."""
    parser = subparsers.add_parser(
        "evaluate",
        help="Mean, replicator Fitness and deviation ratings of a metagame tensor",
        description=(
            "Evaluate a symmetric metagame (CoopEval, arXiv 2604.15267, docs/protocol/evaluation.md). TENSOR is a"
            ' JSON file {"agents": [names], "payoffs": nested list} where payoffs[i][j]...[k]'
            " is the mean payoff of focal agent i whose co-players are j..k ('payoff_tensor'"
            " is accepted as an alias of 'payoffs'). Prints one JSON object."
        ),
    )
    parser.add_argument("tensor", nargs="?", metavar="TENSOR", help="tensor JSON file")
    parser.add_argument(
        "--from-matchups",
        metavar="FILE",
        help="build the tensor from a reference matchup_payoffs.json instead of TENSOR",
    )
    parser.add_argument(
        "--initial-population",
        metavar="JSON",
        help=(
            "replicator start: a JSON list (or {agent: share}) inline or in a file; default"
            " uniform. Every share must be positive (a type at 0 stays at 0) unless"
            " --allow-zero-shares is given"
        ),
    )
    parser.add_argument(
        "--allow-zero-shares",
        action="store_true",
        help="accept a start with zero shares (those types stay extinct in every step)",
    )
    parser.add_argument("--steps", type=int, default=REPLICATOR_STEPS, help=f"replicator steps (default {REPLICATOR_STEPS})")
    parser.add_argument("--lr", type=float, default=REPLICATOR_LR, help=f"replicator learning rate ({REPLICATOR_LR})")
    parser.add_argument(
        "--dr-rule",
        default="strictest",
        choices=list(DR_RULE_ALIASES),
        help="deviation-rating rule (default strictest)",
    )
    parser.set_defaults(handler=run_evaluate)


def _not_json(field: str, path: str, exc: ValueError) -> CliError:
    """The error for a file that does not decode as JSON (``exc``: JSONDecodeError or UnicodeDecodeError)."""
    detail = f"{exc.msg}, line {exc.lineno}" if isinstance(exc, json.JSONDecodeError) else "not UTF-8 text"
    return CliError(f"{field}: {path!r} is not valid JSON ({detail})")


def _load_json_file(path: str, field: str) -> Any:
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except OSError as exc:
        raise CliError(f"{field}: cannot read {path!r} ({exc.strerror}); pass an existing file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise _not_json(field, path, exc) from None


def _parse_tensor(data: Any) -> tuple[list[str], Any]:
    import numpy as np

    if not isinstance(data, dict):
        raise CliError('TENSOR: expected a JSON object {"agents": [...], "payoffs": [...]}')
    agents = data.get("agents")
    if not isinstance(agents, list) or not agents or not all(isinstance(a, str) for a in agents):
        raise CliError("agents: missing or not a non-empty list of strings; list the agent names")
    if len(set(agents)) != len(agents):
        raise CliError("agents: duplicate names; give each agent a distinct name")
    if "payoffs" in data and "payoff_tensor" in data:
        raise CliError("payoffs: both 'payoffs' and 'payoff_tensor' given; keep only one")
    raw = data.get("payoffs", data.get("payoff_tensor"))
    if raw is None:
        raise CliError("payoffs: missing; add 'payoffs' (or 'payoff_tensor') as a nested list")
    try:
        tensor = np.array(raw, dtype=float)
    except (TypeError, ValueError):
        raise CliError(
            "payoffs: not a rectangular nested list of numbers; every row needs len(agents) numbers"
        ) from None
    size = len(agents)
    if tensor.ndim < 2:
        raise CliError(
            f"payoffs: {tensor.ndim}-dimensional; nest it {size} x {size} (x ...) for 2+ players"
        )
    if len(set(tensor.shape)) != 1:
        raise CliError(
            f"payoffs: shape {list(tensor.shape)} is not cubic; every axis needs the same length"
        )
    if tensor.shape[0] != size:
        raise CliError(
            f"agents: {size} names but payoffs has {tensor.shape[0]} entries per axis;"
            " give one name per tensor index"
        )
    if not np.isfinite(tensor).all():
        cell = [int(i) for i in np.argwhere(~np.isfinite(tensor))[0]]
        raise CliError(f"payoffs: cell {cell} is null, NaN or infinite; give every cell a number")
    tol = 1e-9 * max(1.0, float(np.abs(tensor).max()))
    for axis in range(2, tensor.ndim):
        swapped = np.swapaxes(tensor, 1, axis)
        if not np.allclose(tensor, swapped, rtol=0.0, atol=tol):
            cell = [int(i) for i in np.argwhere(np.abs(tensor - swapped) > tol)[0]]
            raise CliError(
                f"payoffs: not symmetric in the co-player axes (cell {cell} differs after"
                " swapping co-players); pool seats as in docs/protocol/evaluation.md#payoff-tensor"
            )
    return agents, tensor


def _parse_population(text: str, agents: list[str], allow_zero: bool = False) -> list[float]:
    field = "--initial-population"
    value = _load_json_file(text, field) if os.path.isfile(text) else None
    if value is None:
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            raise CliError(
                f"{field}: neither a file nor a JSON list; pass e.g. '[0.5, 0.5]' or a file path"
            ) from None
    if isinstance(value, dict):
        unknown = sorted(set(value) - set(agents))
        if unknown or len(value) != len(agents):
            raise CliError(
                f"{field}: keys must be exactly the agents {agents}; got {sorted(value)}"
            )
        value = [value[a] for a in agents]
    if not isinstance(value, list) or len(value) != len(agents):
        raise CliError(f"{field}: expected a list of {len(agents)} shares, one per agent")
    if not all(isinstance(v, int | float) and not isinstance(v, bool) for v in value):
        raise CliError(f"{field}: shares must be numbers")
    shares = [float(v) for v in value]
    if not all(math.isfinite(v) and v >= 0 for v in shares):
        raise CliError(f"{field}: shares must be finite and non-negative")
    if abs(sum(shares) - 1.0) > 1e-9:
        raise CliError(f"{field}: shares sum to {sum(shares)!r}; they must sum to 1")
    zero = [a for a, v in zip(agents, shares, strict=True) if v == 0]
    if zero and not allow_zero:
        raise CliError(
            f"{field}: agents {zero} start with share 0 and would stay at 0 in every step; give"
            " every agent a positive share, or pass --allow-zero-shares to keep them out"
        )
    return shares


def run_evaluate(args: argparse.Namespace) -> int:
    """Handle ``coopeval evaluate``: validate, evaluate, print one JSON object."""
    if args.steps < 0:
        raise CliError(f"--steps: {args.steps} is negative; pass 0 or more steps")
    if not (math.isfinite(args.lr) and args.lr > 0):
        raise CliError(f"--lr: {args.lr} must be a finite positive number")
    if (args.tensor is None) == (args.from_matchups is None):
        raise CliError("TENSOR: pass exactly one of TENSOR or --from-matchups FILE")

    from coopeval.evaluation.deviation import DeviationRatingError
    from coopeval.evaluation.metagame import evaluate_metagame
    from coopeval.evaluation.replicator import ExtinctStartWarning
    from coopeval.evaluation.tensor import build_payoff_tensor
    from coopeval.studies.coopeval.reference.payoffs import load_reference_matchups

    if args.from_matchups is not None:
        try:
            agents, tensor = build_payoff_tensor(load_reference_matchups(args.from_matchups))
        except OSError as exc:
            raise CliError(f"--from-matchups: cannot read {args.from_matchups!r} ({exc.strerror})") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise _not_json("--from-matchups", args.from_matchups, exc) from None
        except (ValueError, KeyError, TypeError) as exc:
            raise CliError(f"--from-matchups: {exc}") from None
    else:
        agents, tensor = _parse_tensor(_load_json_file(args.tensor, "TENSOR"))
    initial = None
    if args.initial_population is not None:
        initial = _parse_population(args.initial_population, agents, args.allow_zero_shares)
    try:
        with warnings.catch_warnings():
            # zero shares were rejected above or accepted with --allow-zero-shares
            warnings.simplefilter("ignore", ExtinctStartWarning)
            result = evaluate_metagame(
                agents,
                tensor,
                initial_population=initial,
                steps=args.steps,
                lr=args.lr,
                dr_rule=args.dr_rule,
            )
    except DeviationRatingError as exc:
        raise ComputationError(f"deviation ratings failed: {exc}") from None
    except ValueError as exc:
        raise CliError(str(exc)) from None
    try:
        text = json.dumps(result, indent=2, allow_nan=False)
    except ValueError:
        raise ComputationError(
            "the result holds a NaN or infinite number (a bug: please report the tensor)"
        ) from None
    print(text)
    return 0
