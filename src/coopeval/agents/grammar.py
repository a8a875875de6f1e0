"""Compile an :class:`AnswerFormat` into a llama.cpp GBNF grammar (constrained decoding).

The embedded local model (``local/smollm2-135m``) cannot follow the JSON contract on its own
(stack notes §4.4: 0/10 valid answers unconstrained, 0/10 correct sums with a JSON schema), so
every local call is decoded under a grammar that admits *only* answers the parser accepts.

Shapes produced (one fixed whitespace form, as the prompts show it)::

    ACTION            {"A0": 30, "A1": 70}                  exact keys, ints, sum exactly 100
    MEDIATOR_DESIGN   {"1": "A0", "2": "A1"}                values from fmt.values
    MEDIATOR_VOTE     {"M1": true, "M2": false}
    CONTRACT_VOTE     {"C1": true}
    CONTRACT_DESIGN   {"A0": -3, "A1": 12}                  ints within fmt.int_bounds or
                                                           DEFAULT_CONTRACT_BOUNDS
    SIGN              {"sign": true}
    JUDGE             {"reasoning": "short text", "confidence": 0.85,
                       "justification_type": "Label, Label"}

Style ``"IO"``: the JSON object only. Style ``"CoT"``: free reasoning of at most
``max_reasoning_chars`` printable-ASCII characters (never ``{``), a newline, then the JSON object.
All characters the grammar admits are single-byte, so a completion has at most
:func:`max_output_chars` tokens (every token decodes to at least one byte); a ``max_tokens`` of
:func:`max_tokens_for` therefore can never cut an answer short.

Action grammar
--------------
The distribution grammar tracks the remaining sum: nonterminal ``n<k>-<r>`` reads the number of
key ``k`` given ``r`` percentage points left, and the last key is forced to the remainder. The
number itself is spelled as a digit trie (first digit, then optionally a second, ``100`` as a
third), so while the sampler is inside a number it follows at most ~11 grammar stacks instead of
the ``r + 1`` stacks of a flat ``"0" | "1" | … | "r"`` alternation. This factoring is exact (the
language is unchanged) and is what keeps five-action formats fast; see
``benchmarks/local_model.py``.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Literal

from coopeval.decisions.formats import AnswerFormat, DecisionKind

__all__ = [
    "DEFAULT_CONTRACT_BOUNDS",
    "DEFAULT_JUDGE_REASONING_CHARS",
    "DEFAULT_MAX_REASONING_CHARS",
    "JUDGE_MAX_LABELS",
    "Style",
    "gbnf_for",
    "max_output_chars",
    "max_tokens_for",
]

Style = Literal["CoT", "IO"]

TOTAL = 100
"""Action distributions are integer percentage points summing to exactly this."""

DEFAULT_MAX_REASONING_CHARS = 320
"""CoT reasoning cap in characters (~75 SmolLM2 tokens, ~1-1.5 s of generation on 2 cores).

SmolLM2-135M either skips the reasoning (answers at once) or rambles until the cap, so the cap
sets the CoT cost almost alone. 320 characters is four times the judge's 80-character minimum
(spec §9.2), leaving judgeable text after the model's frequent preambles ("Here is the JSON:",
code fences), while a CoT decision stays under ~2x the cost of an IO one."""

DEFAULT_CONTRACT_BOUNDS = (-20, 20)
"""Contract values the local model may propose when ``fmt.int_bounds`` is unset (inclusive).
The parser does not enforce these; they only keep the tiny model's designs in a plausible range."""

DEFAULT_JUDGE_REASONING_CHARS = 240
"""Cap on the judge's ``reasoning`` string (characters)."""

JUDGE_MAX_LABELS = 3
"""At most this many labels in ``justification_type``."""

_EXACT_RANGE_LIMIT = 100_000
"""Integer ranges up to this size are spelled exactly as a digit trie; larger ones fall back to
a digit-count bound (documented inexactness: the parser then enforces the bounds)."""

