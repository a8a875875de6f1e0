"""What the prompts say agrees with what the game does (issue 21 items 5 and 6): the rules'
example trace has exactly ``trace_length`` events, Horibe rules state what a donor observes
(compatibility switch: unstated), an agent has one name for life, and a shown trace never
exceeds ``trace_length`` lines."""

from __future__ import annotations

import asyncio
import re

import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from coopeval.studies.evolution.bots import AlwaysZero, Reciprocal
from coopeval.studies.evolution.runner import Member, RunAgents, StepRecords

from .helpers import FakeLLM, bot_agents, make_run, settings

_LINE = re.compile(r"^(\d+)\. In round (\d+), ", re.MULTILINE)


@pytest.mark.parametrize("protocol", ["vh", "horibe"])
@pytest.mark.parametrize("length", [1, 2, 3, 5])
def test_the_rules_example_shows_exactly_trace_length_events(protocol: str, length: int) -> None:
    text = make_run(settings(protocol=protocol, trace_length=length), bot_agents(Reciprocal())).prompts.system()
    lines = _LINE.findall(text)
    assert [int(k) for k, _ in lines] == list(range(1, length + 1))
    assert [int(r) for _, r in lines] == list(range(length, 0, -1))
    assert f"a donor in round {length + 1} could be shown" in text
    assert f"up to {length} of the most recent actions" in text


def test_horibe_rules_state_what_a_donor_observes_unless_the_compat_switch() -> None:
    stated = make_run(settings(), bot_agents(Reciprocal())).prompts
    assert "As a donor you are told what your recipient did recently" in stated.system()
    assert "As a donor you are told" in stated.strategy_first("Player 1")  # the strategy writer reads it too
    unstated = make_run(settings(horibe_observation_unstated=True), bot_agents(Reciprocal())).prompts.system()
    assert "told what your recipient did" not in unstated and not _LINE.search(unstated)
    assert "As a donor you are told" in make_run(settings(protocol="vh", horibe_observation_unstated=True), bot_agents(Reciprocal())).prompts.system()


@hsettings(max_examples=12, deadline=None)
@given(length=st.integers(1, 4), n=st.sampled_from([4, 6, 8]), protocol=st.sampled_from(["vh", "horibe"]))
def test_a_shown_trace_never_exceeds_trace_length(length: int, n: int, protocol: str) -> None:
    run = make_run(settings(protocol=protocol, n_agents=n, trace_length=length, invasion_per_generation=0, matrix_per_generation=0), bot_agents(Reciprocal()))
    _, records = asyncio.run(run.step(1, None))
    for event in records.tables["evo_events"]:
        lines = event["trace_shown"].splitlines()
        events = _LINE.findall(event["trace_shown"])
        assert len(lines) <= length
        no_history = "no previous interactions" in event["trace_shown"]
        assert no_history == (len(events) < length), event["trace_shown"]



@pytest.mark.parametrize("protocol", ["vh", "horibe"])
def test_an_agent_keeps_one_name_for_writing_and_playing(protocol: str) -> None:
    writer = FakeLLM(0.8, strategy=lambda r: "Strategy: give half." if protocol == "horibe" else "My strategy will be to give half.")
    donor = FakeLLM(0.3)
    run = make_run(settings(protocol=protocol, n_agents=6, invasion_per_generation=0, matrix_per_generation=0), RunAgents(writer, donor, donor, AlwaysZero()))
    members, first = asyncio.run(run.step(1, None))
    prompts1 = list(writer.prompts)
    members2, second = asyncio.run(run.step(2, members))
    prompts2 = writer.prompts[len(prompts1):]
    for generation_members, records, born, prompts in ((members, first, 1, prompts1), (members2, second, 2, prompts2)):
        names = [m.display for m in generation_members]
        assert len(set(names)) == len(names) and all(re.fullmatch(r"Player \d", n) for n in names)
        newborn = [m.display for m in generation_members if m.born == born]
        calls = sorted((c["seat"], c["prompt"]) for c in records.tables["llm_calls"] if c["kind"] == "strategy")
        written = [re.search(r"Your name is (Player \d)\.", prompt).group(1) for _, prompt in calls]  # type: ignore[union-attr]
        assert written == newborn and len(prompts) == len(newborn)  # the name each agent wrote under ...
        for event in records.tables["evo_events"]:
            member = next(m for m in generation_members if m.agent_id == event["donor_id"])
            assert event["donor"] == member.display  # ... is the name it plays under
        rows = {r["agent_id"]: r["display_name"] for r in records.tables["evo_strategies"]}
        assert rows == {m.agent_id: m.display for m in generation_members}
    if protocol == "vh":
        kept = {m.agent_id: m.display for m in members}
        assert all(m.display == kept[m.agent_id] for m in members2 if m.survived)  # survivors keep their names


def test_a_probed_strategy_keeps_its_name() -> None:
    probe = FakeLLM(0.3)
    run = make_run(settings(), RunAgents(probe, probe, probe, AlwaysZero()))
    asyncio.run(run.matrix(StepRecords(), 2, Member("2_3", 2, "give what A gave", display="Player 3")))
    assert all("Your name is Player 3." in p for p in probe.prompts)
    assert all("In round 3, Player 1 gave" in p and "Player 3 gave" not in p for p in probe.prompts)
