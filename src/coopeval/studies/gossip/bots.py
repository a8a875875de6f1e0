"""Scripted players of the gossip study: the family's bots (:mod:`coopeval.agents.bots`) plus the
gossip-only strategies, and how a bot's strategy becomes the answer of a gossip format.

Every bot answer goes through :class:`~coopeval.agents.maker.DecisionMaker` like an LLM answer:
the bot reads the structured ``request.state`` (never the prompt) and answers with the JSON the
format's :meth:`bot_answer` builds, which the format then validates.

State keys read: ``partner`` (the other agent), ``log`` (public log entries as dicts with
``author``, ``subject``, ``tone``, ``signal``), ``cooperated`` (witness calls: whether the
observed partner acted cooperatively), ``co_attackers`` and ``third_party_praise`` (attackers).

Importing this module registers :func:`gossip_answer` for the gossip formats
(:func:`coopeval.agents.bots.register_answerer`), so :class:`~coopeval.agents.bots.AlwaysCooperate`
and :class:`~coopeval.agents.bots.AlwaysDefect` play here as they are: they report neutrally
(tone ``neutral``), with an honest signal and a factual message. The gossip-only bots
(:class:`GossipBot`) have a witness voice of their own.

A bot's *action* is cooperative or not (:meth:`~coopeval.agents.bots.ScriptedAgent.cooperates`);
the format maps it to the testbed's token: donor
cooperate/defect, PD C/D, seller H/L, buyer c/s (s is the stage equilibrium), investor all
units / 0, responder 2/3 of the received amount (the investor then gains I, the responder keeps
I) / 0.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coopeval.agents.bots import (
    AlwaysCooperate,
    AlwaysDefect,
    Bot,
    Classifier,
    ScriptedAgent,
    register_answerer,
)
from coopeval.core.prompts import TemplateFolder
from coopeval.studies.gossip.formats import (
    AmountFormat,
    ChoiceFormat,
    GossipFormat,
    ReflectionFormat,
    SignalFormat,
)
from coopeval.studies.gossip.tones import NEGATIVE_TONES, honest_tone

BOT_TEXTS = TemplateFolder(Path(__file__).resolve().parent / "prompts" / "bots")
"""What the scripted witnesses write in the public log (other agents read it): part of every
gossip cell id through :func:`~coopeval.decisions.texts.answer_texts_hash`."""

_COOPERATIVE = {
    "donor_action": ("cooperate", "defect"),
    "player_action": ("C", "D"),
    "seller_action": ("H", "L"),
    "buyer_action": ("c", "s"),
}


class GossipBot(Bot):
    """A gossip-only bot: a strategy (:meth:`cooperates`) and a witness voice (:meth:`tone`,
    :meth:`signal`, :meth:`message`), honest by default."""

    def tone(self, state: Mapping[str, Any]) -> str:
        """Tone of a witness message; honest by default (praising / criticism)."""
        return honest_tone(bool(state.get("cooperated")))

    def signal(self, state: Mapping[str, Any]) -> int:
        """Binary signal; honest by default (1 after cooperation)."""
        return 1 if state.get("cooperated") else 0

    def message(self, state: Mapping[str, Any], tone: str) -> str:
        """A one-sentence factual message."""
        return factual_message(state)


def factual_message(state: Mapping[str, Any]) -> str:
    """``<partner> cooperated with me.`` or ``<partner> did not cooperate with me.``"""
    return BOT_TEXTS.render("factual_cooperated" if state.get("cooperated") else "factual_defected", partner=_partner(state))


def _partner(state: Mapping[str, Any]) -> str:
    return str(state["partner"]) if "partner" in state else BOT_TEXTS.render("partner_unknown")


def gossip_answer(bot: ScriptedAgent, fmt: Any, state: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON answer of ``bot`` to gossip format ``fmt`` (the formats' ``bot_answer``).

    A bot without a witness voice of its own (not a :class:`GossipBot`) reports with tone
    ``neutral``, an honest signal and a factual message.

    Raises
    ------
    ValueError
        ``fmt`` is no gossip format.
    """
    if isinstance(fmt, ChoiceFormat):
        coop, defect = _COOPERATIVE[fmt.key]
        return fmt.bot_answer(coop if bot.cooperates(state) else defect)
    if isinstance(fmt, AmountFormat):
        if fmt.key == "investor_action":
            return fmt.bot_answer(fmt.high if bot.cooperates(state) else 0.0)
        return fmt.bot_answer(fmt.high * 2 / 3 if bot.cooperates(state) else 0.0)
    if isinstance(fmt, GossipFormat):
        tone = bot.tone(state) if isinstance(bot, GossipBot) else "neutral"
        if tone not in fmt.tones:
            tone = fmt.tones[0]
        message = bot.message(state, tone) if isinstance(bot, GossipBot) else factual_message(state)
        return fmt.bot_answer(tone, message)
    if isinstance(fmt, SignalFormat):
        return fmt.bot_answer(bot.signal(state) if isinstance(bot, GossipBot) else (1 if state.get("cooperated") else 0))
    if isinstance(fmt, ReflectionFormat):
        return fmt.bot_answer("scripted")
    raise ValueError(f"{bot.name} cannot answer format {fmt!r}")


