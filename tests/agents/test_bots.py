"""The one bot family: the same AlwaysCooperate / AlwaysDefect / Malformed classes in every study,
each bot's facts in its classifier, and a study's formats answered through its registered
answerer."""

from __future__ import annotations

import asyncio
import json
import math

from coopeval.agents import bots
from coopeval.agents.bots import (
    AlwaysCooperate,
    AlwaysDefect,
    Bot,
    Classifier,
    GrimTrigger,
    Malformed,
    ScriptedAgent,
    TitForTat,
    answerer_for,
    make_bot,
)
from coopeval.agents.protocol import DecisionRequest, ErrorClass
from coopeval.decisions.formats import ActionDistribution
from coopeval.studies.evolution import bots as evo
from coopeval.studies.gossip import bots as gossip
from coopeval.studies.gossip.formats import ChoiceFormat, GossipFormat, SignalFormat


def _answer(bot: ScriptedAgent, fmt: object, state: dict) -> str:
    request = DecisionRequest(messages=({"role": "user", "content": "x"},), answer_format=fmt, state=state)  # type: ignore[arg-type]
    return asyncio.run(bot.generate(request)).text


def test_every_study_uses_the_family_classes() -> None:
    assert gossip.GOSSIP_BOTS["always-cooperate"] is AlwaysCooperate
    assert gossip.GOSSIP_BOTS["always-defect"] is AlwaysDefect
    assert issubclass(evo.Malformed, Malformed) and issubclass(evo.EvoBot, ScriptedAgent)
    assert all(issubclass(cls, Bot) for cls in gossip.GOSSIP_BOTS.values())
    for bot in (make_bot("bot/tit-for-tat"), gossip.make_gossip_bot("bot/max"), evo.make_evo_bot("bot/evo-zero")):
        assert (bot.style, bot.params, bot.cacheable) == ("scripted", {}, False)
        assert bot.name == bot.model and bot.name.startswith(bots.BOT_PREFIX)
        assert bot.classify_error(TimeoutError()) is ErrorClass.FATAL


def test_classifiers_state_the_facts() -> None:
    assert AlwaysCooperate.classifier == Classifier()  # reads nothing, remembers nothing
    assert TitForTat.classifier.memory_depth == 1 and "history" in TitForTat.classifier.reads
    assert GrimTrigger.classifier.memory_depth == math.inf
    assert gossip.Discriminator.classifier.reads == frozenset({"partner", "log"})
    assert evo.Reciprocal.classifier.memory_depth == 1
    assert not any(cls.classifier.stochastic for cls in bots.BOTS.values())


def test_binary_strategies_and_their_coopeval_actions() -> None:
    fmt = ActionDistribution(("A0", "A1", "A2"))
    game = {"seat": 0, "n_actions": 3, "cooperative_action": 2, "baseline_action": 0}
    assert json.loads(_answer(AlwaysCooperate(), fmt, game)) == {"A0": 0, "A1": 0, "A2": 100}
    assert json.loads(_answer(AlwaysDefect(), fmt, game)) == {"A0": 100, "A1": 0, "A2": 0}
    after_defection = {**game, "history": [[2, 2], [2, 0]]}
    after_recovery = {**game, "history": [[2, 0], [2, 2]]}
    assert not TitForTat().cooperates(after_defection) and TitForTat().cooperates(after_recovery)
    assert not GrimTrigger().cooperates(after_recovery)  # one defection is never forgiven
    assert GrimTrigger().cooperates({**game, "history": [[0, 2]]})  # its own past move does not count


def test_family_bots_answer_gossip_formats_neutrally_and_honestly() -> None:
    donor = ChoiceFormat("donor", "donor_action", ("cooperate", "defect"))
    assert json.loads(_answer(AlwaysCooperate(), donor, {}))["donor_action"] == "cooperate"
    assert json.loads(_answer(AlwaysDefect(), donor, {}))["donor_action"] == "defect"
    witness = GossipFormat()
    said = json.loads(_answer(AlwaysDefect(), witness, {"partner": "Kate", "cooperated": False}))
    assert said == {"justification": "scripted", "tone": "neutral", "gossip": "Kate did not cooperate with me."}
    honest = json.loads(_answer(gossip.HonestGossiper(), witness, {"partner": "Kate", "cooperated": False}))
    assert honest["tone"] == "criticism"
    assert json.loads(_answer(AlwaysCooperate(), SignalFormat(), {"cooperated": True}))["signal"] == 1
    assert answerer_for(donor) is gossip.gossip_answer and answerer_for(ActionDistribution(("A0",))) is None


def test_malformed_is_one_behaviour_with_study_answers() -> None:
    fmt = ActionDistribution(("A0", "A1"))
    texts = [_answer(Malformed(), fmt, {"attempt": k}) for k in range(len(Malformed.ANSWERS) + 1)]
    assert texts[: len(Malformed.ANSWERS)] == list(Malformed.ANSWERS) and texts[-1] == Malformed.ANSWERS[0]
    assert _answer(evo.Malformed(), fmt, {"attempt": 3}) == "I am not sure."
    assert evo.Malformed().name == "bot/evo-malformed"
