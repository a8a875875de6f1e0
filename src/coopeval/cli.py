"""The ``coopeval`` command line (``evaluate``, ``reproduce``, ``check-answer``, ``estimate``, ``compare``, ``explore``, ``schemas``, ``slurm-preflight``).

Each subcommand registers itself through an ``add_*_parser(subparsers)`` function listed in
:data:`SUBCOMMANDS`, those of other modules through :func:`lazy_subcommand`; handlers import the
package lazily so ``coopeval --help`` stays fast.
Exit codes: 0 success, 1 computation failure, 2 bad usage or bad input (one-line message on
stderr naming the field and the fix).
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import sys
import warnings
from collections.abc import Callable, Sequence
from typing import Any

from coopeval.core.environment import use_offline_litellm
from coopeval.studies.coopeval.tables.defaults import REPLICATOR_LR, REPLICATOR_STEPS

__all__ = ["SUBCOMMANDS", "CliError", "build_parser", "lazy_subcommand", "main"]


class CliError(Exception):
    """Bad input: reported as one line on stderr with exit code 2."""


class ComputationError(Exception):
    """A valid input whose evaluation failed: exit code 1."""


# --------------------------------------------------------------------------------------------
# evaluate
# --------------------------------------------------------------------------------------------


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
        choices=["strictest", "reference-vertex", "coopeval_vertex"],
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


# --------------------------------------------------------------------------------------------
# check-answer
# --------------------------------------------------------------------------------------------


def add_check_answer_parser(subparsers: Any) -> None:
    """Register ``coopeval check-answer``."""
    from coopeval.decisions.formats import DecisionKind
    from coopeval.pipeline.study_answers import STUDY_KINDS

    parser = subparsers.add_parser(
        "check-answer",
        help="Check one model answer with the decision loop's own parser",
        description=(
            "Parse TEXT (or standard input for '-') exactly as the decision loop does and print one"
            " JSON object: valid, parsed (the normalised answer), error (the re-ask message),"
            " offset (character offset of the JSON object used) and truncated. Exit 0 if the"
            " answer is valid, 1 if not, 2 on a usage error. Every decision kind of the three"
            " studies: CoopEval's (" + ", ".join(str(k) for k in DecisionKind) + ") and "
            + "; ".join(f"{k} ({what})" for k, what in STUDY_KINDS.items()) + "."
        ),
    )
    parser.add_argument("text", metavar="TEXT", help="the answer text, or '-' to read standard input")
    parser.add_argument(
        "--kind", required=True, choices=[*(str(k) for k in DecisionKind), *STUDY_KINDS], help="decision kind"
    )
    parser.add_argument("--protocol", metavar="P", help="evolution kinds: vh or horibe")
    parser.add_argument("--holdings", type=float, metavar="UNITS", help="donation, matrix_probe: the donor's holdings")
    parser.add_argument("--variant", metavar="V", help="donation: none, costly_punishment or partner_choice (default none)")
    parser.add_argument("--percent-base", metavar="B", help="donation (horibe): current or endowment (default current)")
    parser.add_argument("--endowment", type=float, metavar="UNITS", help="donation: the endowment (default 10)")
    parser.add_argument("--resources", type=float, metavar="UNITS", help="investor_action: the investor's holdings")
    parser.add_argument("--received", type=float, metavar="UNITS", help="responder_action: the amount received (3 x investment)")
    parser.add_argument(
        "--actions",
        metavar="A0,A1",
        help="comma-separated action tokens (action: every key, the delegate token included under"
        " Mediation; mediator_design and contract_design: the base actions)",
    )
    parser.add_argument(
        "--n-options",
        type=int,
        metavar="N",
        help="mediator_vote / contract_vote: number of options; mediator_design: number of players (default 2)",
    )
    parser.add_argument("--finish-reason", metavar="R", help="the provider's finish_reason (e.g. length)")
    parser.add_argument("--max-tokens", type=int, metavar="N", help="the max_tokens of the call (named when cut off)")
    parser.set_defaults(handler=run_check_answer)


def _answer_format(kind: str, actions: str | None, n_options: int | None) -> Any:
    """The answer format of ``kind`` built from the CLI options (CliError names a missing one)."""
    from coopeval.decisions.kinds import coopeval_answer_format

    tokens = tuple(t.strip() for t in (actions or "").split(",") if t.strip())
    if n_options is not None and n_options < 1:
        raise CliError(f"--n-options: {n_options} must be at least 1")
    if kind in ("action", "mediator_design", "contract_design") and not tokens:
        raise CliError(f"--actions: required for --kind {kind}; pass the action tokens, e.g. --actions A0,A1")
    if len(set(tokens)) != len(tokens):
        raise CliError(f"--actions: {actions!r} repeats a token; list each action once")
    if kind in ("mediator_vote", "contract_vote") and n_options is None:
        raise CliError(f"--n-options: required for --kind {kind}; pass the number of options voted on")
    return coopeval_answer_format(kind, tokens, n_options or 2)


def run_check_answer(args: argparse.Namespace) -> int:
    """Handle ``coopeval check-answer``: print the verdict; exit 0 valid, 1 invalid."""
    from coopeval.decisions.parsing import check_answer

    if args.max_tokens is not None and args.max_tokens < 1:
        raise CliError(f"--max-tokens: {args.max_tokens} must be at least 1")
    from coopeval.core.errors import ConfigError
    from coopeval.pipeline.study_answers import (
        STUDY_KINDS,
        StudyAnswerContext,
        donation_extras,
        study_answer_format,
    )

    ctx = StudyAnswerContext(
        args.protocol, args.holdings, args.variant, args.percent_base, args.endowment, args.resources, args.received
    )
    kind = str(args.kind)  # a name from the command line, mapped to its format's constructor
    try:
        fmt = study_answer_format(kind, ctx) if kind in STUDY_KINDS else _answer_format(kind, args.actions, args.n_options)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    text = sys.stdin.read() if args.text == "-" else args.text
    verdict = check_answer(fmt, text, args.finish_reason, args.max_tokens)
    out = verdict.to_json()
    if verdict.valid and out["parsed"] is not None:
        out["parsed"] = {**out["parsed"], **donation_extras(kind, ctx, fmt, out["parsed"])}
    print(json.dumps(out, ensure_ascii=False))
    return 0 if verdict.valid else 1


# --------------------------------------------------------------------------------------------
# entry point
# --------------------------------------------------------------------------------------------

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
    add_evaluate_parser,
    lazy_subcommand("coopeval.studies.coopeval.reference.cli:add_reproduce_parser"),
    add_check_answer_parser,
    lazy_subcommand("coopeval.estimate.cli:add_estimate_parser"),
    lazy_subcommand("coopeval.pipeline.compare_cli:add_compare_parser", CliError),
    lazy_subcommand("coopeval.explorer.cli:add_explore_parser"),
    lazy_subcommand("coopeval.pipeline.answer_schemas:add_schemas_parser"),
    lazy_subcommand("coopeval.pipeline.slurm_preflight:add_slurm_preflight_parser"),
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
