"""Contract design: ``{"A0": <INT>, "A1": <INT>, …}`` (docs/protocol/answers.md#output-formats, #parsing "Contract design", docs/protocol/tournament.md#tournament-driver, docs/protocol/reference-data.md#compatibility-flags)."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.formats.base import AnswerFormat, DecisionKind
from coopeval.decisions.formats.messages import check_exact_keys, is_int, value_problem
from coopeval.decisions.gbnf import int_range_expr, object_rule
from coopeval.decisions.texts import ENGINE_TEXTS

__all__ = ["DEFAULT_CONTRACT_BOUNDS", "ContractDesign"]

DEFAULT_CONTRACT_BOUNDS = (-20, 20)
"""Contract values the local model may propose when ``int_bounds`` is unset (inclusive).
The parser does not enforce these; they only keep the tiny model's designs in a plausible range."""

_NUMERIC_STRING = re.compile(r"\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")


def _lenient_int(value: Any) -> int | None:
    """The reference's contract-value coercion (``compat.lenient_contract_ints``)."""
    if is_int(value):
        return int(value)
    if isinstance(value, float) and math.isfinite(value):
        return math.trunc(value)
    if isinstance(value, str) and _NUMERIC_STRING.fullmatch(value):
        number = float(value)
        return math.trunc(number) if math.isfinite(number) else None
    return None


@dataclass(frozen=True)
class ContractDesign(AnswerFormat):
    """A contract: one integer transfer (points received, or paid if negative) per base action.

    Validates (docs/protocol/answers.md#parsing): the key set equals the base tokens exactly; every value is a JSON
    integer (booleans, floats and numeric strings rejected), within ``int_bounds`` when set →
    ``{token: int}``. With ``lenient`` (the reference's ``compat.lenient_contract_ints``, docs/protocol/reference-data.md#compatibility-flags) floats are truncated toward zero and numeric strings accepted.

    Grammar: ``{"A0": -3, "A1": 12}`` with integers within ``int_bounds`` or
    :data:`DEFAULT_CONTRACT_BOUNDS`.

    Bot default: ``state["enforcing_design"]`` (every bot proposes the cooperation-enforcing
    contract).

    Attributes
    ----------
    keys:
        The base-action tokens.
    int_bounds:
        Optional inclusive (low, high) bounds on the values (config ``value_bounds``).
    """

    kind: ClassVar[str] = DecisionKind.CONTRACT_DESIGN
    keys: tuple[str, ...]
    int_bounds: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "keys", tuple(self.keys))

    def check(self, obj: Mapping[str, Any], *, lenient: bool) -> dict[str, Any]:
        keys = self.keys
        check_exact_keys(obj, keys)
        values: dict[str, int] = {}
        bad: list[str] = []
        for k in keys:
            converted = _lenient_int(obj[k]) if lenient else (int(obj[k]) if is_int(obj[k]) else None)
            if converted is None:
                bad.append(value_problem(k, obj[k]))
            else:
                values[k] = converted
        if bad:
            raise AnswerError(ENGINE_TEXTS.render("error_contract_type", problems="; ".join(bad)), code="type")
        if self.int_bounds is not None:
            low, high = self.int_bounds
            outside = [value_problem(k, values[k], typed=False) for k in keys if not low <= values[k] <= high]
            if outside:
                raise AnswerError(ENGINE_TEXTS.render("error_range", low=low, high=high, problems="; ".join(outside)), code="range")
        return values

    def _bounds(self) -> tuple[int, int]:
        return self.int_bounds if self.int_bounds is not None else DEFAULT_CONTRACT_BOUNDS

    def answer_rules(self) -> list[str]:
        lo, hi = self._bounds()
        return ["int ::= " + int_range_expr(lo, hi), object_rule(self.keys, "int")]

    def max_value_chars(self) -> int:
        lo, hi = self._bounds()
        return len(self.keys) * max(len(str(lo)), len(str(hi)))

    def value_schema(self) -> dict[str, Any] | None:
        lo, hi = self._bounds()  # the grammar's bounds: int_bounds or DEFAULT_CONTRACT_BOUNDS
        return {"type": "integer", "minimum": lo, "maximum": hi}

    def bot_default(self, state: Mapping[str, Any], *, cooperative: bool) -> dict[str, Any] | None:
        return dict(state["enforcing_design"])
