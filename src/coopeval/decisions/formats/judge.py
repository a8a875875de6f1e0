"""Judge labels: ``{"reasoning": str, "confidence": number, "justification_type": "Label, Label"}``
(docs/protocol/design-checks.md#what-is-judged "Our contract", "Normalisation")."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.formats.base import AnswerFormat, DecisionKind
from coopeval.decisions.formats.messages import (
    check_exact_keys,
    is_int,
    names,
    plural_s,
    quote,
    show,
    type_name,
)
from coopeval.decisions.gbnf import JSON_TEXT_CHAR, lit
from coopeval.decisions.schema import decimal_range
from coopeval.decisions.texts import ENGINE_TEXTS

__all__ = [
    "DEFAULT_JUDGE_REASONING_CHARS",
    "FALLBACK_LABEL",
    "JUDGE_MAX_LABELS",
    "JudgeLabels",
    "normalise_label",
]

FALLBACK_LABEL = "Other"
"""The explicit fallback label, always accepted."""

DEFAULT_JUDGE_REASONING_CHARS = 240
"""Cap on the judge's ``reasoning`` string in the grammar (characters)."""

JUDGE_MAX_LABELS = 3
"""At most this many labels in ``justification_type`` (grammar only)."""

_CATEGORY_ALIAS = re.compile(r"(?:category\s*)?([0-9]+)")


def normalise_label(label: str) -> str:
    """Case- and whitespace-insensitive form of a judge label (docs/protocol/design-checks.md#what-is-judged "Normalisation")."""
    return " ".join(label.split()).casefold()


