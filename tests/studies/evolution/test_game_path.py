"""The donation game through the one decision path: docs/protocol/evolution.md#constant-fraction-oracle, #oracles oracles with bots, traces
(docs/protocol/evolution.md#traces), invalid answers, punishment and refusal events, percent base."""

from __future__ import annotations

import asyncio
from fractions import Fraction

import pytest

from coopeval.agents.maker import DecisionMaker
from coopeval.decisions.errors import AnswerError
from coopeval.studies.evolution.bots import (
    AlwaysZero,
    ConstantFraction,
    Malformed,
    Reciprocal,
    make_evo_bot,
)
from coopeval.studies.evolution.runner import Member, StepRecords
from coopeval.studies.evolution.traces import Trace, TraceEvent

from .helpers import FakeLLM, bot_agents, make_run, settings


@pytest.mark.parametrize("protocol", ["vh", "horibe"])
def test_constant_half_population_through_the_decision_path(protocol: str) -> None:
    run = make_run(settings(protocol=protocol, invasion_per_generation=0, matrix_per_generation=0), bot_agents(ConstantFraction(50)))
    members, records = asyncio.run(run.step(1, None))
    gen = records.tables["evo_generations"][0]
    assert gen["mean_final_game1"] == 341.171875 and gen["mean_final_game2"] == 341.171875
    assert gen["n_events"] == 144 and gen["donation_fraction"] == pytest.approx(0.5)
    assert {m.game1 for m in members if m.half == "A"} == {182.96875}
    assert {m.game1 for m in members if m.half == "B"} == {499.375}
    assert {m.score for m in members} == {182.96875 + 499.375}
    assert len(records.tables["decisions"]) == 12 + 144


@pytest.mark.parametrize("protocol", ["vh", "horibe"])
def test_invasion_oracle_both_halves(protocol: str) -> None:
    run = make_run(settings(protocol=protocol), bot_agents(ConstantFraction(50)))
    halves = set()
    for k in range(12):
        out = asyncio.run(run.invasion(StepRecords(), 1, Member(f"1_{k}", 1, "give half")))
        assert Fraction(out["evolved_total"]) / 11 == Fraction(13895, 44)
        assert out["evolved_mean_score"] == pytest.approx(315.7954545, abs=1e-7)
        assert out["bot_score"] == 1095.0 and out["robust"] is False and out["n_copies"] == 11
        halves.add(out["bot_half"])
    assert halves == {"A", "B"}


def test_invasion_bot_never_calls_a_model_and_shows_zero() -> None:
    llm = FakeLLM(0.3)
    from coopeval.studies.evolution.runner import RunAgents

    run = make_run(settings(), RunAgents(llm, llm, llm, AlwaysZero()))
    records = StepRecords()
    asyncio.run(run.invasion(records, 1, Member("1_1", 1, "give half")))
    assert llm.calls == 11 * 12  # the bot's 12 donations are scripted
    bot_events = [e for e in records.tables["evo_events"] if e["donor_id"] == "free-rider"]
    assert len(bot_events) == 12 and {e["percentage"] for e in bot_events} == {0.0}
    assert {e["temperature"] for e in bot_events} == {None}


def test_trace_render_and_reset() -> None:
    run = make_run(settings(invasion_per_generation=0, matrix_per_generation=0), bot_agents(Reciprocal()))
    _, records = asyncio.run(run.step(1, None))
    events = records.tables["evo_events"]
    for game in (1, 2):
        first = [e for e in events if e["game"] == game and e["round"] == 1]
        assert all(e["trace_shown"].startswith("So far, ") and "no previous interactions" in e["trace_shown"] for e in first)
    late = [e for e in events if e["game"] == 1 and e["round"] == 5]
    for e in late:
        lines = e["trace_shown"].splitlines()
        assert [ln.split(",")[0] for ln in lines] == ["1. In round 4", "2. In round 3", "3. In round 2"]
        assert lines[0].split(" gave ")[0].endswith(e["recipient"])


