"""GBNF building blocks shared by the answer formats' grammars (llama.cpp grammar syntax).

Pure string construction: nothing here imports llama.cpp. The formats
(:mod:`coopeval.decisions.formats`) compose these into the rules of their JSON object and
:mod:`coopeval.agents.grammar` adds the CoT/IO head.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["EXACT_RANGE_LIMIT", "JSON_TEXT_CHAR", "int_range_expr", "lit", "number_trie", "object_rule"]

EXACT_RANGE_LIMIT = 100_000
"""Integer ranges up to this size are spelled exactly as a digit trie; larger ones fall back to
a digit-count bound (documented inexactness: the parser then enforces the bounds)."""

JSON_TEXT_CHAR = r"[\x20\x21\x23-\x5B\x5D-\x7A\x7C\x7E]"
"""Printable ASCII minus ``"``, ``\\``, ``{``, ``}``: safe inside a JSON string without escapes."""


def lit(text: str) -> str:
    """A GBNF string literal for ``text``."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def object_rule(keys: Sequence[str], value_rule: str) -> str:
    """Rule ``answer`` for ``{"k1": <value_rule>, "k2": <value_rule>, …}`` in key order."""
    parts: list[str] = []
    for i, key in enumerate(keys):
        prefix = "{" if i == 0 else ", "
        parts.append(lit(f'{prefix}"{key}": ') + " " + value_rule)
    return "answer ::= " + " ".join(parts) + " " + lit("}")


def number_trie(continuations: dict[str, str]) -> str:
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
        alternatives.append(lit(ch) + (" " + rest if rest else ""))
    if not alternatives:
        return ""
    if len(alternatives) == 1 and not optional:
        return alternatives[0]
    body = "(" + " | ".join(alternatives) + ")"
    return body + "?" if optional else body


def int_range_expr(lo: int, hi: int) -> str:
    """GBNF expression for the decimal integers in ``[lo, hi]`` (no leading zeros, no ``-0``).

    Raises
    ------
    ValueError
        ``lo > hi``.
    """
    if lo > hi:
        raise ValueError(f"empty integer range [{lo}, {hi}]")
    if hi - lo + 1 <= EXACT_RANGE_LIMIT:
        return number_trie({str(v): "" for v in range(lo, hi + 1)})
    digits = len(str(max(abs(lo), abs(hi))))
    sign = '"-"? ' if lo < 0 else ""
    return f'{sign}("0" | [1-9] [0-9]{{0,{digits - 1}}})'
