"""Compile an :class:`AnswerFormat` into a llama.cpp GBNF grammar (constrained decoding).

The embedded local model (``local/smollm2-135m``) cannot follow the JSON contract on its own
(docs/protocol/engineering.md#embedded-model: 0/10 valid answers unconstrained, 0/10 correct sums with a JSON schema), so
every local call is decoded under a grammar that admits *only* answers the parser accepts.

Each answer format owns the rules of its JSON object (:meth:`AnswerFormat.grammar`, one fixed
whitespace form, as the prompts show it; see the format classes in
:mod:`coopeval.decisions.formats`); this module adds the style's head and the token budget.

Style ``"IO"``: the JSON object only. Style ``"CoT"``: free reasoning of at most
``max_reasoning_chars`` printable-ASCII characters (never ``{``) ending with a sentence
terminator (:data:`SENTENCE_END`), a newline, then the JSON object; or no reasoning (just the
newline). A model still writing when it reaches the cap gets the terminator forced as its
last character: its last sentence may be incomplete, and the decision is flagged
``reasoning_truncated`` (:func:`coopeval.decisions.reasoning.reasoning_capped`).
A :class:`~coopeval.decisions.formats.TextAnswerFormat` (free text) brings its complete
grammar and length bound, used as they are whatever the style. All characters the grammar
admits are single-byte, so a completion has at most
:func:`max_output_chars` tokens (every token decodes to at least one byte); a ``max_tokens`` of
:func:`max_tokens_for` therefore can never cut an answer short.
"""

from __future__ import annotations

import functools
from typing import Literal

from coopeval.decisions.formats import (
    DEFAULT_CONTRACT_BOUNDS,
    DEFAULT_JUDGE_REASONING_CHARS,
    JUDGE_MAX_LABELS,
    AnswerFormat,
    TextAnswerFormat,
)

__all__ = [
    "COT_GRAMMAR_VERSION",
    "DEFAULT_CONTRACT_BOUNDS",
    "DEFAULT_JUDGE_REASONING_CHARS",
    "DEFAULT_MAX_REASONING_CHARS",
    "GBNF_MAX_REPEAT",
    "JUDGE_MAX_LABELS",
    "SENTENCE_END",
    "Style",
    "bounded_repeat",
    "gbnf_for",
    "max_output_chars",
    "max_tokens_for",
]

Style = Literal["CoT", "IO"]

DEFAULT_MAX_REASONING_CHARS = 320
"""CoT reasoning cap in characters (~75 SmolLM2 tokens, ~1-1.5 s of generation on 2 cores).

SmolLM2-135M either skips the reasoning (answers at once) or rambles until the cap, so the cap
sets the CoT cost almost alone. 320 characters is four times the judge's 80-character minimum
(docs/protocol/design-checks.md#what-is-judged), leaving judgeable text after the model's frequent preambles ("Here is the JSON:",
code fences), while a CoT decision stays under ~2x the cost of an IO one."""

# printable ASCII (0x20-0x7E) and newline, minus "{": keeps the final JSON object the only one
_REASONING_CHAR = r"[\x20-\x7A\x7C-\x7E\n]"

COT_GRAMMAR_VERSION = 2
"""Version of the CoT head below (2: the reasoning ends with :data:`SENTENCE_END`). The local
agent puts it into its ``params`` (the cache key): bump it when the CoT head changes."""

SENTENCE_END = "[.!?:]"
"""The characters the CoT reasoning must end with (GBNF class): a full stop, question or
exclamation mark, or a colon ("… my answer:"), so the reasoning never stops mid-word by choice."""


