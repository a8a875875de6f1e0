"""``coopeval check-answer TEXT --kind K``: parse one model answer exactly as the decision loop
does (:func:`coopeval.decisions.parsing.check_answer`) and print the verdict as one JSON object.
CoopEval's kinds are built by :func:`coopeval.decisions.kinds.coopeval_answer_format` from the
``--actions`` and ``--n-options`` flags, the other studies' by
:mod:`coopeval.pipeline.study_answers`.

Bad input raises :class:`~coopeval.core.errors.CliError` naming the flag and the fix (exit code 2).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from coopeval.core.errors import CliError

__all__ = ["add_check_answer_parser", "run_check_answer"]


def add_check_answer_parser(subparsers: Any) -> None:
    """Register ``coopeval check-answer``."""
    from coopeval.decisions.formats import DecisionKind
    from coopeval.pipeline.study_answers import CONTEXT_OPTIONS, STUDY_KINDS

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
    parser.add_argument("--finish-reason", metavar="R", help="the provider's finish_reason (e.g. length)")
    parser.add_argument("--max-tokens", type=int, metavar="N", help="the max_tokens of the call (named when cut off)")
    for field, (value_type, metavar, text) in CONTEXT_OPTIONS.items():
        parser.add_argument("--" + field.replace("_", "-"), type=value_type, metavar=metavar, help=text)
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
        CONTEXT_OPTIONS,
        STUDY_KINDS,
        StudyAnswerContext,
        donation_extras,
        study_answer_format,
    )

    ctx = StudyAnswerContext(**{field: getattr(args, field) for field in CONTEXT_OPTIONS})
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
