"""Recording stand-ins: the real agent's identity, a bot's answers, only while standing in."""

from __future__ import annotations

import asyncio

import pytest

from coopeval.agents.bots import TitForTat
from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.protocol import DecisionRequest, RequestRejectedError
from coopeval.agents.registry import make_agent, standing_in
from coopeval.decisions.formats import ActionDistribution, Signature
from coopeval.decisions.parsing import check_answer
from coopeval.estimate.standin import COT_REASONING, Stance, StandIn, stand_ins

ENTRY = {"model": "openai/gpt-4o-mini", "style": "CoT", "label": "mini", "params": {"max_tokens": 64, "api_base": "http://127.0.0.1:9/v1"}}


def test_only_language_models_are_stood_in_and_only_while_standing_in():
    with standing_in(lambda spec: StandIn.for_entry(spec, Stance.DEFECTING)):
        assert isinstance(make_agent(ENTRY), StandIn)
        assert isinstance(make_agent({"model": "bot/tit-for-tat"}), TitForTat)
    assert isinstance(make_agent(ENTRY), LiteLLMAgent)


def test_a_stand_in_has_the_real_agents_identity_and_cache_key_parts():
    real = make_agent(ENTRY)
    with stand_ins(Stance.COOPERATIVE):
        stand_in = make_agent(ENTRY)
    assert (stand_in.name, stand_in.model, stand_in.style) == ("mini(CoT)", "openai/gpt-4o-mini", "CoT")
    assert stand_in.params == real.params and stand_in.params["temperature"] == 1.0  # the default filled in
    assert stand_in.endpoint == real.endpoint == {"api_base": "http://127.0.0.1:9/v1"}
    assert stand_in.cacheable is False


def _ask(stance, fmt, state):
    agent = StandIn.for_entry(ENTRY, stance)
    request = DecisionRequest(messages=({"role": "user", "content": "?"},), answer_format=fmt, state=state)
    return asyncio.run(agent.generate(request))


def test_stances_answer_like_bots_and_cot_answers_are_long_enough_to_judge():
    fmt = ActionDistribution(("A0", "A1"))
    state = {"seat": 0, "n_actions": 2, "cooperative_action": 0, "baseline_action": 1, "history": []}
    cooperative = _ask(Stance.COOPERATIVE, fmt, state)
    assert cooperative.text.startswith(COT_REASONING) and len(cooperative.text) >= 80
    assert check_answer(fmt, cooperative.text, "", 64).parsed == {"A0": 100, "A1": 0}
    assert check_answer(fmt, _ask(Stance.DEFECTING, fmt, state).text, "", 64).parsed == {"A0": 0, "A1": 100}
    with pytest.raises(RequestRejectedError, match="failing stance"):  # fails the decision without re-asks
        _ask(Stance.FAILING, fmt, state)
    assert cooperative.max_tokens == 64
    signed = _ask(Stance.DEFECTING, Signature(), {**state, "contract": {"A0": 1, "A1": -1}, "enforcing_design": {"A0": 1, "A1": -1}})
    assert check_answer(Signature(), signed.text, "", 64).parsed == {"sign": False}


def test_a_stand_in_is_asked_without_the_transport_layers():
    """The decision loop asks a stand-in directly: no retry loop (which counts a refused request
    as a transport retry), no adaptive limit, no timing; a failing stand-in still fails its
    decision at the first attempt."""
    from coopeval.agents.maker import DecisionMaker

    fmt = ActionDistribution(("A0", "A1"))
    state = {"seat": 0, "n_actions": 2, "cooperative_action": 0, "baseline_action": 1, "history": []}
    maker = DecisionMaker(None, {"CoT": "", "IO": ""})
    failed = asyncio.run(maker.decide(StandIn.for_entry(ENTRY, Stance.FAILING), "?", fmt, {"round": 1}, state=state))
    valid = asyncio.run(maker.decide(StandIn.for_entry(ENTRY, Stance.COOPERATIVE), "?", fmt, {"round": 2}, state=state))
    assert (failed.status, len(failed.attempts), valid.status, len(valid.attempts)) == ("failed", 1, "ok", 1)
    assert [(a["transport_retries"], a["in_flight"], a["latency_s"]) for a in failed.attempts + valid.attempts] == [(0, 0, 0.0)] * 2
    assert (maker.stats.bot_calls, maker.stats.calls_made) == (2, 0)