def test_trace_chain_semantics() -> None:
    t = Trace.empty("C")
    t = t.extended(TraceEvent(1, "B", "C", "donate", 10, 1), 3)
    t = t.extended(TraceEvent(2, "A", "B", "donate", 20, 2), 3)
    assert [e.actor for e in t.events] == ["A", "B"] and t.origin == "C"
    t = t.extended(TraceEvent(3, "Z", "A", "donate", 30, 3), 3).extended(TraceEvent(4, "Y", "Z", "donate", 0, 0), 3)
    assert [e.actor for e in t.events] == ["Y", "Z", "A"] and t.origin == ""
    assert [e.actor for e in t.shown(1).events] == ["Y"]
    assert t.last_percent() == 0


def test_invalid_answer_gets_its_own_event_never_the_recipients_chain() -> None:
    good, bad = Reciprocal(), Malformed()
    run = make_run(settings(invasion_per_generation=0, matrix_per_generation=0), bot_agents(good))
    records = StepRecords()
    strategies = ["s"] * 6
    agents = [bad] + [good] * 5
    ids = [f"x{i}" for i in range(6)]
    asyncio.run(run.play_population(records, 1, "evolution", strategies, agents, ids))
    events = records.tables["evo_events"]
    bad_events = [e for e in events if e["donor_id"] == "x0"]
    assert bad_events and all(e["action"] == "invalid" and e["failed"] and e["amount"] == 0.0 for e in bad_events)
    assert all(e["attempts"] == 6 and e["stated_value"] is None for e in bad_events)
    bad_name = bad_events[0]["donor"]
    seen_after = [e for e in events if e["recipient"] == bad_name and e["game"] == bad_events[0]["game"] and e["round"] > bad_events[0]["round"]]
    assert seen_after
    first_line = seen_after[0]["trace_shown"].splitlines()[0]
    assert f"{bad_name} gave no valid answer" in first_line
    failed = [d for d in records.tables["decisions"] if d["status"] == "failed"]
    assert len(failed) == len(bad_events)


def test_percent_base_endowment_reasks_above_the_holdings() -> None:
    run = make_run(settings(percent_base="endowment"), bot_agents(ConstantFraction(50)))
    fmt = run.donation_format(4.0)
    assert fmt.limit == 40.0  # 4 units are 40 % of the endowment: more is re-asked, not clipped (issue 21 item 1)
    with pytest.raises(AnswerError, match="0 to 40"):
        fmt.parse("Answer: 50")
    assert run.resolve(fmt.parse("Answer: 40"), fmt, 4.0).amount == 4.0
    assert run.resolve({"action": "donate", "value": 20.0}, fmt, 4.0).amount == 2.0
    cur = make_run(settings(), bot_agents(ConstantFraction(50)))
    assert cur.resolve({"action": "donate", "value": 50.0}, cur.donation_format(4.0), 4.0).amount == 2.0


def test_punishment_and_refusal_events() -> None:
    class Punisher(FakeLLM):
        async def generate(self, request):  # type: ignore[no-untyped-def]
            from coopeval.agents.protocol import Reply

            fmt = request.answer_format
            if fmt.kind == "strategy":
                return Reply(text="My strategy will be to punish.")
            if fmt.variant == "costly_punishment":
                return Reply(text=fmt.render("punish", min(1.0, fmt.limit)))
            return Reply(text=fmt.render("refuse", 0.0))

    from coopeval.studies.evolution.runner import RunAgents

    for variant, action in (("costly_punishment", "punish"), ("partner_choice", "refuse")):
        p = Punisher()
        run = make_run(settings(protocol="vh", punishment=variant, invasion_per_generation=0, matrix_per_generation=0), RunAgents(p, p, p, AlwaysZero()))
        _, records = asyncio.run(run.step(1, None))
        events = records.tables["evo_events"]
        assert {e["action"] for e in events} == {action}
        gen = records.tables["evo_generations"][0]
        if action == "punish":
            assert gen["punish_frequency"] == 1.0
            first = next(e for e in events if e["game"] == 1 and e["round"] == 1)
            assert first["donor_resources_after"] == 9.0 and first["recipient_resources_after"] == 8.0
            later = next(e for e in events if e["game"] == 1 and e["round"] == 2)
            assert "spent 1 units to take 2 units away" in later["trace_shown"]
        else:
            assert gen["refuse_frequency"] == 1.0 and gen["mean_final"] == 10.0
            assert "refused to play with" in next(e for e in events if e["round"] == 2)["trace_shown"]


