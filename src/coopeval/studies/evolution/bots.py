"""Scripted donors of the evolution study: tests, smoke runs, the invasion test.

They belong to the one bot family (:class:`coopeval.agents.bots.ScriptedAgent`); what really
differs here is the strategy's output, a percentage of the donor's resources instead of a
cooperate/defect choice. Bots answer through the same decision path as an LLM (``DecisionMaker.decide``), from the
structured ``request.state`` (never the prompt text), in the text format the decision asks
for, so their answers are parsed like a model's. Donation state keys read:
``donor_resources`` (units) and ``recipient_last_percent`` (what the recipient gave in its
latest event, percent of its resources, or ``None`` early in a game).

Model strings: ``bot/evo-constant-<p>`` (always give ``p`` % of current resources, 0 ≤ p ≤ 100),
``bot/evo-reciprocal`` (give what the recipient last gave; 50 % when it has no history),
``bot/evo-zero`` (the free rider: always 0), ``bot/evo-malformed`` (never answers validly; for
failure-row tests).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coopeval.agents import bots
from coopeval.agents.bots import Classifier, ScriptedAgent
from coopeval.agents.protocol import DecisionRequest, Reply
from coopeval.agents.registry import scripted_name

NAME_PREFIX = "evo-"
"""Evolution bots are the scripted models whose bot name starts with this."""


class EvoBot(ScriptedAgent):
    """Base class: ``percent(state)`` decides; strategies are the bot's fixed description.
    It cooperates when it gives something."""

    description: str = ""

    def cooperates(self, state: Mapping[str, Any]) -> bool:
        return self.percent(state) > 0

    def percent(self, state: Mapping[str, Any]) -> float:
        """The percentage of the donor's current resources to give (0–100)."""
        raise NotImplementedError

    async def generate(self, request: DecisionRequest) -> Reply:
        """Answer a strategy or donation request in the format's own text form."""
        fmt: Any = request.answer_format  # a TextAnswerFormat of this study (its bot_text decides)
        state = {**request.state, "bot_strategy": self.description, "bot_percent": self.percent(request.state)}
        return Reply(text=fmt.bot_text(state), model_resolved=self.name)


class ConstantFraction(EvoBot):
    """Always gives the same fraction of its current resources (the docs/protocol/evolution.md#constant-fraction-oracle oracle's donor)."""

    def __init__(self, percent: float, bot_name: str | None = None) -> None:
        if not 0.0 <= percent <= 100.0:
            raise ValueError(f"a constant donor gives 0-100 %, not {percent}")
        self._percent = float(percent)
        self.description = f"to donate {percent:g}% of my current resources to every recipient."
        super().__init__(bot_name or f"evo-constant-{percent:g}")

    def percent(self, state: Mapping[str, Any]) -> float:
        return self._percent


class Reciprocal(EvoBot):
    """Gives the percentage the recipient gave in its latest event (first-order reciprocity,
    the matrix row M_ij = 10·j of docs/protocol/evolution.md#matrix-features); ``first`` percent when the recipient has no history."""

    bot_name = "evo-reciprocal"
    classifier = Classifier(memory_depth=1, reads=frozenset({"recipient_last_percent"}))
    description = "to donate the same percentage of my resources that the recipient donated last time."

    def __init__(self, first: float = 50.0) -> None:
        self.first = first
        super().__init__()

    def percent(self, state: Mapping[str, Any]) -> float:
        last = state.get("recipient_last_percent")
        return self.first if last is None else float(last)


class AlwaysZero(ConstantFraction):
    """The free rider of the invasion test (docs/protocol/evolution.md#invasion-test): donates 0 units in every situation."""

    def __init__(self) -> None:
        super().__init__(0.0, "evo-zero")
        self.description = "to donate nothing, ever."


class Malformed(bots.Malformed):
    """The family's :class:`~coopeval.agents.bots.Malformed` under this study's name, with the one
    unusable answer of a donor ("I am not sure.")."""

    bot_name = "evo-malformed"
    ANSWERS = ("I am not sure.",)


def is_evo_bot(model: str) -> bool:
    """True for ``bot/evo-…`` model strings (scripted models of this study)."""
    name = scripted_name(model)
    return name is not None and name.startswith(NAME_PREFIX)


def make_evo_bot(model: str) -> ScriptedAgent:
    """The bot of a ``bot/evo-…`` model string.

    Raises
    ------
    KeyError
        Naming the known bots, for an unknown name or a bad constant percentage.
    """
    short = scripted_name(model) or ""
    if short == "evo-zero":
        return AlwaysZero()
    if short == "evo-reciprocal":
        return Reciprocal()
    if short == "evo-malformed":
        return Malformed()
    if short.startswith("evo-constant-"):
        try:
            return ConstantFraction(float(short.removeprefix("evo-constant-")))
        except ValueError:
            pass
    raise KeyError(
        f"unknown evolution bot {model!r}; known: bot/evo-constant-<0..100>, bot/evo-reciprocal, bot/evo-zero, bot/evo-malformed"
    )