# printable ASCII (0x20-0x7E) and newline, minus "{": keeps the final JSON object the only one
_REASONING_CHAR = r"[\x20-\x7A\x7C-\x7E\n]"
# printable ASCII minus '"', '\', '{', '}': safe inside a JSON string without escapes
_JSON_TEXT_CHAR = r"[\x20\x21\x23-\x5B\x5D-\x7A\x7C\x7E]"


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
        Grammar text with start symbol ``root``, for ``llama_cpp.LlamaGrammar.from_string``.
        Results are cached per ``(fmt, style, max_reasoning_chars)``; the ACTION grammar for five
        keys is ~0.3 MB.

    Raises
    ------
    ValueError
        Unknown style, negative cap, empty key set, a MEDIATOR_DESIGN/JUDGE format without
        values, or inverted contract bounds.
    """
    if style not in ("IO", "CoT"):
        raise ValueError(f"style must be 'IO' or 'CoT', not {style!r}")
    if max_reasoning_chars < 0:
        raise ValueError("max_reasoning_chars must be >= 0")
    return _cached_gbnf(fmt, str(style), max_reasoning_chars if style == "CoT" else 0)


def max_output_chars(
    fmt: AnswerFormat,
    style: Style | str = "IO",
    max_reasoning_chars: int = DEFAULT_MAX_REASONING_CHARS,
) -> int:
    """Upper bound on the length (characters = bytes) of any string :func:`gbnf_for` admits."""
    json_chars = _json_max_chars(fmt)
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


# --------------------------------------------------------------------------------------------
# construction
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _cached_gbnf(fmt: AnswerFormat, style: str, max_reasoning_chars: int) -> str:
    rules: list[str] = []
    json_rule = _json_rules(fmt, rules)
    if style == "CoT":
        if max_reasoning_chars > 0:
            head = f'root ::= {_REASONING_CHAR}{{0,{max_reasoning_chars}}} "\\n" {json_rule}'
        else:
            head = f'root ::= "\\n" {json_rule}'
    else:
        head = f"root ::= {json_rule}"
    return "\n".join([head, *rules]) + "\n"


def _json_rules(fmt: AnswerFormat, rules: list[str]) -> str:
    """Append the rules of the JSON object to ``rules``; return the name of its start rule."""
    if not fmt.keys:
        raise ValueError("an answer format needs at least one key")
    kind = fmt.kind
    if kind is DecisionKind.ACTION:
        _action_rules(fmt.keys, rules)
    elif kind is DecisionKind.MEDIATOR_DESIGN:
        if not fmt.values:
            raise ValueError("a mediator design format needs base-action values")
        rules.append("value ::= " + " | ".join(_lit(f'"{v}"') for v in fmt.values))
        rules.append(_object_rule(fmt.keys, "value"))
    elif kind in (DecisionKind.MEDIATOR_VOTE, DecisionKind.CONTRACT_VOTE, DecisionKind.SIGN):
        rules.append('bool ::= "true" | "false"')
        rules.append(_object_rule(fmt.keys, "bool"))
    elif kind is DecisionKind.CONTRACT_DESIGN:
        lo, hi = fmt.int_bounds if fmt.int_bounds is not None else DEFAULT_CONTRACT_BOUNDS
        rules.append("int ::= " + _int_range_expr(lo, hi))
        rules.append(_object_rule(fmt.keys, "int"))
    elif kind is DecisionKind.JUDGE:
        _judge_rules(fmt, rules)
    else:  # pragma: no cover - exhaustive over DecisionKind
        raise ValueError(f"no grammar for decision kind {kind!r}")
    return "answer"


def _object_rule(keys: Sequence[str], value_rule: str) -> str:
    parts: list[str] = []
    for i, key in enumerate(keys):
        prefix = "{" if i == 0 else ", "
        parts.append(_lit(f'{prefix}"{key}": ') + " " + value_rule)
    return "answer ::= " + " ".join(parts) + " " + _lit("}")


def _action_rules(keys: Sequence[str], rules: list[str]) -> None:
    """Rules of an exact integer distribution over ``keys`` summing to :data:`TOTAL`."""
    m = len(keys)
    if m == 1:
        rules.append("answer ::= " + _lit(f'{{"{keys[0]}": {TOTAL}}}'))
        return
    rules.append("answer ::= " + _lit(f'{{"{keys[0]}": ') + f" n0-{TOTAL}")
    # n<k>-<r>: number for key k (< m-1) with r points left, followed by c<k>-<rest>.
    # c<k>-<x>: ", " + key k+1 + (its number n<k+1>-<x>, or the forced remainder for the last key).
    needed_n: set[tuple[int, int]] = {(0, TOTAL)}
    frontier = [(0, TOTAL)]
    needed_c: set[tuple[int, int]] = set()
    while frontier:
        k, r = frontier.pop()
        for x in range(r + 1):
            if (k, x) not in needed_c:
                needed_c.add((k, x))
                if k + 1 < m - 1 and (k + 1, x) not in needed_n:
                    needed_n.add((k + 1, x))
                    frontier.append((k + 1, x))
    for k, r in sorted(needed_n):
        rules.append(
            f"n{k}-{r} ::= " + _number_trie({str(v): f"c{k}-{r - v}" for v in range(r + 1)})
        )
    for k, x in sorted(needed_c):
        key = keys[k + 1]
        if k + 1 == m - 1:
            rules.append(f"c{k}-{x} ::= " + _lit(f', "{key}": {x}}}'))
        else:
            rules.append(f"c{k}-{x} ::= " + _lit(f', "{key}": ') + f" n{k + 1}-{x}")


def _judge_rules(fmt: AnswerFormat, rules: list[str]) -> None:
    if not fmt.values:
        raise ValueError("a judge format needs the category labels as values")
    labels = list(dict.fromkeys([*fmt.values, "Other"]))
    rules.append("label ::= " + " | ".join(_lit(v) for v in labels))
    rules.append(f"labels ::= label ({_lit(', ')} label){{0,{JUDGE_MAX_LABELS - 1}}}")
    rules.append(f"text ::= {_JSON_TEXT_CHAR}{{1,{DEFAULT_JUDGE_REASONING_CHARS}}}")
    rules.append('confidence ::= "0." [0-9] [0-9]? | "1.0"')
    rules.append(
        "answer ::= "
        + _lit('{"reasoning": "')
        + " text "
        + _lit('", "confidence": ')
        + " confidence "
        + _lit(', "justification_type": "')
        + " labels "
        + _lit('"}')
    )


# --------------------------------------------------------------------------------------------
# numbers
# --------------------------------------------------------------------------------------------


def _number_trie(continuations: dict[str, str]) -> str:
    """GBNF expression matching each decimal string in ``continuations`` followed by its rule.

    ``continuations`` maps a digit string to the rule name (or ``""`` for nothing) that must
    follow it. Strings sharing a prefix share the grammar path, so the sampler never follows more
    stacks than there are distinct next characters plus one.
    """
    trie: dict[str, object] = {}
    for text, cont in continuations.items():
        node = trie
        for ch in text:
            node = node.setdefault(ch, {})  # type: ignore[assignment]
        node[""] = cont
    return _render_trie(trie)


def _render_trie(node: dict[str, object]) -> str:
    alternatives: list[str] = []
    optional = False
    for ch, child in node.items():
        if ch == "":
            if child:
                alternatives.append(str(child))
            else:
                optional = True
            continue
        assert isinstance(child, dict)
        rest = _render_trie(child)
        alternatives.append(_lit(ch) + (" " + rest if rest else ""))
    if not alternatives:
        return ""
    if len(alternatives) == 1 and not optional:
        return alternatives[0]
    body = "(" + " | ".join(alternatives) + ")"
    return body + "?" if optional else body


def _int_range_expr(lo: int, hi: int) -> str:
    """GBNF expression for the decimal integers in ``[lo, hi]`` (no leading zeros, no ``-0``)."""
    if lo > hi:
        raise ValueError(f"empty integer range [{lo}, {hi}]")
    if hi - lo + 1 <= _EXACT_RANGE_LIMIT:
        return _number_trie({str(v): "" for v in range(lo, hi + 1)})
    digits = len(str(max(abs(lo), abs(hi))))
    sign = '"-"? ' if lo < 0 else ""
    return f'{sign}("0" | [1-9] [0-9]{{0,{digits - 1}}})'


def _json_max_chars(fmt: AnswerFormat) -> int:
    keys = fmt.keys
    braces = 2 + 2 * max(len(keys) - 1, 0)  # "{", "}", and ", " between members
    members = sum(len(k) + 4 for k in keys)  # '"k": '
    kind = fmt.kind
    if kind is DecisionKind.ACTION:
        values = 3 * len(keys)
    elif kind is DecisionKind.MEDIATOR_DESIGN:
        values = len(keys) * (2 + max(len(v) for v in fmt.values))
    elif kind in (DecisionKind.MEDIATOR_VOTE, DecisionKind.CONTRACT_VOTE, DecisionKind.SIGN):
        values = 5 * len(keys)
    elif kind is DecisionKind.CONTRACT_DESIGN:
        lo, hi = fmt.int_bounds if fmt.int_bounds is not None else DEFAULT_CONTRACT_BOUNDS
        values = len(keys) * max(len(str(lo)), len(str(hi)))
    elif kind is DecisionKind.JUDGE:
        longest = max(len(v) for v in (*fmt.values, "Other"))
        labels = JUDGE_MAX_LABELS * longest + 2 * (JUDGE_MAX_LABELS - 1)
        values = (DEFAULT_JUDGE_REASONING_CHARS + 2) + 4 + (labels + 2)
    else:  # pragma: no cover
        raise ValueError(f"no grammar for decision kind {kind!r}")
    return braces + members + values


def _lit(text: str) -> str:
    """A GBNF string literal for ``text``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'