def gbnf_for(
    fmt: AnswerFormat,
    style: Style | str = "IO",
    max_reasoning_chars: int = DEFAULT_MAX_REASONING_CHARS,
) -> str:
    """Return the GBNF grammar text admitting exactly the valid answers to ``fmt``.

    Parameters
    ----------
    fmt:
        The decision's output contract.
    style:
        ``"IO"`` (JSON only) or ``"CoT"`` (reasoning, newline, JSON).
    max_reasoning_chars:
        CoT only: maximum number of reasoning characters (>= 0). Ignored for IO.

    Returns
    -------
    str
        Grammar text with start symbol ``root``, for llama.cpp's GBNF parser (the request's ``grammar``).
        Results are cached per ``(fmt, style, max_reasoning_chars)``; the action-distribution
        grammar for five keys is ~0.3 MB.

    Raises
    ------
    ValueError
        Unknown style, negative cap, or a format that admits no answer (empty key set, a
        mediator design or judge format without values, inverted contract bounds).
    """
    if style not in ("IO", "CoT"):
        raise ValueError(f"style must be 'IO' or 'CoT', not {style!r}")
    if max_reasoning_chars < 0:
        raise ValueError("max_reasoning_chars must be >= 0")
    if isinstance(fmt, TextAnswerFormat):  # a free-text format's grammar is complete as it is
        return fmt.complete_grammar()
    return _cached_gbnf(fmt, str(style), max_reasoning_chars if style == "CoT" else 0)


def max_output_chars(
    fmt: AnswerFormat,
    style: Style | str = "IO",
    max_reasoning_chars: int = DEFAULT_MAX_REASONING_CHARS,
) -> int:
    """Upper bound on the length (characters = bytes) of any string :func:`gbnf_for` admits."""
    if isinstance(fmt, TextAnswerFormat):
        return fmt.max_output_chars()
    json_chars = fmt.max_json_chars()
    if style == "CoT":
        return max_reasoning_chars + 1 + json_chars
    return json_chars


def max_tokens_for(
    fmt: AnswerFormat,
    style: Style | str = "IO",
    max_reasoning_chars: int = DEFAULT_MAX_REASONING_CHARS,
) -> int:
    """A ``max_tokens`` that never truncates a grammar-constrained answer to ``fmt``.

    Every admitted character is one byte and every token decodes to at least one byte, so the
    completion cannot exceed :func:`max_output_chars` tokens; one more covers the end token.
    Generation normally stops much earlier (the grammar forces the end token once the JSON
    object is complete).
    """
    return max_output_chars(fmt, style, max_reasoning_chars) + 1


GBNF_MAX_REPEAT = 1999
"""The largest repetition bound ``x{0,n}`` written as it is. llama.cpp's GBNF parser refuses a
larger one inside an optional group such as the CoT head's ("failed to parse grammar" at the
first call; ggml-org/llama.cpp#27087), so a larger ``n`` is written as a chain of named rules,
each repeating at most 1,999 times (:func:`bounded_repeat`)."""


def bounded_repeat(item: str, n: int, name: str = "reasoning") -> tuple[str, list[str]]:
    """GBNF for 0 to ``n`` repetitions of ``item`` that llama.cpp parses and enforces for any
    ``n >= 0``: ``(expression, extra rules)``. Up to :data:`GBNF_MAX_REPEAT` the expression is
    ``item{0,n}`` and there is no rule; above it the expression is the rule ``<name>-0`` of a
    chain ``<name>-k ::= item{0,999} | item{1000} <next>`` (fewer than 1,000, or 1,000 followed by
    the rest), ending in ``item{0,r}`` with ``r <= 1999``: the same strings, lengths 0 to ``n``."""
    if n <= GBNF_MAX_REPEAT:
        return f"{item}{{0,{n}}}", []
    rules, rest, k = [], n, 0
    while rest > GBNF_MAX_REPEAT:
        rest -= 1000
        tail = f"{name}-{k + 1}" if rest > GBNF_MAX_REPEAT else f"{item}{{0,{rest}}}"
        rules.append(f"{name}-{k} ::= {item}{{0,999}} | {item}{{1000}} {tail}")
        k += 1
    return f"{name}-0", rules


# --------------------------------------------------------------------------------------------
# construction
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _cached_gbnf(fmt: AnswerFormat, style: str, max_reasoning_chars: int) -> str:
    rules = fmt.grammar()
    if style == "CoT":
        if max_reasoning_chars > 0:
            reasoning, extra = bounded_repeat(_REASONING_CHAR, max_reasoning_chars - 1)
            head = "\n".join([f'root ::= ({reasoning} {SENTENCE_END})? "\\n" answer', *extra])
        else:
            head = 'root ::= "\\n" answer'
    else:
        head = "root ::= answer"
    return "\n".join([head, *rules]) + "\n"
