"""``coopeval schemas``: every JSON Schema and GBNF grammar the answer formats emit.

One JSON object per decision kind (a line each), over the answer formats of all three studies:
CoopEval's kinds for every registered game (the action distribution with and without the
Mediation delegate token, mediator and contract designs, the votes over as many options as the
game has players, the signature) and the judge's packaged taxonomy; the gossip study's formats
(its trust amounts at the default endowment of 10 and the tripled 30); the evolution study's
strategy and donation texts. For each format and style (``IO``, ``CoT``) it prints what
:func:`coopeval.agents.structured.structured_output_kwargs` sends: the ``response_format``
schema under ``json_schema`` (``null`` for a free-text format, which no schema constrains) and
the grammar under ``grammar``. A schema using a keyword the converter does not enforce
(:data:`coopeval.decisions.schema.ENFORCED_KEYWORDS`) is an error (exit code 1, naming it).

The CI test ``tests/agents/test_answer_schemas_server.py`` compiles each of them on the pinned
llama-server (docs/structured-outputs.md).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from coopeval.agents.grammar import DEFAULT_MAX_REASONING_CHARS

if TYPE_CHECKING:  # the formats and studies are imported when the command runs (``coopeval --help`` stays fast)
    from coopeval.decisions.formats import AnswerFormat

__all__ = ["STYLES", "FormatEntry", "add_schemas_parser", "answer_formats", "emitted", "kinds", "run_schemas"]

STYLES = ("IO", "CoT")



@dataclass(frozen=True)
class FormatEntry:
    """One answer format of a study, as a run builds it."""

    study: str
    fmt: AnswerFormat


def _coopeval_formats() -> list[AnswerFormat]:
    from coopeval.decisions.kinds import coopeval_answer_format
    from coopeval.games import GAMES

    formats: list[AnswerFormat] = []
    for entry in GAMES:
        tokens, n = tuple(entry.game.tokens), entry.game.n_players
        delegate = (*tokens, f"A{len(tokens)}")  # Mediation: the action tokens and the delegate token
        formats += [coopeval_answer_format("action", tokens, n), coopeval_answer_format("action", delegate, n)]
        formats += [coopeval_answer_format(k, tokens, n) for k in ("mediator_design", "contract_design", "mediator_vote", "contract_vote", "sign")]
    formats.append(coopeval_answer_format("judge"))
    return formats


def _gossip_formats() -> list[AnswerFormat]:
    from coopeval.studies.gossip import formats as gossip

    return [
        gossip.DONOR,
        gossip.PD_ACTION,
        gossip.SELLER,
        gossip.BUYER,
        gossip.GOSSIP,
        gossip.SIGNAL,
        gossip.REFLECTION,
        gossip.investor_format(10.0),
        gossip.responder_format(30.0),
    ]


def _evolution_formats() -> list[AnswerFormat]:
    from coopeval.studies.evolution.formats import (
        PUNISHMENT_VARIANTS,
        UNITS,
        DonationFormat,
        StrategyFormat,
    )

    formats: list[AnswerFormat] = [StrategyFormat(protocol="vh"), StrategyFormat(protocol="horibe")]
    formats += [DonationFormat(unit=unit, variant=variant) for unit in UNITS for variant in PUNISHMENT_VARIANTS]
    return formats


def answer_formats() -> list[FormatEntry]:
    """Every distinct answer format of the three studies, in study then build order."""
    entries: list[FormatEntry] = []
    for study, build in (("coopeval", _coopeval_formats), ("gossip", _gossip_formats), ("evolution", _evolution_formats)):
        for fmt in dict.fromkeys(build()):
            entries.append(FormatEntry(study, fmt))
    return entries


def emitted(fmt: AnswerFormat, max_reasoning_chars: int = DEFAULT_MAX_REASONING_CHARS) -> dict[str, Any]:
    """What the agents send for ``fmt``: per style, the ``json_schema`` mode's schema (None when
    the format has none) and the ``grammar`` mode's GBNF text.

    Raises
    ------
    ValueError
        The format's schema uses a keyword the converter does not enforce.
    """
    from coopeval.agents.grammar import gbnf_for
    from coopeval.agents.structured import structured_output_kwargs

    out: dict[str, Any] = {"json_schema": {}, "grammar": {}}
    for style in STYLES:
        sent = structured_output_kwargs("json_schema", fmt, style, max_reasoning_chars)
        out["json_schema"][style] = sent["response_format"]["json_schema"]["schema"] if sent else None
        out["grammar"][style] = gbnf_for(fmt, style, max_reasoning_chars)
    return out


def kinds(selected: Sequence[str] = (), max_reasoning_chars: int = DEFAULT_MAX_REASONING_CHARS) -> list[dict[str, Any]]:
    """One object per decision kind: ``{"kind", "study", "formats": [{"format", "json_schema",
    "grammar"}]}`` (``format`` is the format's repr), restricted to ``selected`` kinds if given.

    Raises
    ------
    ValueError
        A selected kind no answer format has (naming the known ones), or a schema with a keyword
        the converter does not enforce.
    """
    entries = answer_formats()
    known = list(dict.fromkeys(str(e.fmt.kind) for e in entries))
    unknown = [k for k in selected if k not in known]
    if unknown:
        raise ValueError(f"--kind {', '.join(unknown)}: no answer format has this kind; use one of {known}")
    out: dict[str, dict[str, Any]] = {}
    for entry in entries:
        kind = str(entry.fmt.kind)
        if selected and kind not in selected:
            continue
        item = out.setdefault(kind, {"kind": kind, "study": entry.study, "formats": []})
        item["formats"].append({"format": repr(entry.fmt), **emitted(entry.fmt, max_reasoning_chars)})
    return list(out.values())


def add_schemas_parser(subparsers: Any) -> None:
    """Register ``coopeval schemas``."""
    parser = subparsers.add_parser(
        "schemas",
        help="Print every JSON Schema and GBNF grammar the answer formats emit (one JSON object per kind)",
        description=(
            "Print, one JSON object per line and decision kind, the JSON Schema (structured_output:"
            " json_schema) and the GBNF grammar (structured_output: grammar) that the agents send for"
            " every answer format of the three studies, for the IO and CoT styles"
            " (docs/structured-outputs.md)."
        ),
    )
    parser.add_argument("--kind", action="append", default=[], metavar="KIND", help="only this kind (repeatable)")
    parser.add_argument(
        "--max-reasoning-chars",
        type=int,
        default=DEFAULT_MAX_REASONING_CHARS,
        metavar="N",
        help=f"the CoT reasoning cap the grammars and schemas carry (default {DEFAULT_MAX_REASONING_CHARS})",
    )
    parser.set_defaults(handler=run_schemas)


def run_schemas(args: argparse.Namespace) -> int:
    """Handle ``coopeval schemas``: print the objects; exit 0, 1 for a schema with a keyword the
    converter does not enforce, 2 for an unknown ``--kind``."""
    if args.max_reasoning_chars < 0:
        print(f"coopeval schemas: error: --max-reasoning-chars: {args.max_reasoning_chars} must be at least 0", file=sys.stderr)
        return 2
    known = {str(e.fmt.kind) for e in answer_formats()}
    unknown = [k for k in args.kind if k not in known]
    if unknown:
        print(
            f"coopeval schemas: error: --kind {', '.join(unknown)}: no answer format has this kind; use one of {sorted(known)}",
            file=sys.stderr,
        )
        return 2
    try:
        items = kinds(args.kind, args.max_reasoning_chars)
    except ValueError as exc:  # a schema keyword the converter does not enforce
        print(f"coopeval schemas: error: {exc}", file=sys.stderr)
        return 1
    for item in items:
        print(json.dumps(item, ensure_ascii=False))
    return 0
