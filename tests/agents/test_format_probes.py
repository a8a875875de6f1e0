"""Every constraint a run sends is probed before its first call; each call records mode and field.

A scripted litellm stands in for a server that applies some schemas and silently drops others
(as llama-server did with the judge's ``pattern``): it answers like a constrained model when it
"compiles" the schema and like a free model ("Hello") when not.
"""

from __future__ import annotations

import asyncio
import json
from types import SimpleNamespace
from typing import Any

import pytest

from coopeval.agents.format_probes import format_probe_passed
from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.maker import DecisionMaker
from coopeval.agents.seats import seat_agent
from coopeval.agents.structured import (
    StructuredOutputError,
    constraint_field,
    structured_output_kwargs,
)
from coopeval.cache.response_cache import ResponseCache
from coopeval.decisions.formats import ActionDistribution, JudgeLabels
from coopeval.studies.evolution.formats import DonationFormat, StrategyFormat
from coopeval.studies.gossip.formats import GOSSIP, investor_format

PD = ActionDistribution(("A0", "A1"))
JUDGE = JudgeLabels(("Reciprocity", "Self-interest"))
VALID = {"action": '{"A0": 40, "A1": 60}', "judge": '{"reasoning": "r", "confidence": 0.5, "justification_type": "Other"}'}


class ScriptedServer:
    """A litellm stand-in: applies a schema unless ``drops(schema)``; answers free text then."""

    def __init__(self, drops: Any = lambda schema: False) -> None:
        self.drops = drops
        self.sent: list[dict[str, Any]] = []

    @staticmethod
    def supports_response_schema(model: str) -> bool:
        return False

    async def acompletion(self, **kwargs: Any) -> Any:
        self.sent.append(kwargs)
        fmt = kwargs.get("response_format", {}).get("json_schema", {})
        schema = fmt.get("schema")
        if fmt.get("name") == "probe":
            text = '{"probe": "zq-4817"}'
        elif schema is None or self.drops(schema):
            text = "Hello"
        else:
            text = VALID[fmt["name"]]
        choice = SimpleNamespace(message=SimpleNamespace(content=text), finish_reason="stop")
        usage = SimpleNamespace(prompt_tokens=3, completion_tokens=3, total_tokens=6, completion_tokens_details=None)
        return SimpleNamespace(id="r", model="m", choices=[choice], usage=usage)


def _agent(server: ScriptedServer, mode: str = "json_schema", **params: Any) -> LiteLLMAgent:
    agent = LiteLLMAgent("openai/smollm2", "IO", {"api_base": "http://127.0.0.1:1/v1", "structured_output": mode, **params})
    agent._litellm = server  # type: ignore[assignment]
    return agent


def _is_study_call(kwargs: dict[str, Any]) -> bool:
    return kwargs["messages"][0]["content"] != "Reply with the single word hello."


def _drops_large_enums(schema: dict[str, Any]) -> bool:
    return "justification_type" in schema.get("properties", {})


def test_a_format_whose_schema_the_server_drops_stops_before_its_first_call(tmp_path) -> None:
    server = ScriptedServer(_drops_large_enums)
    agent = _agent(server)
    maker = DecisionMaker(ResponseCache(tmp_path / "cache"), {"IO": ""})
    outcome = asyncio.run(maker.decide(agent, "Play.", PD, {"round": 1}))
    assert outcome.status == "ok" and outcome.attempts[0]["error"] == ""
    with pytest.raises(StructuredOutputError, match=r"constraint of the answer format 'judge' is not applied .*'Hello'"):
        asyncio.run(maker.decide(agent, "Judge.", JUDGE, {"judge": 1}))
    names = [k["response_format"]["json_schema"]["name"] for k in server.sent]
    assert names == ["probe", "action", "action", "judge"]  # mode probe, PD probe, PD call, judge probe
    assert [_is_study_call(k) for k in server.sent] == [False, False, True, False]  # no judge call was sent


def test_each_constraint_is_probed_once_across_seats_and_replayed_from_the_cache(tmp_path) -> None:
    server = ScriptedServer()
    agent = _agent(server)
    cache = ResponseCache(tmp_path / "cache")
    maker = DecisionMaker(cache, {"IO": ""})
    for seat, round_ in ((0, 1), (1, 1), (0, 2)):
        assert asyncio.run(maker.decide(seat_agent(agent), f"Seat {seat}.", PD, {"round": round_, "seat": seat})).status == "ok"
    assert [_is_study_call(k) for k in server.sent] == [False, False, True, True, True]
    again = _agent(ScriptedServer(lambda schema: True))  # a rerun replays both probes: nothing is sent to probe
    asyncio.run(again.prepare(cache, PD))
    assert again._litellm.sent == []  # type: ignore[attr-defined]


