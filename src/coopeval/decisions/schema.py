"""JSON Schema building blocks that constrained decoders actually enforce.

An answer format's :meth:`~coopeval.decisions.formats.AnswerFormat.json_schema` is compiled by
the serving side into a decoding constraint (llama-server: llguidance or its GBNF converter;
vLLM: xgrammar/guidance; OpenAI: its own). A keyword the converter drops is not an error there:
the server answers ``200`` and the value is sampled unconstrained (issue 25, kind 1).

Measured on the pinned llama-server (``xllamacpp`` 2026.10.11549, SmolLM2, asked to repeat a
canary value outside the range): ``enum``, ``integer`` ``minimum``/``maximum`` and string
``minLength``/``maxLength`` are enforced; ``number`` ``minimum``/``maximum`` are **not** (a
``{"type": "number", "minimum": 0, "maximum": 1}`` value came back as ``7`` and ``42.5``, and a
gossip amount in [0, 10] as ``4293190889610536.42``), with no line in the server log.

So a bounded real number is emitted as the ``enum`` of the decimals the format's GBNF grammar
admits (:func:`decimal_range`); its bounds then hold on every converter, and the validator keeps
checking them too. A ``pattern`` is not emitted either (the judge's label list, a regex with
escapes, made the converter log a problem and decode unconstrained): a string drawn from a
known set is an ``enum``.

:data:`ENFORCED_KEYWORDS` declares, per JSON type, the keywords an emitted schema may use;
:func:`unenforced_keywords` lists the others, and every answer format's schema is held to it
(tests, ``coopeval schemas``, and :func:`coopeval.agents.structured.structured_output_kwargs`
before a request is built).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["DECIMAL_ENUM_LIMIT", "ENFORCED_KEYWORDS", "check_enforced", "decimal_range", "unenforced_keywords"]

ENFORCED_KEYWORDS: Mapping[str, frozenset[str]] = {
    "object": frozenset({"type", "properties", "required", "additionalProperties"}),
    "string": frozenset({"type", "enum", "minLength", "maxLength"}),
    "integer": frozenset({"type", "enum", "minimum", "maximum"}),
    "number": frozenset({"type", "enum"}),
    "boolean": frozenset({"type"}),
}
"""Per JSON ``type``: the keywords the target converter (the pinned llama-server's; module
docstring) enforces. Anything else (``pattern``, ``format``, ``$ref``, ``anyOf``, number
bounds, ``multipleOf``, a schema without one ``type``) is refused by :func:`check_enforced`: a
bound the converter cannot enforce stays in the answer format's validator only."""

DECIMAL_ENUM_LIMIT = 10_001
"""Most values :func:`decimal_range` spells out as an ``enum``; a wider range is emitted as a
plain ``number`` (its bounds left to the validator, which re-asks)."""


def decimal_range(low: float, high: float, decimals: int = 2) -> dict[str, Any]:
    """JSON Schema of a number in ``[low, high]`` with at most ``decimals`` decimal places.

    Returns ``{"type": "number", "enum": [low, low + 10**-decimals, …, high]}`` (the grid
    points of step ``10**-decimals`` inside the range, rounded to ``decimals`` places), because
    llama-server ignores ``minimum``/``maximum`` on numbers but enforces ``enum`` (module
    docstring). Example: ``decimal_range(0, 1)`` is the 101 values ``0.0, 0.01, …, 0.99, 1.0``.
    If the grid has more than :data:`DECIMAL_ENUM_LIMIT` points, ``{"type": "number"}``: the
    range is then checked by the validator only.

    Raises
    ------
    ValueError
        ``low > high``, a non-finite bound, or ``decimals`` outside 0..6.
    """
    if not (math.isfinite(low) and math.isfinite(high)):
        raise ValueError(f"decimal_range needs finite bounds, not [{low}, {high}]")
    if low > high:
        raise ValueError(f"empty number range [{low}, {high}]")
    if not 0 <= decimals <= 6:
        raise ValueError(f"decimals is {decimals}; use 0..6")
    scale = 10**decimals
    first, last = math.ceil(round(low * scale, 6)), math.floor(round(high * scale, 6))
    if last - first + 1 > DECIMAL_ENUM_LIMIT:
        return {"type": "number"}
    return {"type": "number", "enum": [round(i / scale, decimals) for i in range(first, last + 1)]}


def unenforced_keywords(schema: Any, path: str = "$") -> list[str]:
    """Where ``schema`` uses what :data:`ENFORCED_KEYWORDS` does not allow, as ``path: problem``.

    Walks ``properties`` recursively; an empty list means every keyword is enforced. A
    subschema must have exactly one ``type`` string; ``additionalProperties`` must be ``False``
    and every property ``required`` (what the converters close an object with).
    """
    if not isinstance(schema, Mapping):
        return [f"{path}: not a schema object"]
    kind = schema.get("type")
    if not isinstance(kind, str) or kind not in ENFORCED_KEYWORDS:
        return [f"{path}: type {kind!r} (use one of {sorted(ENFORCED_KEYWORDS)})"]
    problems = [f"{path}: {key} on a {kind}" for key in schema if key not in ENFORCED_KEYWORDS[kind]]
    if kind == "object":
        properties = schema.get("properties")
        if not isinstance(properties, Mapping) or not properties:
            return [*problems, f"{path}: an object needs properties"]
        if schema.get("additionalProperties") is not False:
            problems.append(f"{path}: additionalProperties must be false")
        if list(schema.get("required", [])) != list(properties):
            problems.append(f"{path}: required must list every property in order")
        for name, sub in properties.items():
            problems += unenforced_keywords(sub, f"{path}.{name}")
    return problems


def check_enforced(schema: Mapping[str, Any], where: str) -> None:
    """Raise unless every keyword of ``schema`` is in :data:`ENFORCED_KEYWORDS`.

    Raises
    ------
    ValueError
        Naming ``where`` (e.g. the answer format's kind) and each offending keyword with its path;
        the fix is an ``enum`` or leaving the bound to the format's validator.
    """
    problems = unenforced_keywords(schema)
    if problems:
        raise ValueError(
            f"the JSON Schema of {where} uses keywords the converter does not enforce ({'; '.join(problems)}); "
            "emit an enum, or leave the bound to the answer format's validator"
        )
