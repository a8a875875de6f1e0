"""Gossip answer formats: normalisation, validation errors, grammars, bot answers (docs/protocol/gossip.md#parsing-and-failures)."""

from __future__ import annotations

import json

import jsonschema
import pytest

from coopeval.decisions.errors import AnswerError
from coopeval.studies.gossip.formats import (
    BUYER,
    DONOR,
    GOSSIP,
    PD_ACTION,
    REFLECTION,
    SELLER,
    SIGNAL,
    GossipFormat,
    investor_format,
    responder_format,
)

ALL = [DONOR, PD_ACTION, SELLER, BUYER, GOSSIP, SIGNAL, REFLECTION, investor_format(5.0), responder_format(7.5), GossipFormat(tones=("praising",))]


def test_donor_action_normalised() -> None:
    out = DONOR.parse('Thinking... {"justification": "x", "donor_action": "  Cooperate "}')
    assert out == {"justification": "x", "donor_action": "cooperate"}
    assert PD_ACTION.parse('{"justification": "", "player_action": "c"}')["player_action"] == "C"
    assert BUYER.parse('{"justification": "", "buyer_action": "NONE"}')["buyer_action"] == "none"


@pytest.mark.parametrize(
    "text, code",
    [
        ("no json", "no_json"),
        ('{"justification": "x", "donor_action": "maybe"}', "label"),
        ('{"donor_action": "defect"}', "keys"),
        ('{"justification": "x", "donor_action": "defect", "extra": 1}', "keys"),
        ('{"justification": 3, "donor_action": "defect"}', "type"),
    ],
)
def test_donor_action_errors(text: str, code: str) -> None:
    with pytest.raises(AnswerError) as info:
        DONOR.parse(text)
    assert info.value.code == code


def test_gossip_tone_and_word_flag() -> None:
    long = " ".join(["word"] * 151)
    out = GOSSIP.parse(json.dumps({"justification": "j", "tone": "Criticism", "gossip": long}))
    assert out["tone"] == "criticism" and out["word_count"] == 151 and out["over_word_limit"]
    with pytest.raises(AnswerError, match="tone"):
        GOSSIP.parse(json.dumps({"justification": "j", "tone": "angry", "gossip": "m"}))


def test_signal_and_amounts() -> None:
    assert SIGNAL.parse('{"justification": "", "signal": "1"}')["signal"] == 1
    with pytest.raises(AnswerError):
        SIGNAL.parse('{"justification": "", "signal": true}')
    fmt = investor_format(5.0)
    assert fmt.parse('{"justification": "", "investor_action": 2.5}')["investor_action"] == 2.5
    with pytest.raises(AnswerError, match="between 0 and 5"):
        fmt.parse('{"justification": "", "investor_action": 6}')
    with pytest.raises(AnswerError, match="number"):
        fmt.parse('{"justification": "", "investor_action": "2"}')


@pytest.mark.parametrize("fmt", ALL, ids=lambda f: f.kind)
def test_bot_answers_are_valid(fmt: object) -> None:
    if fmt in (DONOR, PD_ACTION, SELLER, BUYER):
        answer = fmt.bot_answer(fmt.options[-1])  # type: ignore[attr-defined]
    elif isinstance(fmt, GossipFormat):
        answer = fmt.bot_answer(fmt.tones[0], "fine")
    elif fmt is SIGNAL:
        answer = fmt.bot_answer(1)
    elif fmt is REFLECTION:
        answer = fmt.bot_answer("think")
    else:
        answer = fmt.bot_answer(1.234)  # type: ignore[attr-defined]
    fmt.parse(json.dumps(answer))  # type: ignore[attr-defined]
    assert hash(fmt)  # hashable (grammar caches)
    assert fmt.keys[0] in fmt.instruction()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def runtime() -> object:
    from tests.local_runtime import runtime_fixture

    yield from runtime_fixture()


@pytest.mark.parametrize("style", ["IO", "CoT"])
@pytest.mark.parametrize("fmt", ALL, ids=lambda f: f.kind)
def test_llama_cpp_parses_grammar(runtime: object, fmt: object, style: str) -> None:
    from coopeval.agents.grammar import gbnf_for, max_tokens_for

    text = gbnf_for(fmt, style, 200)  # type: ignore[arg-type]
    assert runtime.grammar_error(text) is None, text  # type: ignore[attr-defined]
    assert max_tokens_for(fmt, style, 200) > 20  # type: ignore[arg-type]


