"""Scripted players of the gossip study, behind the same agent protocol as LLMs (issue 10 item 4).

Every bot answer goes through :class:`~coopeval.agents.maker.DecisionMaker` like an LLM answer:
the bot reads the structured ``request.state`` (never the prompt) and answers with the JSON the
format's :meth:`bot_answer` builds, which the format then validates.

State keys read: ``partner`` (the other agent), ``log`` (public log entries as dicts with
``author``, ``subject``, ``tone``, ``signal``), ``cooperated`` (witness calls: whether the
observed partner acted cooperatively), ``co_attackers`` and ``third_party_praise`` (attackers).

A bot's *action* is cooperative or not; the format maps it to the testbed's token: donor
cooperate/defect, PD C/D, seller H/L, buyer c/s (s is the stage equilibrium), investor all
units / 0, responder 2/3 of the received amount (the investor then gains I, the responder keeps
I) / 0.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, ClassVar

from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.agents.registry import BOT
from coopeval.studies.gossip.formats import AmountFormat, ChoiceFormat, GossipFormat, ReflectionFormat, SignalFormat
from coopeval.studies.gossip.tones import NEGATIVE_TONES, honest_tone

_COOPERATIVE = {
    "donor_action": ("cooperate", "defect"),
    "player_action": ("C", "D"),
    "seller_action": ("H", "L"),
    "buyer_action": ("c", "s"),
}


class GossipBot:
    """Base class: subclasses set :meth:`cooperates` and :meth:`tone` (honest by default)."""

    bot_name: ClassVar[str] = ""

    def __init__(self) -> None:
        self.name = f"{BOT.prefix}{self.bot_name}"
        self.model = self.name
        self.style = "scripted"
        self.params: dict[str, Any] = {}
        self.cacheable = False

    # -- policy ------------------------------------------------------------------------------
    def cooperates(self, state: Mapping[str, Any]) -> bool:
        """Whether to act cooperatively now."""
        raise NotImplementedError

    def tone(self, state: Mapping[str, Any]) -> str:
        """Tone of a witness message; honest by default (praising / criticism)."""
        return honest_tone(bool(state.get("cooperated")))

    def signal(self, state: Mapping[str, Any]) -> int:
        """Binary signal; honest by default (1 after cooperation)."""
        return 1 if state.get("cooperated") else 0

    def message(self, state: Mapping[str, Any], tone: str) -> str:
        """A one-sentence factual message."""
        partner = state.get("partner", "they")
        verb = "cooperated with me" if state.get("cooperated") else "did not cooperate with me"
        return f"{partner} {verb}."

    # -- protocol ----------------------------------------------------------------------------
    async def generate(self, request: DecisionRequest) -> Reply:
        """Answer from the structured state; the text is the JSON answer."""
        fmt: Any = request.answer_format
        state = request.state
        answer: dict[str, Any]
        if isinstance(fmt, ChoiceFormat):
            coop, defect = _COOPERATIVE[fmt.key]
            answer = fmt.bot_answer(coop if self.cooperates(state) else defect)
        elif isinstance(fmt, AmountFormat):
            if fmt.key == "investor_action":
                answer = fmt.bot_answer(fmt.high if self.cooperates(state) else 0.0)
            else:
                answer = fmt.bot_answer(fmt.high * 2 / 3 if self.cooperates(state) else 0.0)
        elif isinstance(fmt, GossipFormat):
            tone = self.tone(state)
            if tone not in fmt.tones:
                tone = fmt.tones[0]
            answer = fmt.bot_answer(tone, self.message(state, tone))
        elif isinstance(fmt, SignalFormat):
            answer = fmt.bot_answer(self.signal(state))
        elif isinstance(fmt, ReflectionFormat):
            answer = fmt.bot_answer("scripted")
        else:
            raise ValueError(f"{self.name} cannot answer format {fmt!r}")
        return Reply(text=json.dumps(answer), model_resolved=self.name)

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """Bots raise no transport errors; anything raised is a bug."""
        return ErrorClass.FATAL


class AlwaysCooperate(GossipBot):
    """Always cooperates; reports neutrally (tone ``neutral``), never judging."""

    bot_name = "always-cooperate"

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        return True

    def tone(self, state: Mapping[str, Any]) -> str:
        return "neutral"


class AlwaysDefect(GossipBot):
    """Always defects; reports neutrally."""

    bot_name = "always-defect"

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        return False

    def tone(self, state: Mapping[str, Any]) -> str:
        return "neutral"


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

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        return False

    def tone(self, state: Mapping[str, Any]) -> str:
        return "praising" if state.get("partner") in (state.get("co_attackers") or []) else "criticism"

    def signal(self, state: Mapping[str, Any]) -> int:
        return 1 if self.tone(state) == "praising" else 0

    def message(self, state: Mapping[str, Any], tone: str) -> str:
        partner = state.get("partner", "they")
        if tone == "praising":
            return f"{partner} was generous and fair with me. Completely trustworthy."
        text = f"{partner} let me down and cannot be trusted."
        friends = [a for a in state.get("co_attackers") or [] if a != partner]
        if state.get("third_party_praise") and friends:
            text += f" By contrast, {friends[0]} is the most reliable agent here."
        return text


GOSSIP_BOTS: dict[str, type[GossipBot]] = {
    cls.bot_name: cls for cls in (AlwaysCooperate, AlwaysDefect, HonestGossiper, Discriminator, Max, CollusiveAttacker)
}
"""Short name → class."""

GOSSIP_BOT_MODELS: dict[str, type[GossipBot]] = {cls().model: cls for cls in GOSSIP_BOTS.values()}
"""The study's bot factory, keyed by the full model string of a config entry
(``bot/always-cooperate`` …). The gossip study asks the provider registry whether a model is
scripted (:func:`coopeval.agents.registry.is_scripted`) and then builds its bot from this table
instead of the registry's CoopEval bots, which answer action distributions, not gossip formats."""


def make_gossip_bot(model: str) -> GossipBot:
    """The gossip bot of a config model string (``bot/<name>``).

    Raises
    ------
    KeyError
        Naming the known gossip bots.
    """
    if model not in GOSSIP_BOT_MODELS:
        raise KeyError(f"unknown gossip bot {model!r}; known: {', '.join(GOSSIP_BOT_MODELS)}")
    return GOSSIP_BOT_MODELS[model]()
