"""Wording helpers shared by the formats' error messages (the text is sent back to the model;
its wording is in the templates ``decisions/prompts/error_*.txt``, :mod:`coopeval.decisions.texts`)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.texts import ENGINE_TEXTS

__all__ = [
    "bad_values", "check_exact_keys", "is_int", "missing_keys", "names", "plural_s", "quote", "show", "type_name", "value_problem",
]

MAX_SHOWN = 40
"""Longest value excerpt quoted back to the model."""


def plural_s(items: Sequence[object]) -> str:
    """``""`` for one item, ``"s"`` otherwise."""
    return "" if len(items) == 1 else "s"


def names(keys: Sequence[str]) -> str:
    """The quoted keys, comma-separated."""
    return ", ".join(quote(k) for k in keys)


def quote(value: str) -> str:
    """A string as a JSON-like quoted excerpt of at most :data:`MAX_SHOWN` characters."""
    shown = value if len(value) <= MAX_SHOWN else value[: MAX_SHOWN - 3] + "..."
    return '"' + shown.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def show(value: Any) -> str:
    """Render a JSON value as the model wrote it (roughly), for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return quote(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, int):
        digits = str(value)
        return digits if len(digits) <= MAX_SHOWN else ENGINE_TEXTS.render("error_long_integer", head=digits[:12], digits=len(digits))
    if isinstance(value, (Mapping, list)):
        return type_name(value)
    return str(value)  # pragma: no cover - json only produces the types above


_JSON_TYPES: tuple[tuple[type | tuple[type, ...], str], ...] = (
    (type(None), "null"), (bool, "boolean"), (str, "string"), (float, "decimal"), (int, "integer"), (Mapping, "object"), (list, "list"),
)
"""JSON types in the order they are tested (bool before int) → template ``type_<name>``."""


def type_name(value: Any) -> str:
    """The JSON type of ``value`` with its article (``"an integer"``, ``"a boolean"``, …;
    templates ``type_*``)."""
    for kind, name in _JSON_TYPES:
        if isinstance(value, kind):
            return ENGINE_TEXTS.render(f"type_{name}")
    return type(value).__name__  # pragma: no cover


def is_int(value: Any) -> bool:
    """A JSON integer (booleans excluded)."""
    return isinstance(value, int) and not isinstance(value, bool)


def check_exact_keys(obj: Mapping[str, Any], expected: Sequence[str]) -> None:
    """Raise unless the key set of ``obj`` equals ``expected`` exactly (case-sensitive)."""
    present = set(obj)
    wanted = set(expected)
    if present == wanted:
        return
    missing = [k for k in expected if k not in present]
    extra = [k for k in obj if k not in wanted]
    parts = []
    if missing:
        parts.append(missing_keys(missing))
    if extra:
        parts.append(ENGINE_TEXTS.render("error_unexpected_keys", s=plural_s(extra), keys=names(extra)))
    raise AnswerError(ENGINE_TEXTS.render("error_exact_keys", expected=names(expected), problems="; ".join(parts)), code="keys")


def missing_keys(missing: Sequence[str]) -> str:
    """``missing key(s) "a", "b"``."""
    return ENGINE_TEXTS.render("error_missing_keys", s=plural_s(missing), keys=names(missing))


def value_problem(key: str, value: Any, *, typed: bool = True) -> str:
    """``'"k" is <value> (<type>)'`` (without the type unless ``typed``)."""
    if typed:
        return ENGINE_TEXTS.render("error_value_typed", key=quote(key), value=show(value), type=type_name(value))
    return ENGINE_TEXTS.render("error_value", key=quote(key), value=show(value))


def bad_values(obj: Mapping[str, Any], keys: Sequence[str], ok: Callable[[Any], bool]) -> list[str]:
    """``'"k" is <value> (<type>)'`` for every key whose value fails ``ok``."""
    return [value_problem(k, obj[k]) for k in keys if not ok(obj[k])]