def test_make_evo_bot_names() -> None:
    assert make_evo_bot("bot/evo-constant-25").percent({}) == 25.0
    assert make_evo_bot("bot/evo-zero").percent({}) == 0.0
    assert make_evo_bot("bot/evo-reciprocal").percent({"recipient_last_percent": 30.0}) == 30.0
    with pytest.raises(KeyError, match="known"):
        make_evo_bot("bot/evo-constant-150")


def test_maker_accepts_study_format() -> None:
    from coopeval.studies.evolution.formats import DonationFormat

    maker = DecisionMaker(None, {})
    out = asyncio.run(maker.decide(ConstantFraction(30), "body", DonationFormat("percent"), {"k": 1}, state={"donor_resources": 10}))
    assert out.ok and out.parsed["value"] == 30.0 and out.attempts[0]["kind"] == "donation"


class GivesOnceFake(FakeLLM):
    """Stateful: gives 100 % on its own first donation, nothing afterwards."""

    def for_seat(self) -> GivesOnceFake:
        import copy

        return copy.deepcopy(self)

    async def generate(self, request):  # type: ignore[no-untyped-def]
        self._percent = lambda s: 100.0 if self.calls == 1 else 0.0  # counted before answering
        return await super().generate(request)


def test_every_donor_has_its_own_agent_instance() -> None:
    """Issue 13 kind 9: each of the 11 copies in an invasion test gives once (a shared instance
    would give once in total)."""
    from coopeval.studies.evolution.runner import RunAgents

    llm = GivesOnceFake(0.3)
    run = make_run(settings(), RunAgents(llm, llm, llm, AlwaysZero()))
    records = StepRecords()
    asyncio.run(run.invasion(records, 1, Member("1_1", 1, "give half")))
    full = [e["donor_id"] for e in records.tables["evo_events"] if e["percentage"] == 100.0]
    assert sorted(full) == sorted(f"1_1#{c}" for c in range(1, 12))


def test_the_unused_reputation_score_is_logged() -> None:
    """docs/protocol/evolution.md#vh-metrics (issue 21 item 7): first donation sets f; then ((1 − |f − rep_R|) + 0.5·rep) / 1.5;
    reset each game. By hand for N = 4 giving 50 %: game 1 rounds are A, B, B, A (docs/protocol/evolution.md#schedule); A's
    scores 1/2 then (1 − |1/2 − 5/6| + 1/4) / 1.5 = 11/18, B's 1/2 then 5/6; game 2 swaps them."""
    from coopeval.studies.evolution.reputation import next_reputation

    assert next_reputation(None, 0.3, None) == 0.3
    assert next_reputation(0.8, 0.2, 0.6) == pytest.approx((1 - 0.4 + 0.4) / 1.5)
    assert next_reputation(0.5, 0.5, None) == pytest.approx(1.25 / 1.5)  # no score yet: counts as f
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        next_reputation(None, 1.5, None)
    run = make_run(settings(protocol="vh", n_agents=4, invasion_per_generation=0, matrix_per_generation=0), bot_agents(ConstantFraction(50)))
    _, records = asyncio.run(run.step(1, None))
    seen: dict[tuple[int, str], list[float]] = {}
    for e in sorted(records.tables["evo_events"], key=lambda e: (e["game"], e["round"], e["pair"])):
        seen.setdefault((e["game"], e["donor_half"]), []).append(e["donor_reputation"])
    late, early = [0.5, 0.5, 11 / 18, 11 / 18], [0.5, 0.5, 5 / 6, 5 / 6]
    assert seen[(1, "A")] == pytest.approx(late) and seen[(1, "B")] == pytest.approx(early)
    assert seen[(2, "A")] == pytest.approx(early) and seen[(2, "B")] == pytest.approx(late)
