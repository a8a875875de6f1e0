"""The answer formats' JSON Schemas use only keywords the servers' converters enforce.

llama-server drops ``minimum``/``maximum`` on ``number`` values and decodes them unconstrained
(see :mod:`coopeval.decisions.schema`); a bounded real number must be an ``enum``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import jsonschema
import pytest

from coopeval.decisions.formats import (
    ActionDistribution,
    ContractDesign,
    ContractVote,
    JudgeLabels,
    MediatorDesign,
    MediatorVote,
    Signature,
)
from coopeval.decisions.schema import (
    DECIMAL_ENUM_LIMIT,
    check_enforced,
    decimal_range,
    unenforced_keywords,
)
from coopeval.studies.gossip.formats import (
    DONOR,
    GOSSIP,
    REFLECTION,
    SIGNAL,
    investor_format,
    responder_format,
)

JUDGE = JudgeLabels(("Reciprocity", "Self-interest"))


def _formats() -> list[Any]:
    return [
        ActionDistribution(("A0", "A1", "A2")),
        ContractDesign(("C1", "C2")),
        MediatorDesign(("A0", "A1"), ("A0", "A1")),
        MediatorVote(("M1", "M2")),
        ContractVote(("C1", "C2")),
        Signature(),
        JUDGE,
        DONOR,
        GOSSIP,
        SIGNAL,
        REFLECTION,
        investor_format(10.0),
        responder_format(30.0),
    ]


def _subschemas(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _subschemas(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _subschemas(value)


def test_decimal_range_is_the_grid_of_the_range() -> None:
    assert decimal_range(0, 1, 1) == {"type": "number", "enum": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]}
    assert decimal_range(0.25, 0.5, 1)["enum"] == [0.3, 0.4, 0.5]  # grid points inside the range only
    two = decimal_range(0, 10, 2)["enum"]
    assert len(two) == 1001 and two[:3] == [0.0, 0.01, 0.02] and two[-2:] == [9.99, 10.0]
    assert decimal_range(3, 3, 0) == {"type": "number", "enum": [3.0]}


def test_decimal_range_too_wide_leaves_the_bounds_to_the_validator() -> None:
    assert len(decimal_range(0, 100, 2)["enum"]) == DECIMAL_ENUM_LIMIT
    assert decimal_range(0, 100.01, 2) == {"type": "number"}


@pytest.mark.parametrize(("low", "high", "decimals"), [(1, 0, 2), (0, float("inf"), 2), (0, 1, 7)])
def test_decimal_range_refuses_bad_arguments(low: float, high: float, decimals: int) -> None:
    with pytest.raises(ValueError):
        decimal_range(low, high, decimals)


@pytest.mark.parametrize("fmt", _formats(), ids=lambda f: f.kind)
def test_no_schema_bounds_a_number_with_keywords_llama_server_drops(fmt: Any) -> None:
    schema = fmt.json_schema()
    assert schema is not None
    for sub in _subschemas(schema):
        if sub.get("type") == "number":
            dropped = {"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf"} & set(sub)
            assert not dropped, (fmt.kind, sub)


def test_judge_confidence_is_the_grammars_numbers() -> None:
    schema = JUDGE.json_schema()
    enum = schema["properties"]["confidence"]["enum"]
    grammar_numbers = re.compile(r'0\.[0-9][0-9]?|1\.0')  # rule "confidence" of JudgeLabels.grammar()
    assert len(enum) == 101 and all(grammar_numbers.fullmatch(json.dumps(v)) for v in enum)
    ok = {"reasoning": "r", "confidence": 0.35, "justification_type": "Reciprocity"}
    jsonschema.validate(ok, schema)
    jsonschema.validate({**ok, "confidence": 1}, schema)  # 1 == 1.0 for JSON Schema
    for bad in (7, 1.5, -0.01, 0.355):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**ok, "confidence": bad}, schema)


def test_gossip_amount_schema_holds_the_range() -> None:
    schema = investor_format(10.0).json_schema()
    ok = {"justification": "j", "investor_action": 2.5}
    jsonschema.validate(ok, schema)
    for bad in (4293190889610536.42, 10.01, -1):  # the first is SmolLM2's reply under the old schema
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**ok, "investor_action": bad}, schema)


@pytest.mark.parametrize(
    ("schema", "problem"),
    [
        ({"type": "string", "pattern": "^a$"}, "$: pattern on a string"),
        ({"type": "string", "format": "date"}, "$: format on a string"),
        ({"type": "number", "minimum": 0}, "$: minimum on a number"),
        ({"type": "integer", "multipleOf": 2}, "$: multipleOf on a integer"),
        ({"$ref": "#/defs/x"}, "$: type None"),
        ({"type": ["string", "null"]}, "$: type ['string', 'null']"),
        ({"anyOf": [{"type": "string"}]}, "$: type None"),
        (
            {"type": "object", "properties": {"a": {"type": "number", "maximum": 1}}, "required": ["a"], "additionalProperties": False},
            "$.a: maximum on a number",
        ),
        ({"type": "object", "properties": {"a": {"type": "boolean"}}, "required": ["a"]}, "$: additionalProperties must be false"),
    ],
)
def test_unenforced_keywords_names_each_keyword_the_converter_drops(schema: dict[str, Any], problem: str) -> None:
    assert any(p.startswith(problem) for p in unenforced_keywords(schema)), unenforced_keywords(schema)
    with pytest.raises(ValueError, match="does not enforce"):
        check_enforced(schema, "x")


def test_enforced_keywords_pass() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 3}, "s": {"type": "string", "maxLength": 4}},
        "required": ["n", "s"],
        "additionalProperties": False,
    }
    assert unenforced_keywords(schema) == []


def test_judge_labels_are_an_enum_of_label_lists() -> None:
    taxonomy_like = JudgeLabels(tuple(f"L{i}" for i in range(15)))  # 15 + Other = 16 labels
    lists = taxonomy_like.json_schema()["properties"]["justification_type"]["enum"]
    assert len(lists) == 16 + 16 * 15 // 2 + 16 * 15 * 14 // 6 == 696
    assert len(set(lists)) == 696 and "L0, L14, Other" in lists and "Other" in lists
    schema = JUDGE.json_schema()
    ok = {"reasoning": "r", "confidence": 0.5}
    for good in ("Reciprocity", "Reciprocity, Self-interest", "Self-interest, Other"):
        jsonschema.validate({**ok, "justification_type": good}, schema)
        assert JUDGE.validate({**ok, "justification_type": good})  # the validator accepts all of them
    for bad in ("Fairness", "Reciprocity, Reciprocity", "", "Reciprocity, Self-interest, Other, Reciprocity"):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**ok, "justification_type": bad}, schema)
