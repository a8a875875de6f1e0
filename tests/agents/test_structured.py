"""Structured outputs: each format's JSON Schema, the request kwargs per mode, the probe logic."""

from __future__ import annotations

import asyncio
import json

import jsonschema
import pytest

from coopeval.agents.grammar import gbnf_for, max_tokens_for
from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.protocol import DecisionRequest
from coopeval.agents.structured import (
    StructuredOutputError,
    probe_passed,
    probe_request,
    resolve_mode,
    structured_output_kwargs,
    unwrap_reasoning,
)
from coopeval.cache.response_cache import call_key
from coopeval.decisions.formats import (
    ActionDistribution,
    ContractDesign,
    ContractVote,
    JudgeLabels,
    MediatorDesign,
    Signature,
    TextAnswerFormat,
)
from coopeval.decisions.parsing import parse_answer

PD = ActionDistribution(("A0", "A1"))


# -- JSON Schema per format --------------------------------------------------------------------


def test_action_schema_fixes_keys_and_percent_range() -> None:
    assert PD.json_schema() == {
        "type": "object",
        "properties": {
            "A0": {"type": "integer", "minimum": 0, "maximum": 100},
            "A1": {"type": "integer", "minimum": 0, "maximum": 100},
        },
        "required": ["A0", "A1"],
        "additionalProperties": False,
    }


def test_action_schema_leaves_the_sum_to_the_validator() -> None:
    schema = PD.json_schema()
    jsonschema.validate({"A0": 30, "A1": 70}, schema)
    jsonschema.validate({"A0": 0, "A1": 10}, schema)  # shape right, sum re-asked by the parser
    for bad in ({"A0": 101, "A1": 0}, {"A0": 50}, {"A0": 50, "A1": 50, "A2": 0}, {"A0": 50.5, "A1": 49.5}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_contract_schema_uses_the_grammar_bounds() -> None:
    assert ContractDesign(("A0", "A1"), int_bounds=(-5, 7)).json_schema()["properties"]["A1"] == {
        "type": "integer",
        "minimum": -5,
        "maximum": 7,
    }
    assert ContractDesign(("A0", "A1")).json_schema()["properties"]["A0"] == {"type": "integer", "minimum": -20, "maximum": 20}


def test_mediator_vote_and_signature_schemas() -> None:
    mediator = MediatorDesign.for_players(2, ["A0", "A1"]).json_schema()
    assert mediator["required"] == ["1", "2"]
    assert mediator["properties"]["2"] == {"type": "string", "enum": ["A0", "A1"]}
    assert ContractVote.over(2).json_schema()["properties"] == {"C1": {"type": "boolean"}, "C2": {"type": "boolean"}}
    assert Signature().json_schema() == {
        "type": "object",
        "properties": {"sign": {"type": "boolean"}},
        "required": ["sign"],
        "additionalProperties": False,
    }


def test_judge_schema_admits_one_to_three_known_labels() -> None:
    schema = JudgeLabels(("Reciprocity", "Self-interest")).json_schema()
    ok = {"reasoning": "r", "confidence": 0.5, "justification_type": "Reciprocity, Other"}
    jsonschema.validate(ok, schema)
    for labels in ("Fairness", "Reciprocity, Other, Self-interest, Other", "Reciprocity,Other"):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**ok, "justification_type": labels}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({**ok, "confidence": 1.5}, schema)


class _YesNo(TextAnswerFormat):
    kind = "yes_no"

    def parse(self, text: str, *, lenient: bool = False) -> dict[str, object]:
        return {"yes": text.strip() == "yes"}

    def complete_grammar(self) -> str:
        return 'root ::= "yes" | "no"\n'

    def max_output_chars(self) -> int:
        return 3

    def bot_text(self, state: object) -> str:
        return "yes"

    def __hash__(self) -> int:
        return 1


def test_text_formats_have_no_schema_and_are_sent_unconstrained_under_json_schema() -> None:
    assert _YesNo().json_schema() is None
    assert structured_output_kwargs("json_schema", _YesNo(), "IO", 320) == {}
    assert structured_output_kwargs("grammar", _YesNo(), "CoT", 320) == {"extra_body": {"grammar": 'root ::= "yes" | "no"\n'}}


# -- request kwargs per mode -------------------------------------------------------------------


def test_json_schema_kwargs_io_and_cot() -> None:
    io = structured_output_kwargs("json_schema", PD, "IO", 320)
    assert io == {"response_format": {"type": "json_schema", "json_schema": {"name": "action", "schema": PD.json_schema(), "strict": True}}}
    cot = structured_output_kwargs("json_schema", PD, "CoT", 200)["response_format"]["json_schema"]["schema"]
    assert cot["required"] == ["reasoning", "answer"]
    assert cot["properties"]["reasoning"] == {"type": "string", "maxLength": 200}
    assert cot["properties"]["answer"] == PD.json_schema()


def test_grammar_kwargs_nest_the_configured_field() -> None:
    assert structured_output_kwargs("grammar", PD, "IO", 320) == {"extra_body": {"grammar": gbnf_for(PD, "IO")}}
    vllm = structured_output_kwargs("grammar", PD, "CoT", 100, "structured_outputs.grammar")
    assert vllm == {"extra_body": {"structured_outputs": {"grammar": gbnf_for(PD, "CoT", 100)}}}
    assert structured_output_kwargs("none", PD, "IO", 320) == {}
    with pytest.raises(ValueError, match="auto"):
        structured_output_kwargs("auto", PD, "IO", 320)