@dataclass(frozen=True)
class JudgeLabels(AnswerFormat):
    """The judge's classification of one decision's reasoning into taxonomy categories.

    The **first** JSON object of the answer is used (the judge's answer begins with it).

    Validates (docs/protocol/design-checks.md#what-is-judged): keys exactly ``reasoning`` (string), ``confidence`` (number in
    [0, 1]) and ``justification_type`` (one string of comma-separated labels) →
    ``{"reasoning": str, "confidence": float, "labels": [canonical labels in taxonomy order]}``.
    Labels are matched to ``values`` case- and whitespace-insensitively; ``Category{n}`` and a
    bare ``{n}`` name the n-th label (n = 1..len(values), the judge prompt's numbering);
    ``"Other"`` is always accepted as the explicit fallback. Any other label is an error, never
    mapped to Other. Duplicates collapse; at least one label is required.

    Grammar: a reasoning string of 1..:data:`DEFAULT_JUDGE_REASONING_CHARS` safe characters, a
    confidence ``0.d``, ``0.dd`` or ``1.0``, and 1..:data:`JUDGE_MAX_LABELS` canonical labels
    (``values`` and ``Other``) joined by ``", "``.

    Bot default: none (scripted bots do not judge).

    Attributes
    ----------
    values:
        The canonical category labels, in taxonomy order.
    """

    kind: ClassVar[str] = DecisionKind.JUDGE
    keys: ClassVar[tuple[str, ...]] = ("reasoning", "confidence", "justification_type")
    first_object: ClassVar[bool] = True
    values: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(self.values))

    def _vocabulary(self) -> tuple[list[str], dict[str, int]]:
        """Canonical labels in taxonomy order (fallback appended if absent) and their lookup."""
        labels = list(self.values)
        if normalise_label(FALLBACK_LABEL) not in {normalise_label(v) for v in labels}:
            labels.append(FALLBACK_LABEL)
        return labels, {normalise_label(label): i for i, label in enumerate(labels)}

    def check(self, obj: Mapping[str, Any], *, lenient: bool) -> dict[str, Any]:
        check_exact_keys(obj, self.keys)
        reasoning = obj["reasoning"]
        if not isinstance(reasoning, str):
            raise AnswerError(ENGINE_TEXTS.render("error_judge_reasoning", type=type_name(reasoning)), code="type")
        confidence = obj["confidence"]
        if not (is_int(confidence) or isinstance(confidence, float)):
            raise AnswerError(
                ENGINE_TEXTS.render("error_judge_confidence_type", value=show(confidence), type=type_name(confidence)), code="type"
            )
        if not (math.isfinite(confidence) and 0 <= confidence <= 1):
            raise AnswerError(ENGINE_TEXTS.render("error_judge_confidence_range", value=show(confidence)), code="range")
        raw = obj["justification_type"]
        if not isinstance(raw, str):
            raise AnswerError(ENGINE_TEXTS.render("error_judge_labels_type", type=type_name(raw)), code="type")
        labels, lookup = self._vocabulary()
        n_categories = len(self.values) if self.values else len(labels) - 1
        found: set[int] = set()
        unknown: list[str] = []
        pieces = [p.strip() for p in raw.split(",")]
        for piece in pieces:
            if not piece:
                continue
            key = normalise_label(piece)
            if key in lookup:
                found.add(lookup[key])
                continue
            alias = _CATEGORY_ALIAS.fullmatch(key)
            if alias is not None and 1 <= int(alias.group(1)) <= n_categories:
                found.add(int(alias.group(1)) - 1)
                continue
            unknown.append(piece)
        if unknown:
            raise AnswerError(
                ENGINE_TEXTS.render("error_judge_unknown", s=plural_s(unknown), labels=names(unknown), fallback=quote(FALLBACK_LABEL)),
                code="label",
            )
        if not found:
            raise AnswerError(ENGINE_TEXTS.render("error_judge_none", fallback=quote(FALLBACK_LABEL)), code="label")
        return {
            "reasoning": reasoning,
            "confidence": float(confidence),
            "labels": [labels[i] for i in sorted(found)],
        }

    def answer_rules(self) -> list[str]:
        if not self.values:
            raise ValueError("a judge format needs the category labels as values")
        labels = list(dict.fromkeys([*self.values, FALLBACK_LABEL]))
        return [
            "label ::= " + " | ".join(lit(v) for v in labels),
            f"labels ::= label ({lit(', ')} label){{0,{JUDGE_MAX_LABELS - 1}}}",
            f"text ::= {JSON_TEXT_CHAR}{{1,{DEFAULT_JUDGE_REASONING_CHARS}}}",
            'confidence ::= "0." [0-9] [0-9]? | "1.0"',
            "answer ::= "
            + lit('{"reasoning": "')
            + " text "
            + lit('", "confidence": ')
            + " confidence "
            + lit(', "justification_type": "')
            + " labels "
            + lit('"}'),
        ]

    def max_value_chars(self) -> int:
        longest = max(len(v) for v in (*self.values, FALLBACK_LABEL))
        labels = JUDGE_MAX_LABELS * longest + 2 * (JUDGE_MAX_LABELS - 1)
        return (DEFAULT_JUDGE_REASONING_CHARS + 2) + 4 + (labels + 2)

    def json_schema(self) -> dict[str, Any] | None:
        """The grammar's object as a JSON Schema: ``reasoning`` 1..240 characters,
        ``confidence`` one of the grammar's numbers ``0.0, 0.01, …, 0.99, 1.0`` (an ``enum``:
        llama-server ignores ``minimum``/``maximum`` on numbers, see
        :mod:`coopeval.decisions.schema`), ``justification_type`` one of the label lists
        :meth:`label_lists` (an ``enum``; a ``pattern`` is not enforced there)."""
        return {
            "type": "object",
            "properties": {
                "reasoning": {"type": "string", "minLength": 1, "maxLength": DEFAULT_JUDGE_REASONING_CHARS},
                "confidence": decimal_range(0, 1, 2),
                "justification_type": {"type": "string", "enum": self.label_lists()},
            },
            "required": list(self.keys),
            "additionalProperties": False,
        }

    def label_lists(self) -> list[str]:
        """Every ``justification_type`` the schema admits: 1..:data:`JUDGE_MAX_LABELS` distinct
        canonical labels (``values`` and ``Other``) in taxonomy order, joined by ``", "``
        (16 labels: 16 + 120 + 560 = 696 strings). The validator accepts any order and sorts
        the labels into taxonomy order, so the order carries no information.

        Raises
        ------
        ValueError
            No ``values``.
        """
        if not self.values:
            raise ValueError("a judge format needs the category labels as values")
        labels = list(dict.fromkeys([*self.values, FALLBACK_LABEL]))
        return [
            ", ".join(combo)
            for n in range(1, min(JUDGE_MAX_LABELS, len(labels)) + 1)
            for combo in itertools.combinations(labels, n)
        ]

    def bot_default(self, state: Mapping[str, Any], *, cooperative: bool) -> dict[str, Any] | None:
        return None