def _columns(agent: Any, fmt: Any) -> tuple[str, str]:
    outcome = asyncio.run(DecisionMaker(None, {"IO": ""}).decide(agent, "Play.", fmt, {"round": 1}))
    first = outcome.attempts[0]
    return first["structured_output"], first["structured_field"]


def test_each_call_records_the_mode_and_the_field_that_carried_the_constraint() -> None:
    assert _columns(_agent(ScriptedServer()), PD) == ("json_schema", "response_format")
    assert _columns(_agent(ScriptedServer(), "none"), PD) == ("none", "none")
    # a free-text format under json_schema: no schema exists, nothing is sent: not applied
    assert _columns(_agent(ScriptedServer()), DonationFormat()) == ("json_schema", "none")
    # auto against a server that ignores every field: recorded as auto with no field
    ignoring = ScriptedServer(lambda schema: True)

    async def free(**kwargs: Any) -> Any:
        ignoring.sent.append(kwargs)
        choice = SimpleNamespace(message=SimpleNamespace(content="Hello"), finish_reason="stop")
        return SimpleNamespace(id="r", model="m", choices=[choice], usage=None)

    ignoring.acompletion = free  # type: ignore[method-assign]
    auto = _agent(ignoring, "auto")
    assert _columns(auto, PD) == ("auto", "none")


def test_grammar_calls_name_their_body_field() -> None:
    agent = LiteLLMAgent("openai/m", "IO", {"api_base": "http://127.0.0.1:1/v1", "structured_output": "grammar", "grammar_field": "structured_outputs.grammar"})
    assert agent.structured_constraint(PD) == ("grammar", "structured_outputs.grammar")
    assert constraint_field("grammar", PD, "guided_grammar") == "guided_grammar"
    assert constraint_field("json_schema", GOSSIP) == "response_format"
    assert constraint_field("none", PD) == "none"


@pytest.mark.parametrize(
    ("fmt", "text", "finish", "passed"),
    [
        (PD, '{"A0": 40, "A1": 60}', "stop", True),
        (PD, '{"A0": 400, "A1": 60}', "stop", False),  # outside the schema's integer range
        (PD, "Hello", "stop", False),
        (investor_format(10.0), '{"justification": "j", "investor_action": 42.5}', "stop", False),
        (GOSSIP, '{"justification": "I went on and on', "length", True),  # an unbounded string, cut: the object was opened
        (GOSSIP, "Hello there, how can I help you today with", "length", False),
        (GOSSIP, '{"hello": "', "length", False),  # not a key of the schema
    ],
)
def test_the_schema_probe_passes_only_answers_the_schema_admits(fmt: Any, text: str, finish: str, passed: bool) -> None:
    constraint = structured_output_kwargs("json_schema", fmt, "IO", 0)
    assert format_probe_passed(text, finish, fmt, constraint) is passed


def test_the_grammar_probe_passes_only_parseable_answers() -> None:
    constraint = structured_output_kwargs("grammar", PD, "IO", 0)
    assert format_probe_passed('{"A0": 40, "A1": 60}', "stop", PD, constraint)
    assert not format_probe_passed("Hello", "stop", PD, constraint)
    donation = DonationFormat()
    text_constraint = structured_output_kwargs("grammar", donation, "IO", 0)
    assert format_probe_passed("Justification: fair. Answer: 3", "stop", donation, text_constraint)
    assert not format_probe_passed("hello", "stop", donation, text_constraint)
    strategy = StrategyFormat(protocol="horibe")
    strategy_constraint = structured_output_kwargs("grammar", strategy, "IO", 0)
    assert strategy.parse("Hello")  # the parser takes any text as the strategy: the forced marker decides
    assert not format_probe_passed("Hello", "stop", strategy, strategy_constraint)
    assert format_probe_passed("Strategy: cooperate first.", "stop", strategy, strategy_constraint)
    assert json.loads(VALID["judge"])["justification_type"] in JUDGE.label_lists()