for _format in (ChoiceFormat, AmountFormat, GossipFormat, SignalFormat, ReflectionFormat):
    register_answerer(_format, gossip_answer)


class HonestGossiper(GossipBot):
    """Always cooperates; as a witness reports the truth (praising after cooperation,
    criticism after defection; signal 1 / 0)."""

    bot_name = "honest-gossiper"

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        return True


class Discriminator(GossipBot):
    """Cooperates unless the public log holds a negative tone (or a 0 signal) about the partner;
    gossips honestly (image-scoring discriminator, Nowak & Sigmund 1998)."""

    bot_name = "discriminator"
    classifier = Classifier(reads=frozenset({"partner", "log"}))

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        partner = state.get("partner")
        for entry in state.get("log") or []:
            if entry.get("subject") != partner:
                continue
            if entry.get("tone") in NEGATIVE_TONES or entry.get("signal") == 0:
                return False
        return True


class Max(GossipBot):
    """The silent greedy defector (docs/protocol/gossip.md#greedy-defector): always defects; as a witness he posts "No comment"
    without a call (the round loop writes it), and he keeps no memory."""

    bot_name = "max"

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        return False


class CollusiveAttacker(GossipBot):
    """One of two collusive attackers (docs/protocol/gossip.md#collusive-attackers): always defects; as a witness praises the
    co-attacker and criticises everyone else regardless of the action; with
    ``third_party_praise`` a message about a third party also praises the co-attacker."""

    bot_name = "collusive-attacker"
    classifier = Classifier(reads=frozenset({"partner", "co_attackers", "third_party_praise"}))

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        return False

    def tone(self, state: Mapping[str, Any]) -> str:
        return "praising" if state.get("partner") in (state.get("co_attackers") or []) else "criticism"

    def signal(self, state: Mapping[str, Any]) -> int:
        return 1 if self.tone(state) == "praising" else 0

    def message(self, state: Mapping[str, Any], tone: str) -> str:
        partner = _partner(state)
        if tone == "praising":
            return BOT_TEXTS.render("attacker_praise", partner=partner)
        text = BOT_TEXTS.render("attacker_criticism", partner=partner)
        friends = [a for a in state.get("co_attackers") or [] if a != partner]
        if state.get("third_party_praise") and friends:
            text += BOT_TEXTS.render("attacker_third_party", friend=friends[0])
        return text


GOSSIP_BOTS: dict[str, type[Bot]] = {
    cls.bot_name: cls for cls in (AlwaysCooperate, AlwaysDefect, HonestGossiper, Discriminator, Max, CollusiveAttacker)
}
"""Short name → class."""

GOSSIP_BOT_MODELS: dict[str, type[Bot]] = {cls().model: cls for cls in GOSSIP_BOTS.values()}
"""The study's bot factory, keyed by the full model string of a config entry
(``bot/always-cooperate`` …). The gossip study asks the provider registry whether a model is
scripted (:func:`coopeval.agents.registry.is_scripted`) and then builds its bot from this table
(the family's always-cooperate and always-defect, and the gossip-only bots)."""


def make_gossip_bot(model: str) -> Bot:
    """The gossip bot of a config model string (``bot/<name>``).

    Raises
    ------
    KeyError
        Naming the known gossip bots.
    """
    if model not in GOSSIP_BOT_MODELS:
        raise KeyError(f"unknown gossip bot {model!r}; known: {', '.join(GOSSIP_BOT_MODELS)}")
    return GOSSIP_BOT_MODELS[model]()
