"""Game parameters declared as dataclass fields: default, unit and JSON schema in one place.

The engine's stage games (:mod:`.donation`, :mod:`.trust`, :mod:`.market`) and the studies that
play them (e.g. the gossip testbeds, which add population and horizon parameters) declare each
parameter with :func:`param`; :func:`parameter_table` and :func:`parameters_schema` read those
declarations back, so a study's config schema and its documentation of defaults and units are
derived from the class and never typed a second time.
"""

from __future__ import annotations

from dataclasses import MISSING, field, fields
from typing import Any


def param(default: Any, unit: str, schema: dict[str, Any] | None = None) -> Any:
    """A dataclass field declaring one parameter.

    Parameters
    ----------
    default:
        The default value (the paper's value where a paper gives one).
    unit:
        Its unit, e.g. ``"units"`` (resource units), ``"agents"``; ``""`` if dimensionless.
    schema:
        The JSON-schema fragment (type and bounds) of the value a config may set; ``None``
        for a parameter a config cannot set (fixed at its default).
    """
    return field(default=default, metadata={"unit": unit, "schema": schema})


def parameter_table(cls: type) -> dict[str, tuple[Any, str]]:
    """``name -> (default, unit)`` of every parameter of the dataclass ``cls`` that has a
    default, in field order.

    Raises
    ------
    TypeError
        If ``cls`` is not a dataclass.
    """
    return {f.name: (f.default, f.metadata.get("unit", "")) for f in fields(cls) if f.default is not MISSING}


def parameters_schema(cls: type) -> dict[str, Any]:
    """The JSON-schema object of the parameters of ``cls`` a config may set (those declared
    with a schema), each with its unit as ``description``; unknown keys are refused.

    Raises
    ------
    TypeError
        If ``cls`` is not a dataclass.
    """
    props = {}
    for f in fields(cls):
        schema = f.metadata.get("schema")
        if schema is not None:
            unit = f.metadata.get("unit", "")
            props[f.name] = {**schema, **({"description": unit} if unit else {})}
    return {"type": "object", "additionalProperties": False, "properties": props}
