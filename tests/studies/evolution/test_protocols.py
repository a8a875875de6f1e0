"""V&H (docs/protocol/evolution.md#vh-generation-loop) and Horibe (docs/protocol/evolution.md#horibe-changes) generation steps: selection, conditioning, word limit,
temperatures, probes."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path

import pytest

from coopeval.agents.protocol import DecisionRequest
from coopeval.studies.evolution.agents import StudyAgent, role_agent, run_agents
from coopeval.studies.evolution.bots import AlwaysZero, Reciprocal
from coopeval.studies.evolution.formats import DonationFormat
from coopeval.studies.evolution.runner import Member, RunAgents, StepRecords
from coopeval.studies.evolution.settings import EvolutionSettings

from .helpers import FakeLLM, bot_agents, make_run, settings


def _previous(n: int = 12) -> list[Member]:
    out = []
    for k in range(n):
        m = Member(f"1_{k + 1}", 1, f"My strategy will be plan {k + 1}.", word_count=5, display=f"Player {k + 1}")
        m.score = float([5, 9, 5, 1, 7, 7, 3, 2, 8, 0, 4, 6][k])
        m.rank = k + 1
        m.tiebreak = k  # the shuffle leaves them in this order: ties keep population order here
        out.append(m)
    return out


def test_vh_truncation_keeps_survivors_and_sends_their_scores() -> None:
    llm = FakeLLM(0.8)
    run = make_run(settings(protocol="vh"), RunAgents(llm, llm, llm, AlwaysZero()))
    members = asyncio.run(run.next_population(StepRecords(), 2, _previous()))
    survivors = [m for m in members if m.survived]
    assert [m.agent_id for m in survivors] == ["1_2", "1_9", "1_5", "1_6", "1_12", "1_1"]  # stable ties: 1_5 before 1_6, 1_1 before 1_3
    assert all(m.strategy == f"My strategy will be plan {m.agent_id.split('_')[1]}." for m in survivors)
    newcomers = [m for m in members if not m.survived]
    assert [m.agent_id for m in newcomers] == [f"2_{k}" for k in range(1, 7)] and all(m.born == 2 for m in newcomers)
    assert len(llm.prompts) == 6
    prompt = llm.prompts[0]
    assert "plan 2. (score: 9)" in prompt and "plan 1. (score: 5)" in prompt and "plan 3." not in prompt


def test_vh_no_scores_compat() -> None:
    llm = FakeLLM(0.8)
    run = make_run(settings(protocol="vh", show_scores=False), RunAgents(llm, llm, llm, AlwaysZero()))
    asyncio.run(run.next_population(StepRecords(), 2, _previous()))
    assert "plan 2." in llm.prompts[0] and "score" not in llm.prompts[0]


def test_vh_score_rules() -> None:
    assert make_run(settings(protocol="vh"), bot_agents(Reciprocal())).score(3.0, 5.0) == 8.0
    assert make_run(settings(protocol="vh", score_rule="game2_double"), bot_agents(Reciprocal())).score(3.0, 5.0) == 10.0


def test_horibe_roulette_offspring_get_parent_text_and_rank() -> None:
    llm = FakeLLM(0.8, strategy=lambda r: "Strategy: be fair.")
    run = make_run(settings(), RunAgents(llm, llm, llm, AlwaysZero()))
    prev = _previous()
    members = asyncio.run(run.next_population(StepRecords(), 2, prev))
    again = asyncio.run(make_run(settings(), RunAgents(llm, llm, llm, AlwaysZero())).next_population(StepRecords(), 2, prev))
    assert [m.parent_id for m in members] == [m.parent_id for m in again]  # seeded stream
    assert "1_10" not in {m.parent_id for m in members}  # fitness 0 is never drawn
    assert not any(m.survived for m in members) and len(members) == 12
    by_id = {m.agent_id: m for m in prev}
    for member, prompt in zip(members, llm.prompts[:12], strict=True):
        parent = by_id[member.parent_id]
        assert member.parent_rank == parent.rank
        assert f"rank {parent.rank} of 12" in prompt and parent.strategy in prompt
    assert all(m.strategy == "be fair." for m in members)


@pytest.mark.parametrize(("second", "truncated", "words"), [(360, True, 350), (100, False, 100)])
def test_horibe_word_limit_one_reask_then_truncate(second: int, truncated: bool, words: int) -> None:
    def strategy(request):  # type: ignore[no-untyped-def]
        n = second if request.position["kind"] == "strategy-reask" else 400
        return "Strategy: " + " ".join(["word"] * n)

    llm = FakeLLM(0.8, strategy=strategy)
    run = make_run(settings(n_agents=4), RunAgents(llm, llm, llm, AlwaysZero()))
    members = asyncio.run(run.first_population(StepRecords()))
    assert all(m.truncated is truncated and m.word_count == words for m in members)
    assert llm.calls == 8
    assert "400 words, more than the limit of 350" in llm.prompts[-1]


def test_temperatures_sent_and_recorded() -> None:
    s = settings()
    strategy, gameplay, probe = FakeLLM(s.strategy_temperature), FakeLLM(s.gameplay_temperature), FakeLLM(s.matrix_temperature)
    run = make_run(settings(n_agents=4, invasion_per_generation=0, matrix_per_generation=0), RunAgents(strategy, gameplay, probe, AlwaysZero()))
    _, records = asyncio.run(run.step(1, None))
    assert (s.strategy_temperature, s.gameplay_temperature, s.matrix_temperature) == (0.8, 0.3, 0.3)
    assert {r["temperature"] for r in records.tables["evo_strategies"]} == {0.8}
    assert {e["temperature"] for e in records.tables["evo_events"]} == {0.3}
    vh = settings(protocol="vh")  # the V&H reference sent no temperature for most models (issue 21 item 4)
    assert (vh.strategy_temperature, vh.gameplay_temperature, vh.matrix_temperature) == (None, None, None)
    assert settings(protocol="vh", gameplay_temperature=0.5).matrix_temperature == 0.5


@pytest.mark.parametrize("protocol", ["vh", "horibe"])
def test_a_model_entrys_temperature_wins_for_every_role(protocol: str) -> None:
    entry = {"model": "openrouter/openai/gpt-4o", "params": {"max_tokens": 50, "temperature": 1.0}}
    agents = run_agents(entry, settings(protocol=protocol, strategy_temperature=0.7, gameplay_temperature=0.2))
    assert isinstance(agents.strategy, StudyAgent) and agents.strategy.style == "evolution"
    assert {a.params["temperature"] for a in (agents.strategy, agents.gameplay, agents.probe)} == {1.0}
    assert agents.probe.params["max_tokens"] == 50 and agents.free_rider.model == "bot/evo-zero"
    assert role_agent({"model": "bot/evo-zero"}, "gameplay", 0.3).cacheable is False


def test_role_agents_without_an_entry_temperature() -> None:
    entry = {"model": "openrouter/openai/gpt-4o"}
    horibe = run_agents(entry, settings())
    assert (horibe.strategy.params["temperature"], horibe.gameplay.params["temperature"], horibe.probe.params["temperature"]) == (0.8, 0.3, 0.3)
    vh = run_agents(entry, settings(protocol="vh"))
    assert all(a.params["temperature"] is None for a in (vh.strategy, vh.gameplay, vh.probe))  # None: not sent, the provider's default
    kwargs = vh.gameplay.inner.call_kwargs(DecisionRequest(messages=({"role": "user", "content": "x"},), answer_format=DonationFormat()))  # type: ignore[attr-defined]
    assert kwargs["temperature"] is None  # litellm sends no temperature for None


def test_paper_config_samples_as_the_papers_did() -> None:
    import yaml

    from coopeval.studies.evolution.study import EvolutionStudy

    config = yaml.safe_load(Path("config/paper.yaml").read_text(encoding="utf-8"))
    sent: dict[tuple[str, str], set[object]] = {}
    for cell in EvolutionStudy().cells(config):
        agents = run_agents(cell["model"], EvolutionSettings.from_params(cell["params"]))
        roles = (agents.strategy, agents.gameplay, agents.probe)
        sent.setdefault((cell["protocol"], cell["model_label"]), set()).add(tuple(a.params.get("temperature") for a in roles))
    assert sent[("vh", "claude-3-5-sonnet-20240620")] == {(0.8, 0.8, 0.8)}
    assert sent[("vh", "gemini-1.5-flash")] == sent[("vh", "gpt-4o-2024-08-06")] == {(None, None, None)}
    for label in ("claude-3-5-sonnet-20240620", "gemini-1.5-flash", "gemini-2.0-flash", "gemini-2.5-flash"):
        assert sent[("horibe", label)] == {(0.8, 0.3, 0.3)}


def test_reciprocal_matrix_features_through_probes() -> None:
    run = make_run(settings(), bot_agents(Reciprocal()))
    records = StepRecords()
    asyncio.run(run.matrix(records, 3, Member("3_1", 3, "copy the last donation")))
    cells = records.tables["strategy_matrix"]
    assert len(cells) == 121 and all(c["percentage"] == 10.0 * c["j"] for c in cells)
    feats = records.tables["matrix_features"][0]
    assert (feats["left"], feats["right"], feats["oes"], feats["rho_mono"], feats["n_failed_cells"]) == (20.0, 80.0, 60.0, 1.0, 0)


def test_probe_prompt_holds_the_synthetic_chain() -> None:
    llm = FakeLLM(0.3, percent=lambda s: s["recipient_last_percent"])
    run = make_run(settings(), RunAgents(llm, llm, llm, AlwaysZero()))
    records = StepRecords()
    asyncio.run(run.matrix(records, 2, Member("1_4", 1, "s")))
    prompt = next(p for p in llm.prompts if "gave 70.00%" in p and "Player 3 gave 20.00%" in p)
    assert "round 4 of the game" in prompt and "generation 1," in prompt
    assert re.search(r"1\. In round 3, Player 2 gave 70\.00%.*\n2\. In round 2, Player 3 gave 20\.00%.*\n3\. In round 1, Player 4 gave 50\.00%", prompt)
    assert llm.calls == 121


def test_analysis_sample_is_seeded_and_shared() -> None:
    run = make_run(settings(invasion_per_generation=2, matrix_per_generation=3), bot_agents(Reciprocal()))
    members = _previous()
    a = [m.agent_id for m in run.analysis_sample(1, members)]
    assert a == [m.agent_id for m in run.analysis_sample(1, members)] and len(a) == 3
    records = StepRecords()
    asyncio.run(run.analyse(records, 1, members))
    assert [r["strategy_id"] for r in records.tables["invasion_tests"]] == a[:2] or sorted(r["strategy_id"] for r in records.tables["invasion_tests"]) == sorted(a[:2])
    assert sorted(r["strategy_id"] for r in records.tables["matrix_features"]) == sorted(a)


def test_failed_strategy_is_recorded_and_not_analysed() -> None:
    def strategy(request):  # type: ignore[no-untyped-def]
        return "Strategy: " if request.position["pair"] == 0 else "Strategy: give 30%."

    llm = FakeLLM(0.8, strategy=strategy)
    run = make_run(settings(n_agents=4, invasion_per_generation=4, matrix_per_generation=0), RunAgents(llm, llm, llm, AlwaysZero()))
    _members, records = asyncio.run(run.step(1, None))
    failed = [r for r in records.tables["evo_strategies"] if r["status"] == "failed"]
    assert [r["agent_id"] for r in failed] == ["1_1"] and failed[0]["attempts"] == 6 and failed[0]["text"] == ""
    assert "1_1" not in {r["strategy_id"] for r in records.tables["invasion_tests"]}
    assert len(records.tables["invasion_tests"]) == 3
    assert sum(1 for d in records.tables["decisions"] if d["status"] == "failed") == 1


def test_study_agent_is_probed_and_keyed_like_the_agent_it_wraps(monkeypatch, tmp_path) -> None:
    """``structured_output: auto`` on an evolution agent: the decision loop runs the wrapped
    agent's probe (grammar passes here) and the probe of the format's own grammar, then sends
    the grammar; the endpoint (api_base) that enters the cache key is the wrapped agent's."""
    from types import SimpleNamespace

    from coopeval.agents.maker import DecisionMaker
    from coopeval.cache.response_cache import ResponseCache, call_key
    from coopeval.decisions.formats import ActionDistribution

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    entry = {"model": "openai/sim-model", "params": {"api_base": "http://127.0.0.1:9/v1", "structured_output": "auto"}}
    agent = role_agent(entry, "gameplay", 0.3)
    sent: list[dict] = []

    async def acompletion(**kwargs):
        sent.append(kwargs)
        is_probe = "zq-4817" in kwargs["extra_body"]["grammar"]  # the mode's probe; the format's probe gets an answer
        text = '{"probe": "zq-4817"}' if is_probe else '{"A0": 100, "A1": 0}'
        usage = SimpleNamespace(prompt_tokens=1, completion_tokens=1, total_tokens=2, completion_tokens_details=None)
        choice = SimpleNamespace(message=SimpleNamespace(content=text), finish_reason="stop")
        return SimpleNamespace(id="r", model="sim-model", choices=[choice], usage=usage)

    stub = SimpleNamespace(acompletion=acompletion, supports_response_schema=lambda model: False)
    monkeypatch.setattr(agent.inner, "_client", lambda: stub)
    cache = ResponseCache(tmp_path / "cache")
    outcome = asyncio.run(DecisionMaker(cache, {"evolution": ""}).decide(agent, "Play.", ActionDistribution(("A0", "A1")), {"round": 1}))

    assert outcome.status == "ok" and outcome.parsed == {"A0": 100, "A1": 0}
    assert len(sent) == 3 and all("grammar" in s["extra_body"] for s in sent)
    assert sent[1]["extra_body"]["grammar"] == sent[2]["extra_body"]["grammar"]  # the format's grammar, probed first
    assert agent.params["structured_output"] == "grammar" and agent.params["temperature"] == 0.3
    assert agent.endpoint == agent.inner.endpoint and agent.endpoint["api_base"] == "http://127.0.0.1:9/v1"
    messages = tuple(sent[2]["messages"])
    assert cache.get(call_key(agent.model, messages, agent.params, {"round": 1}, 0, agent.endpoint)) is not None
