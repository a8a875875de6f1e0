"""Validate model answers against their :class:`AnswerFormat` (docs/protocol/answers.md#parsing, docs/protocol/design-checks.md#what-is-judged "Our contract").

The rules live in the format classes (:mod:`coopeval.decisions.formats`); this module is the
stable entry point. :func:`parse_answer` extracts the JSON object from the raw text (the last
one; the first one for the judge) and validates it, returning a normalised object or raising
:class:`AnswerError` whose message is fit to show the model in a re-ask.
:func:`validate_answer` applies the same rules to an already decoded object.

Versioning
----------
``PARSER_VERSION`` is part of every cell hash (docs/protocol/engineering.md#cells): a new version reruns the
cells, which replay every call from the cache for free. **Bump it** whenever a change can alter,
for some input text, (a) whether it is accepted, (b) the normalised object returned, or (c) the
text of the error message (error messages are sent back to the model in re-asks, so they change
the following attempts). Pure refactors, docstrings and new tests do not need a bump.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.extract import locate_answer_object
from coopeval.decisions.formats import (
    FALLBACK_LABEL,
    TOTAL_PERCENT,
    AnswerFormat,
    TextAnswerFormat,
    normalise_label,
)
from coopeval.decisions.reasoning import strip_reasoning
from coopeval.decisions.texts import ENGINE_TEXTS

__all__ = [
    "FALLBACK_LABEL",
    "PARSER_VERSION",
    "TOTAL_PERCENT",
    "AnswerCheck",
    "check_answer",
    "cut_off_message",
    "normalise_label",
    "parse_answer",
    "validate_answer",
]

PARSER_VERSION = 3
"""2: the last object-like span must decode strictly (no fallback to an earlier draft), reasoning
blocks never supply the answer, cut-off answers are named in the error (issue 13).
3: a reasoning tag inside a strictly decoding JSON object is string content, not a block."""

TRUNCATED_FINISH_REASONS = frozenset({"length", "max_tokens"})
"""Provider finish reasons meaning the token limit cut the answer off (litellm maps Anthropic's
``max_tokens`` to ``length``; both are accepted)."""


@dataclass(frozen=True)
class AnswerCheck:
    """The verdict on one reply, as the decision loop and ``coopeval check-answer`` see it.

    Attributes
    ----------
    valid:
        The reply is a usable answer.
    parsed:
        The normalised answer (None when invalid).
    error:
        The message sent back to the model in the re-ask ("" when valid).
    code:
        :attr:`AnswerError.code` of the failure ("" when valid); ``truncated`` when the cut-off
        made the reply unusable.
    offset:
        Character offset in the reply of the JSON object used, or of the rejected object-like
        span (None for free-text formats and when the reply has no object-like span).
    truncated:
        The provider reported that the token limit cut the reply off (``finish_reason``).
    """

    valid: bool
    parsed: dict[str, Any] | None
    error: str
    code: str
    offset: int | None
    truncated: bool

    def to_json(self) -> dict[str, Any]:
        """The JSON object ``coopeval check-answer`` prints."""
        return {
            "valid": self.valid,
            "parsed": self.parsed,
            "error": self.error or None,
            "offset": self.offset,
            "truncated": self.truncated,
        }


def cut_off_message(max_tokens: int | None, error: str) -> str:
    """The re-ask message of a reply the token limit cut off: says where, then what is missing."""
    limit = ENGINE_TEXTS.render("error_cut_off_at", max_tokens=max_tokens) if max_tokens is not None else (
        ENGINE_TEXTS.render("error_cut_off_unknown")
    )
    return ENGINE_TEXTS.render("error_cut_off", limit=limit, error=error)


def check_answer(
    fmt: AnswerFormat,
    text: str,
    finish_reason: str | None = None,
    max_tokens: int | None = None,
    *,
    lenient: bool = False,
) -> AnswerCheck:
    """Judge one reply: the one parser of the decision loop and of ``coopeval check-answer``.

    Parameters
    ----------
    fmt:
        The decision's contract.
    text:
        The reply's content (never the provider's separate reasoning field).
    finish_reason:
        The provider's finish reason; ``"length"`` (or ``"max_tokens"``) marks a reply cut off
        by the token limit.
    max_tokens:
        The limit that applied, named in the re-ask of a cut-off reply (None: not known).
    lenient:
        ``compat.lenient_contract_ints`` (see :func:`parse_answer`).

    Returns
    -------
    AnswerCheck
        A JSON format's reply is valid when its answer object (:mod:`coopeval.decisions.extract`)
        passes the format's rules, cut off or not (the closing brace proves the object complete).
        A free-text format's reply is parsed without its reasoning blocks, and a cut-off one is
        always invalid (its last word may be cut). An invalid cut-off reply's error starts with
        "the answer was cut off at max_tokens = N".
    """
    truncated = finish_reason in TRUNCATED_FINISH_REASONS
    offset: int | None = None
    try:
        if isinstance(fmt, TextAnswerFormat):
            parsed = fmt.parse(strip_reasoning(text), lenient=lenient)
            if truncated:
                raise AnswerError(ENGINE_TEXTS.render("error_truncated"), code="truncated")
        else:
            obj, offset = locate_answer_object(text, first=fmt.first_object)
            parsed = fmt.validate(obj, lenient=lenient)
    except AnswerError as exc:
        error, code = exc.message, exc.code
        offset = exc.offset if exc.offset is not None else offset
        if truncated:
            error, code = cut_off_message(max_tokens, error), "truncated"
        return AnswerCheck(False, None, error, code, offset, truncated)
    return AnswerCheck(True, parsed, "", "", offset, truncated)


def parse_answer(fmt: AnswerFormat, text: str, *, lenient: bool = False) -> dict[str, Any]:
    """Extract and validate the answer to one decision (:meth:`AnswerFormat.parse`).

    Parameters
    ----------
    fmt:
        The decision's contract.
    text:
        The model's raw response. The **last** object-like span outside reasoning blocks is
        the answer (the first for the judge's :class:`~coopeval.decisions.formats.JudgeLabels`)
        and must decode strictly; fences and prose around it are fine (docs/protocol/answers.md#parsing,
        :mod:`coopeval.decisions.extract`).
    lenient:
        Only for :class:`~coopeval.decisions.formats.ContractDesign`: reproduce the reference's
        ``compat.lenient_contract_ints`` (floats truncated toward zero, numeric strings
        accepted; docs/protocol/reference-data.md#compatibility-flags). Ignored otherwise.

    Returns
    -------
    The validated, normalised object; its shape is documented on each format class.

    Raises
    ------
    AnswerError
        No JSON object, or the object breaks the contract; the message says precisely why.
    """
    result = check_answer(fmt, text, lenient=lenient)
    if not result.valid:
        raise AnswerError(result.error, code=result.code)
    assert result.parsed is not None
    return result.parsed


def validate_answer(fmt: AnswerFormat, obj: Mapping[str, Any], *, lenient: bool = False) -> dict[str, Any]:
    """Validate a decoded JSON object against ``fmt`` (:meth:`AnswerFormat.validate`).

    Raises
    ------
    AnswerError
        The object breaks the contract.
    """
    return fmt.validate(obj, lenient=lenient)
