"""JSON-schema validation that fills defaults, shared by the engine's and every study's config."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from jsonschema import Draft202012Validator, validators

from coopeval.core.errors import ConfigError


def _set_defaults(validator: Any, properties: Mapping[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if isinstance(instance, dict):
        for name, sub in properties.items():
            if isinstance(sub, Mapping) and "default" in sub and name not in instance:
                instance[name] = copy.deepcopy(sub["default"])
    yield from Draft202012Validator.VALIDATORS["properties"](validator, properties, instance, schema)


def validator_with_defaults(schema: Mapping[str, Any]) -> Any:
    """A Draft 2020-12 validator whose ``properties`` step also writes each missing property's
    ``default`` into the instance (run it twice to fill objects created by the first pass)."""
    return validators.extend(Draft202012Validator, {"properties": _set_defaults})(schema)


def field_path(error: Any, root: str = "") -> str:
    """The dotted path of a validation error, e.g. ``agents[1].style`` (``root`` prefixed)."""
    out = root
    for part in error.absolute_path:
        out += f"[{part}]" if isinstance(part, int) else (("." if out else "") + str(part))
    return out or "(top level)"


def raise_config_errors(errors: Sequence[Any], explain: Callable[[Any, str], str | None] = lambda error, where: None) -> None:
    """Raise one :class:`ConfigError` listing the first 10 validation ``errors`` (none: return).

    Each line is ``config <field path>: <problem>``; ``explain(error, where)`` may word a
    problem of its own (None: the default wording; an ``enum`` error names the allowed values).

    Raises
    ------
    ConfigError
        ``invalid configuration:`` and one indented line per error.
    """
    if not errors:
        return
    lines = []
    for error in errors[:10]:
        where = field_path(error)
        line = explain(error, where)
        if line is None and error.validator == "enum":
            line = f"config {where}: {error.instance!r} is not allowed; use one of {error.validator_value}."
        lines.append(line if line is not None else f"config {where}: {error.message}.")
    raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))


def first_duplicate(names: Sequence[str]) -> tuple[int, int] | None:
    """``(earlier, later)`` indices of the first name that occurs twice, or ``None``."""
    seen: dict[str, int] = {}
    for index, name in enumerate(names):
        if name in seen:
            return seen[name], index
        seen[name] = index
    return None
