"""Mediator design: ``{"1": "<Ai>", …, "N": "<Ai>"}`` (docs/protocol/answers.md#output-formats, #parsing "Mediator design", docs/protocol/mechanisms.md#contracting)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.formats.base import AnswerFormat, DecisionKind
from coopeval.decisions.formats.messages import missing_keys, names, quote, value_problem
from coopeval.decisions.gbnf import lit, object_rule
from coopeval.decisions.texts import ENGINE_TEXTS

__all__ = ["MediatorDesign"]

_DECIMAL_KEY = re.compile(r"\s*([0-9]+)\s*")


@dataclass(frozen=True)
class MediatorDesign(AnswerFormat):
    """A mediator: the base action it plays for the delegators, per number of delegators 1..N.

    Validates (docs/protocol/answers.md#parsing): every key parses as a decimal integer in 1..N (surrounding spaces
    allowed, so ``" 2"`` means 2), exactly N distinct numbers; every value is one of the base
    tokens ``values`` (never the delegate token) → ``{"1": "A0", …, "N": …}`` with canonical keys.

    Grammar: ``{"1": "A0", "2": "A1"}`` with each value one of ``values``.

    Bot default: ``state["enforcing_design"]`` (every bot proposes the cooperation-enforcing
    mediator; non-cooperative bots too, since they must propose something valid).

    Attributes
    ----------
    keys:
        ``"1".."N"``: the numbers of delegating players.
    values:
        The base-action tokens a mapping may name.
    """

    kind: ClassVar[str] = DecisionKind.MEDIATOR_DESIGN
    keys: tuple[str, ...]
    values: tuple[str, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", tuple(self.keys))
        object.__setattr__(self, "values", tuple(self.values))

    @classmethod
    def for_players(cls, n_players: int, base_tokens: Sequence[str]) -> MediatorDesign:
        """The design format of an ``n_players`` game with base actions ``base_tokens``."""
        return cls(tuple(str(d) for d in range(1, n_players + 1)), tuple(base_tokens))

    def check(self, obj: Mapping[str, Any], *, lenient: bool) -> dict[str, Any]:
        n = len(self.keys)
        expected = [str(d) for d in range(1, n + 1)]
        by_number: dict[int, str] = {}
        problems: list[str] = []
        for key in obj:
            match = _DECIMAL_KEY.fullmatch(key)
            if match is None:
                problems.append(f"key {quote(key)} is not a whole number")
                continue
            number = int(match.group(1))
            if not 1 <= number <= n:
                problems.append(ENGINE_TEXTS.render("error_mediator_key_outside", key=quote(key), n=n))
            elif number in by_number:
                problems.append(ENGINE_TEXTS.render("error_mediator_key_twice", first=quote(by_number[number]), second=quote(key), number=number))
            else:
                by_number[number] = key
        missing = [str(d) for d in range(1, n + 1) if d not in by_number]
        if missing:
            problems.append(missing_keys(missing))
        if problems:
            raise AnswerError(ENGINE_TEXTS.render("error_mediator_keys", expected=names(expected), problems="; ".join(problems)), code="keys")
        allowed = set(self.values)
        bad = [
            value_problem(by_number[d], obj[by_number[d]], typed=False)
            for d in range(1, n + 1)
            if not (isinstance(obj[by_number[d]], str) and obj[by_number[d]] in allowed)
        ]
        if bad:
            raise AnswerError(ENGINE_TEXTS.render("error_mediator_values", values=names(self.values), problems="; ".join(bad)), code="type")
        return {str(d): obj[by_number[d]] for d in range(1, n + 1)}

    def answer_rules(self) -> list[str]:
        if not self.values:
            raise ValueError("a mediator design format needs base-action values")
        return [
            "value ::= " + " | ".join(lit(f'"{v}"') for v in self.values),
            object_rule(self.keys, "value"),
        ]

    def max_value_chars(self) -> int:
        return len(self.keys) * (2 + max(len(v) for v in self.values))

    def value_schema(self) -> dict[str, Any] | None:
        if not self.values:
            raise ValueError("a mediator design format needs base-action values")
        return {"type": "string", "enum": list(self.values)}

    def bot_default(self, state: Mapping[str, Any], *, cooperative: bool) -> dict[str, Any] | None:
        return dict(state["enforcing_design"])