def test_unwrap_reasoning_gives_the_cot_text_the_parser_reads() -> None:
    text = unwrap_reasoning('{"reasoning": " They defected. ", "answer": {"A0": 20, "A1": 80}}')
    assert text == 'They defected.\n{"A0": 20, "A1": 80}'
    assert parse_answer(PD, text) == {"A0": 20, "A1": 80}
    for other in ('{"A0": 20, "A1": 80}', "prose {", '{"reasoning": "x", "answer": 3}'):
        assert unwrap_reasoning(other) == other


# -- probe ----------------------------------------------------------------------------------------


def test_probe_requests_admit_one_string() -> None:
    grammar = probe_request("grammar", "guided_grammar")
    assert grammar["extra_body"] == {"guided_grammar": 'root ::= "{\\"probe\\": \\"zq-4817\\"}"\n'}
    schema = probe_request("json_schema")["response_format"]["json_schema"]["schema"]
    jsonschema.validate({"probe": "zq-4817"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"probe": "hello"}, schema)
    assert probe_passed('{"probe":"zq-4817"}')
    assert not probe_passed("hello") and not probe_passed('{"probe": "zq-4818"}')


def _sender(replies: dict[str, str], sent: list[str]):
    async def send(mode: str) -> str:
        sent.append(mode)
        return replies[mode]

    return send


OK, IGNORED = '{"probe": "zq-4817"}', "Hello!"


def test_resolve_explicit_mode_passes_or_fails_clearly() -> None:
    sent: list[str] = []
    assert asyncio.run(resolve_mode("grammar", _sender({"grammar": OK}, sent), False, "m(IO)")) == "grammar"
    with pytest.raises(StructuredOutputError, match=r"agent m\(IO\): structured_output = json_schema is not applied.*'Hello!'"):
        asyncio.run(resolve_mode("json_schema", _sender({"json_schema": IGNORED}, sent), True, "m(IO)"))
    assert asyncio.run(resolve_mode("none", _sender({}, sent), False, "m(IO)")) == "none"
    assert sent == ["grammar", "json_schema"]


def test_resolve_auto_uses_capability_data_then_probes() -> None:
    sent: list[str] = []
    replies = {"grammar": IGNORED, "json_schema": OK}
    assert asyncio.run(resolve_mode("auto", _sender(replies, sent), False, "m")) == "json_schema"
    assert sent == ["grammar", "json_schema"]
    sent.clear()
    assert asyncio.run(resolve_mode("auto", _sender({"json_schema": OK}, sent), True, "m")) == "json_schema"
    assert sent == ["json_schema"]
    assert asyncio.run(resolve_mode("auto", _sender({"grammar": IGNORED, "json_schema": IGNORED}, []), False, "m")) == "none"


# -- the agent -------------------------------------------------------------------------------


def _agent(mode: str | None, style: str = "IO", **extra: object) -> LiteLLMAgent:
    params: dict[str, object] = {"api_base": "http://127.0.0.1:1/v1", **extra}
    if mode is not None:
        params["structured_output"] = mode
    return LiteLLMAgent("openai/smollm2", style=style, params=params)


def _request() -> DecisionRequest:
    return DecisionRequest(messages=({"role": "user", "content": "play"},), answer_format=PD, state={}, position={"round": 1})


def test_choice_is_in_the_params_hence_the_cache_key() -> None:
    none, default, grammar = _agent("none"), _agent(None), _agent("grammar")
    assert none.params == default.params == {"temperature": 1.0}
    assert grammar.params == {"grammar_field": "grammar", "structured_output": "grammar", "temperature": 1.0}
    assert _agent("json_schema").params == {"structured_output": "json_schema", "temperature": 1.0}
    keys = {call_key(a.model, _request().messages, a.params, {"round": 1}, 0) for a in (none, grammar, _agent("json_schema"))}
    assert len(keys) == 3
    assert _agent("grammar", "CoT").params["max_reasoning_chars"] == 320


def test_call_kwargs_carry_the_constraint_and_no_agent_option() -> None:
    kwargs = _agent("grammar", max_tokens=50, extra_body={"top_k": 5}).call_kwargs(_request())
    assert kwargs["extra_body"] == {"top_k": 5, "grammar": gbnf_for(PD, "IO")}
    assert kwargs["max_tokens"] == 50
    assert "structured_output" not in kwargs and "grammar_field" not in kwargs
    assert _agent("grammar").call_kwargs(_request())["max_tokens"] == max_tokens_for(PD, "IO") == 23  # 22 chars of {"A0": 100, "A1": 100} bound + end
    schema_kwargs = _agent("json_schema").call_kwargs(_request())
    assert json.dumps(schema_kwargs["response_format"]["json_schema"]["schema"]) == json.dumps(PD.json_schema())
    assert "response_format" not in _agent("none").call_kwargs(_request())


def test_bad_options_name_the_key() -> None:
    with pytest.raises(ValueError, match=r"params.structured_output is 'schema'; use one of \['none', 'json_schema', 'grammar', 'auto'\]"):
        _agent("schema")
    with pytest.raises(ValueError, match=r"params.grammar_field is 'guided'"):
        _agent("grammar", grammar_field="guided")


def test_explicit_none_needs_no_probe() -> None:
    agent = _agent("none")
    asyncio.run(agent.prepare(None))  # would fail to connect if it sent anything
    assert agent.structured_output == "none"