def test_reflection_format() -> None:
    assert REFLECTION.parse('{"reflection": "hm"}') == {"reflection": "hm"}
    with pytest.raises(AnswerError):
        REFLECTION.parse('{"reflection": "  "}')
    with pytest.raises(AnswerError):
        REFLECTION.parse('{"reflection": "a", "b": 1}')


@pytest.mark.parametrize("fmt", ALL, ids=lambda f: f.kind)
def test_formats_are_engine_answer_formats(fmt: object) -> None:
    """Every gossip format is an AnswerFormat: the engine's grammar and token budget apply, and
    the longest admitted object fits the budget."""
    from coopeval.agents.grammar import gbnf_for, max_output_chars
    from coopeval.decisions.formats import AnswerFormat
    from coopeval.decisions.parsing import parse_answer

    assert isinstance(fmt, AnswerFormat)
    assert gbnf_for(fmt, "IO").startswith("root ::= answer")
    assert "answer ::=" in gbnf_for(fmt, "CoT")
    longest = {k: ("x" * 240 if k in ("justification", "gossip", "reflection") else None) for k in fmt.keys}
    if "justification" in longest:
        longest["justification"] = "x" * 160
    for key, value in [("donor_action", "cooperate"), ("player_action", "C"), ("seller_action", "H"), ("buyer_action", "none"),
                       ("tone", max(getattr(fmt, "tones", ("x",)), key=len)), ("signal", 1)]:
        if key in longest:
            longest[key] = value
    for key in ("investor_action", "responder_action"):
        if key in longest:
            longest[key] = 7.25 if key == "responder_action" else 5.0
    text = json.dumps(longest)
    assert parse_answer(fmt, text)
    assert len(text) <= max_output_chars(fmt, "IO")


# -- JSON Schema (structured_output: json_schema) ------------------------------------------------

_VALID = [
    (DONOR, {"justification": "fair", "donor_action": "defect"}),
    (PD_ACTION, {"justification": "", "player_action": "C"}),
    (BUYER, {"justification": "x", "buyer_action": "none"}),
    (GOSSIP, {"justification": "x", "tone": "praising", "gossip": "Agent 3 gave."}),
    (SIGNAL, {"justification": "x", "signal": 0}),
    (REFLECTION, {"reflection": "They defected twice."}),
    (investor_format(5.0), {"justification": "x", "investor_action": 5}),
    (responder_format(7.5), {"justification": "x", "responder_action": 0.25}),
]
_INVALID = [
    (DONOR, {"justification": "x", "donor_action": "give"}),  # not an option
    (DONOR, {"donor_action": "defect"}),  # justification missing
    (GOSSIP, {"justification": "x", "tone": "angry", "gossip": "no"}),
    (GossipFormat(tones=("praising",)), {"justification": "x", "tone": "mocking", "gossip": "no"}),
    (SIGNAL, {"justification": "x", "signal": 2}),
    (REFLECTION, {"reflection": "x", "extra": 1}),
    (investor_format(5.0), {"justification": "x", "investor_action": 5.01}),
    (responder_format(7.5), {"justification": "x", "responder_action": -1}),
]


@pytest.mark.parametrize("fmt", ALL, ids=lambda f: f.kind)
def test_every_format_has_a_schema_over_exactly_its_keys(fmt) -> None:
    schema = fmt.json_schema()
    assert list(schema["properties"]) == list(fmt.keys) == schema["required"]
    assert schema["additionalProperties"] is False


@pytest.mark.parametrize(("fmt", "answer"), _VALID, ids=lambda v: getattr(v, "kind", ""))
def test_schema_admits_valid_answers_and_the_validator_agrees(fmt, answer) -> None:
    jsonschema.validate(answer, fmt.json_schema())
    fmt.check(answer)  # what the schema admits, the validator accepts


@pytest.mark.parametrize(("fmt", "answer"), _INVALID, ids=lambda v: getattr(v, "kind", ""))
def test_schema_rejects_what_the_validator_rejects(fmt, answer) -> None:
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(answer, fmt.json_schema())
    with pytest.raises(AnswerError):
        fmt.check(answer)


def test_json_schema_mode_constrains_gossip_decisions() -> None:
    from coopeval.agents.structured import structured_output_kwargs

    kwargs = structured_output_kwargs("json_schema", GOSSIP, "IO", 320)
    assert kwargs["response_format"]["json_schema"]["schema"]["properties"]["tone"]["enum"] == list(GOSSIP.tones)
    cot = structured_output_kwargs("json_schema", SIGNAL, "CoT", 200)["response_format"]["json_schema"]["schema"]
    assert cot["properties"]["answer"] == SIGNAL.json_schema() and cot["properties"]["reasoning"]["maxLength"] == 200
