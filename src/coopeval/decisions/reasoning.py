"""Reasoning blocks in a model's answer: text that never supplies the answer (issue 13, kind 2).

Reasoning models write their thoughts between tags such as ``<think>…</think>``; a draft answer
in there is not the answer. :func:`reasoning_spans` finds those blocks; :func:`mask_reasoning`
blanks them out with spaces (so character offsets into the original text stay valid) and
:func:`strip_reasoning` removes them (for free-text formats).

Rules
-----
* Tags: the names in :data:`REASONING_TAGS`, case-insensitive, optional attributes
  (``<think type="x">``) and spaces inside the brackets.
* A block runs from an opening tag to the closing tag that brings the nesting depth back to
  zero (any reasoning tag name counts for the depth, so ``<thinking>…</think>`` is one block).
* An opening tag that is never closed: everything after it is reasoning (the answer was cut off,
  or the model never left its reasoning).
* A closing tag with no opening tag before it (providers that put ``<think>`` into the prompt
  template, so the reply starts inside the block): everything before it is reasoning.
* A tag inside a JSON object that decodes strictly is not a tag: ``<`` occurs in JSON only
  within strings, so it is string content, e.g. the placeholder in ``{"reasoning": "<reason>", …}``.

The provider's separate reasoning field (litellm's ``message.reasoning_content``) is never passed
to the parser at all: the decision loop parses only ``Reply.text``.
"""

from __future__ import annotations

import json
import re

__all__ = ["REASONING_TAGS", "mask_reasoning", "reasoning_capped", "reasoning_spans", "strip_reasoning"]

REASONING_TAGS: tuple[str, ...] = (
    "think",
    "thinking",
    "thought",
    "thoughts",
    "reasoning",
    "reason",
    "reflection",
    "reflect",
    "scratchpad",
    "analysis",
    "inner_monologue",
)
"""Tag names whose content is reasoning, never the answer."""

_TAG = re.compile(
    r"<\s*(/?)\s*(" + "|".join(REASONING_TAGS) + r")\b[^<>]*>",
    re.IGNORECASE,
)


_DECODER = json.JSONDecoder()


def _json_object_ranges(text: str) -> list[tuple[int, int]]:
    """Ranges ``[start, end)`` of the top-level JSON objects in ``text`` that decode strictly.

    Each ``{`` not inside an earlier range is tried with :meth:`json.JSONDecoder.raw_decode`;
    a ``{`` that does not begin a complete object is skipped. Sorted and disjoint.
    """
    ranges: list[tuple[int, int]] = []
    start = text.find("{")
    while start != -1:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:
            start = text.find("{", start + 1)
            continue
        if isinstance(value, dict):
            ranges.append((start, end))
        start = text.find("{", end)
    return ranges


def _inside(position: int, ranges: list[tuple[int, int]]) -> bool:
    return any(start < position < end for start, end in ranges)


def reasoning_spans(text: str) -> list[tuple[int, int]]:
    """Character ranges ``[start, end)`` of the reasoning blocks of ``text`` (tags included).

    Sorted and disjoint; empty when ``text`` has no reasoning tag. See the module docstring for
    the rules (unclosed opening tag, orphan closing tag).
    """
    spans: list[tuple[int, int]] = []
    depth = 0
    start = 0
    tags = list(_TAG.finditer(text))
    if tags and "{" in text:
        objects = _json_object_ranges(text)
        tags = [tag for tag in tags if not _inside(tag.start(), objects)]
    for match in tags:
        closing = match.group(1) == "/"
        if not closing:
            if depth == 0:
                start = match.start()
            depth += 1
        elif depth > 0:
            depth -= 1
            if depth == 0:
                spans.append((start, match.end()))
        else:  # orphan closing tag: the reply began inside a block
            spans = [(0, match.end())]
    if depth > 0:
        spans.append((start, len(text)))
    return spans


def _replace_reasoning(text: str, blank: bool) -> str:
    """``text`` with each reasoning block replaced by spaces (``blank``) or removed."""
    parts: list[str] = []
    last = 0
    for start, end in reasoning_spans(text):
        parts.append(text[last:start])
        if blank:
            parts.append(" " * (end - start))
        last = end
    parts.append(text[last:])
    return "".join(parts)


def mask_reasoning(text: str) -> str:
    """``text`` with every reasoning block replaced by as many spaces (same length, same offsets)."""
    return _replace_reasoning(text, blank=True)


def strip_reasoning(text: str) -> str:
    """``text`` without its reasoning blocks (the visible answer of a free-text format)."""
    return _replace_reasoning(text, blank=False)


def reasoning_capped(text: str, answer_offset: int | None, cap: int | None) -> bool:
    """Whether the reasoning before the answer object filled the embedded model's CoT cap.

    The CoT grammar (:func:`coopeval.agents.grammar.gbnf_for`) admits at most ``cap``
    reasoning characters, then a newline, then the object; reasoning of ``cap`` characters means
    the grammar (not the model) ended it, so its last sentence may be incomplete (issue 13,
    12(b)). False when there is no cap (remote models, IO style) or no object offset.
    """
    if cap is None or answer_offset is None:
        return False
    reasoning = text[:answer_offset]
    if reasoning.endswith("\n"):
        reasoning = reasoning[:-1]
    return len(reasoning) >= cap
