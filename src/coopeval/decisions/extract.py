"""Find the answer's JSON object in a model's free-text reply (docs/protocol/answers.md#parsing "Extraction", docs/protocol/design-checks.md#what-is-judged;
issue 13, kinds 1 and 2).

Rules
-----
1. Reasoning blocks (``<think>…</think>`` and the other tags of
   :mod:`coopeval.decisions.reasoning`) are blanked out first: a draft inside them is never the
   answer.
2. The rest is scanned for **object-like spans**: a ``{`` followed (after optional whitespace)
   by ``"``, ``'``, ``}``, a bare key and ``:``, or the end of the text, up to its matching
   ``}`` (braces inside double-quoted strings do not count). A span that never closes runs to
   the end of the text (the reply was cut off). Spans nested in a span are part of it. Braces
   that do not start an object-like span (LaTeX ``\\frac{1}{2}``, prose ``{A0, A1}``) are
   skipped, so an object inside them is still found.
3. The answer is the **last** span (the **first** for the judge, whose answer begins with it).
   It must decode as strict JSON (no trailing comma, no ``%``, no single quotes, no comments,
   no ``NaN``), or the attempt is invalid and the error names what is wrong; an earlier or later
   draft is never used instead.

:func:`locate_answer_object` returns the decoded object and its character offset in the
original reply (offsets are kept because reasoning blocks are blanked, not removed).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.reasoning import mask_reasoning
from coopeval.decisions.texts import ENGINE_TEXTS

__all__ = [
    "JSONObject",
    "ObjectSpan",
    "extract_first_json_object",
    "extract_last_json_object",
    "iter_json_objects",
    "locate_answer_object",
    "object_spans",
]



class JSONObject(dict[str, Any]):
    """A decoded JSON object that remembers keys which occurred more than once.

    JSON allows duplicate keys syntactically and ``json`` keeps the last value silently; the
    validators use :attr:`duplicate_keys` to reject such answers with a precise message.
    """

    duplicate_keys: tuple[str, ...] = ()


def _object_from_pairs(pairs: list[tuple[str, Any]]) -> JSONObject:
    obj = JSONObject()
    duplicates: list[str] = []
    for key, value in pairs:
        if key in obj and key not in duplicates:
            duplicates.append(key)
        obj[key] = value
    if duplicates:
        obj.duplicate_keys = tuple(duplicates)
    return obj


def excerpt(value: str, limit: int = 60) -> str:
    """``value`` on one line (whitespace runs collapsed), cut to ``limit`` characters."""
    shown = " ".join(value.split())
    return shown if len(shown) <= limit else shown[: limit - 3] + "..."


def _reject_constant(name: str) -> Any:
    raise ValueError(ENGINE_TEXTS.render("error_not_a_number", name=name))


_DECODER = json.JSONDecoder(object_pairs_hook=_object_from_pairs, parse_constant=_reject_constant)

_OBJECT_START = re.compile(r"\{\s*(?:[\"'}]|[A-Za-z0-9_$-]+\s*(?::|$)|$)")
"""What makes a ``{`` the start of an object-like span (see the module docstring)."""


@dataclass(frozen=True)
class ObjectSpan:
    """An object-like span ``text[start:end]``; ``closed`` is False when it runs to the end."""

    start: int
    end: int
    closed: bool


def _matching_end(text: str, start: int) -> int:
    """Index after the ``}`` matching the ``{`` at ``start``, or -1 if it never closes."""
    depth = 0
    in_string = False
    i = start
    n = len(text)
    while i < n:
        ch = text[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def object_spans(text: str) -> list[ObjectSpan]:
    """Every top-level object-like span of ``text`` (reasoning blocks not removed), in order."""
    spans: list[ObjectSpan] = []
    start = text.find("{")
    while start != -1:
        if _OBJECT_START.match(text, start) is None:
            start = text.find("{", start + 1)
            continue
        end = _matching_end(text, start)
        if end == -1:
            spans.append(ObjectSpan(start, len(text), closed=False))
            break
        spans.append(ObjectSpan(start, end, closed=True))
        start = text.find("{", end)
    return spans


def _decode(span_text: str, which: str) -> JSONObject:
    """Strictly decode one closed span; :class:`AnswerError` (code ``syntax``) says why not."""
    try:
        value = _DECODER.decode(span_text)
    except json.JSONDecodeError as exc:
        if span_text[exc.pos : exc.pos + 1] in ("}", "]") and span_text[: exc.pos].rstrip().endswith(","):
            problem = ENGINE_TEXTS.render("error_trailing_comma", bracket=span_text[exc.pos])
        else:
            near = excerpt(span_text[exc.pos :], 20)
            problem = exc.msg[0].lower() + exc.msg[1:]  # the decoder's own words
            problem = ENGINE_TEXTS.render("error_json_problem_at", problem=problem, near=near) if near else (
                ENGINE_TEXTS.render("error_json_problem_at_end", problem=problem)
            )
        raise _invalid_json(which, span_text, problem) from None
    except ValueError as exc:  # NaN/Infinity, or an integer too long to convert
        raise _invalid_json(which, span_text, str(exc)) from None
    if not isinstance(value, JSONObject):  # pragma: no cover - a span always starts with "{"
        raise AnswerError(ENGINE_TEXTS.render("error_no_json"), code="no_json")
    return value


def _invalid_json(which: str, span_text: str, problem: str) -> AnswerError:
    return AnswerError(
        ENGINE_TEXTS.render(
            "error_invalid_json", which=which, excerpt=excerpt(span_text), problem=problem, hint=ENGINE_TEXTS.render("error_strict_hint")
        ),
        code="syntax",
    )


def locate_answer_object(text: str, *, first: bool = False) -> tuple[JSONObject, int]:
    """The answer's JSON object and its character offset in ``text`` (rules in the module doc).

    Parameters
    ----------
    text:
        The model's raw reply.
    first:
        Use the first object-like span instead of the last (the judge's contract, docs/protocol/design-checks.md#what-is-judged).

    Raises
    ------
    AnswerError
        ``no_json``: no object-like span outside reasoning blocks; ``syntax``: the chosen span is
        not closed or not strict JSON (the message names the problem).
    """
    visible = mask_reasoning(text)
    spans = object_spans(visible)
    if not spans:
        raise AnswerError(ENGINE_TEXTS.render("error_no_json"), code="no_json")
    span = spans[0] if first else spans[-1]
    which = ENGINE_TEXTS.render("error_which_first" if first else "error_which_last")
    if not span.closed:
        raise AnswerError(
            ENGINE_TEXTS.render("error_not_closed", which=which, excerpt=excerpt(visible[span.start :])),
            code="syntax",
            offset=span.start,
        )
    try:
        return _decode(visible[span.start : span.end], which), span.start
    except AnswerError as exc:
        exc.offset = span.start
        raise


def iter_json_objects(text: str) -> Iterator[JSONObject]:
    """Yield every object-like span of ``text`` that decodes strictly, in order (reasoning
    blocks blanked). A diagnostic helper: the answer is chosen by :func:`locate_answer_object`."""
    visible = mask_reasoning(text)
    for span in object_spans(visible):
        if span.closed:
            try:
                yield _decode(visible[span.start : span.end], "")
            except AnswerError:
                continue


def extract_last_json_object(text: str) -> JSONObject:
    """The answer object of an action, design, vote or signature reply (docs/protocol/answers.md#parsing).

    Raises
    ------
    AnswerError
        See :func:`locate_answer_object`.
    """
    return locate_answer_object(text)[0]


def extract_first_json_object(text: str) -> JSONObject:
    """The answer object of a judge reply (docs/protocol/design-checks.md#what-is-judged: the answer begins with it).

    Raises
    ------
    AnswerError
        See :func:`locate_answer_object`.
    """
    return locate_answer_object(text, first=True)[0]
