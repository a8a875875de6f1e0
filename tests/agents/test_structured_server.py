"""Structured outputs against a real llama-server (xllamacpp, SmolLM2, 127.0.0.1) through litellm.

The fast tests start the server once and check the probe: what the server applies passes, a
field it ignores fails the job with a clear message, ``auto`` resolves. The slow test plays one
cell per decision kind (Contracting: designs, votes, signatures, actions; Mediation: mediator
designs and votes) plus one judge decision with each setting.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator

import jsonschema
import pytest

from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.maker import DecisionMaker
from coopeval.agents.structured import StructuredOutputError, structured_output_kwargs
from coopeval.cache.response_cache import ResponseCache
from coopeval.decisions.formats import ActionDistribution, AnswerFormat, ContractDesign, JudgeLabels
from tests.helpers import make_cell, play_spec

pytest.importorskip("xllamacpp")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")  # as coopeval imports it: no cost-map fetch
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("litellm")
from tests.agents.llama_server import running_server


class _NoCalls:
    """A litellm stand-in that fails any call."""

    @staticmethod
    def supports_response_schema(model: str) -> bool:
        return False

    @staticmethod
    async def acompletion(**kwargs: object) -> object:
        raise AssertionError("the probe was sent again instead of replayed from the cache")


@pytest.fixture(scope="module")
def api_base() -> Iterator[str]:
    with running_server() as base:
        yield base


@pytest.fixture(autouse=True)
def _openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")  # the openai client wants one; the server checks none


def smollm2(api_base: str, mode: str, style: str = "IO", **params: object) -> LiteLLMAgent:
    """SmolLM2 behind the test server with structured output ``mode``.

    Under ``grammar`` the agent's own ``max_tokens`` applies unless given (the grammar's bound,
    :func:`~coopeval.agents.grammar.max_tokens_for`: 347 tokens for the judge): a lower cap can
    cut an answer the grammar admits. Other modes are capped at 120 tokens.
    """
    cap = {} if mode == "grammar" else {"max_tokens": 120}
    return LiteLLMAgent(
        "openai/smollm2",
        style=style,
        params={"api_base": api_base, "structured_output": mode, "send_seed": True, **cap, **params},
        label="smollm2",
    )


@pytest.mark.parametrize("mode", ["grammar", "json_schema"])
def test_probe_passes_where_the_server_applies_the_constraint(api_base: str, mode: str, tmp_path) -> None:
    agent = smollm2(api_base, mode)
    cache = ResponseCache(tmp_path / "cache")
    asyncio.run(agent.prepare(cache))
    assert agent.structured_output == mode
    assert len(cache) == 1  # the passing probe is cached: a rerun replays it without a call
    again = smollm2(api_base, mode)
    again._litellm = _NoCalls()  # a replay must not reach litellm
    asyncio.run(again.prepare(cache))
    assert again.structured_output == mode


def test_probe_fails_the_job_when_the_server_ignores_the_field(api_base: str) -> None:
    agent = smollm2(api_base, "grammar", grammar_field="guided_grammar")  # vLLM's old field: llama-server ignores it
    with pytest.raises(StructuredOutputError, match=r"smollm2\(IO\): structured_output = grammar is not applied"):
        asyncio.run(agent.prepare(None))


def test_auto_picks_grammar_for_a_model_litellm_does_not_know(api_base: str) -> None:
    agent = smollm2(api_base, "auto")
    assert agent.params["structured_output"] == "auto"
    asyncio.run(agent.prepare(None))
    assert agent.structured_output == "grammar"
    assert agent.params["structured_output"] == "grammar" and agent.params["grammar_field"] == "grammar"


PD = ActionDistribution(("A0", "A1"))
JUDGE = JudgeLabels(("Reciprocity", "Self-interest"))


def _canaries() -> list[tuple[AnswerFormat, dict[str, object]]]:
    """Per bounded schema construct, a format and an object outside its bounds (the canary)."""
    from coopeval.studies.gossip.formats import investor_format

    return [
        (JUDGE, {"reasoning": "r", "confidence": 7.5, "justification_type": "Fairness"}),  # number grid, label enum
        (investor_format(10.0), {"justification": "j", "investor_action": 42.5}),  # number range
        (PD, {"A0": 300, "A1": -5}),  # integer range
        (ContractDesign(("A0", "A1")), {"A0": 99999, "A1": -99999}),  # integer range
    ]


@pytest.mark.parametrize(("fmt", "canary"), _canaries(), ids=[str(f.kind) for f, _ in _canaries()])
def test_the_server_forces_every_bound_the_schema_states(api_base: str, fmt: AnswerFormat, canary: dict[str, object]) -> None:
    """Told to repeat an object outside the schema, the model must still answer inside it.

    A schema keyword the server's converter drops (``minimum``/``maximum`` on numbers) leaves
    the value unconstrained, with a 200 and no log line; the canary then comes back verbatim.
    """
    import litellm

    request = structured_output_kwargs("json_schema", fmt, "IO", 0)
    reply = asyncio.run(
        litellm.acompletion(
            model="openai/smollm2",
            api_base=api_base,
            messages=[{"role": "user", "content": f"Repeat exactly: {json.dumps(canary)}"}],
            temperature=0.0,
            max_tokens=80,
            num_retries=0,
            **request,
        )
    )
    choice = reply.choices[0]
    assert choice.finish_reason == "stop", choice
    jsonschema.validate(json.loads(choice.message.content), fmt.json_schema())


JUDGE_PROMPT = (
    "Classify this reasoning: 'They defected last round, so I defect now.' Answer with JSON "
    '{"reasoning": "<why>", "confidence": <0..1>, "justification_type": "<labels>"} using the labels '
    "Reciprocity, Self-interest or Other."
)


def _play(api_base: str, mode: str) -> list[dict[str, object]]:
    """Every attempt record of a Contracting cell, a Mediation cell and a judge decision."""
    records: list[dict[str, object]] = []
    for mechanism in ("Contracting", "Mediation"):
        agent = smollm2(api_base, mode)
        tables, _ = play_spec(make_cell(mechanism, "prisoners_dilemma", [agent]), [agent])
        records += tables["llm_calls"].to_dicts()
    maker = DecisionMaker(None, {"IO": ""})
    outcome = asyncio.run(maker.decide(smollm2(api_base, mode), JUDGE_PROMPT, JUDGE, {"judge": 1}))
    records += outcome.attempts
    return records


@pytest.mark.slow
@pytest.mark.local_llm
def test_each_setting_over_every_decision_kind(api_base: str) -> None:
    kinds = {"action", "contract_design", "contract_vote", "sign", "mediator_design", "mediator_vote", "judge"}

    grammar = _play(api_base, "grammar")
    assert {r["kind"] for r in grammar} == kinds
    assert {r["structured_output"] for r in grammar} == {"grammar"}
    assert [r for r in grammar if r["error"]] == []  # every decision valid at the first attempt

    schema_rows = _play(api_base, "json_schema")
    assert {r["kind"] for r in schema_rows} == kinds
    assert {r["structured_output"] for r in schema_rows} == {"json_schema"}
    for row in schema_rows:
        if row["truncated"]:  # the judge's reasoning string is unbounded: cut off, named, re-asked
            assert row["kind"] == "judge" and "cut off at max_tokens" in str(row["error"]), row
            continue
        # every answer has the schema's shape; only an action distribution's sum may be re-asked
        assert row["error"] == "" or str(row["error"]).startswith("the probabilities sum to"), row
        if row["kind"] == "judge":
            jsonschema.validate(json.loads(str(row["response"])), JUDGE.json_schema())

    none_rows = _play(api_base, "none")
    assert {r["structured_output"] for r in none_rows} == {"none"}
    assert any(r["error"] for r in none_rows)  # unconstrained, SmolLM2 writes prose: re-asks, as before


@pytest.mark.slow
@pytest.mark.local_llm
@pytest.mark.parametrize("mode", ["grammar", "json_schema"])
def test_cot_keeps_reasoning_before_the_constrained_object(api_base: str, mode: str) -> None:
    maker = DecisionMaker(None, {"CoT": "Think step by step, then answer with the JSON object."})
    prompt = 'You play a Prisoner\'s Dilemma. A0 cooperates, A1 defects. Answer {"A0": <percent>, "A1": <percent>}.'
    # 200 reasoning characters can take up to ~200 tokens (SmolLM2 sometimes writes "A1, A2, …"):
    # the token limit leaves room for them and the object, so the constraint, not max_tokens, ends the reply
    agent = smollm2(api_base, mode, "CoT", max_reasoning_chars=200, max_tokens=320)
    outcome = asyncio.run(maker.decide(agent, prompt, PD, {"cot": mode}))
    first = outcome.attempts[0]
    assert not first["truncated"], first
    reasoning, _, answer = str(first["response"]).rpartition("\n")
    assert len(reasoning) <= 200
    assert set(json.loads(answer)) == {"A0", "A1"}  # the object comes last, after the reasoning
    if mode == "grammar":
        assert first["error"] == "" and sum(outcome.parsed.values()) == 100


@pytest.mark.slow
@pytest.mark.local_llm
def test_gossip_formats_under_json_schema(api_base: str) -> None:
    """llama-server compiles every gossip schema, and SmolLM2's first answer has its shape."""
    from coopeval.studies.gossip.formats import DONOR, GOSSIP, REFLECTION, SIGNAL, investor_format

    maker = DecisionMaker(None, {"IO": ""})
    for fmt in (DONOR, GOSSIP, SIGNAL, REFLECTION, investor_format(10.0)):
        prompt = f"You are agent 2 in a donation game. Answer with JSON: {fmt.instruction()}"
        outcome = asyncio.run(maker.decide(smollm2(api_base, "json_schema", max_tokens=200), prompt, fmt, {"gossip": fmt.kind}))
        first = outcome.attempts[0]
        if first["truncated"]:  # an unbounded string ran into max_tokens: named as such, re-asked
            assert "cut off at max_tokens = 200" in str(first["error"]), first
            continue
        jsonschema.validate(json.loads(str(first["response"])), fmt.json_schema())
