"""The agents of one evolution run (issue 11 §3, §6).

One model plays three roles, each at its own temperature: strategy writer, donor and matrix
prober (Horibe 0.8 / 0.3 / 0.3; V&H the provider's default, nothing sent). A ``temperature`` in
the model entry's ``params`` wins for every role (the V&H reference ran Claude at 0.8 and the
other models at their defaults: ``config/paper.yaml`` says so per model). Each role is its own
agent with the temperature in its ``params``, so it is sent with every call and is part of the
cache key. LLM agents
are wrapped in :class:`StudyAgent`, whose style ``"evolution"`` has no style instruction in the
shared decision loop: the evolution prompts carry their own answer instructions. Scripted
``bot/evo-…`` models answer every role; the free rider is always ``bot/evo-zero``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from coopeval.agents.protocol import Agent, DecisionRequest, ErrorClass, Reply
from coopeval.agents.seats import seat_agent
from coopeval.studies.evolution.bots import AlwaysZero, is_evo_bot, make_evo_bot
from coopeval.studies.evolution.population import RunAgents
from coopeval.studies.evolution.settings import EvolutionSettings

STYLE = "evolution"


class StudyAgent:
    """An LLM agent used with the study's own answer formats (no style instruction appended).

    Overrides ``name`` (``<label or model>[<role>]``) and ``style``; every other attribute
    (``model``, ``params`` with the temperature, ``endpoint``, ``cacheable``, ``is_local``,
    ``structured_output``, ``billed_usage``, the structured-output probe ``prepare``, …) and
    ``generate`` / ``classify_error`` are the wrapped agent's, read when used: a probe that
    resolves ``structured_output: auto`` is seen by the decision loop and the cache key.
    """

    def __init__(self, inner: Agent, role: str, label: str) -> None:
        self.inner = inner
        self.name = f"{label}[{role}]"
        self.style = STYLE

    def __getattr__(self, attribute: str) -> Any:
        if attribute == "inner" or attribute.startswith("__"):  # copy.copy probes dunders before __init__
            raise AttributeError(attribute)
        return getattr(self.inner, attribute)

    def for_seat(self) -> StudyAgent:
        """A copy for one donor, writer or probe wrapping a seat copy of the inner agent
        (:func:`coopeval.agents.seats.seat_agent`; a deep copy would also copy the inner
        agent's imported client, which cannot be copied)."""
        clone = copy.copy(self)
        clone.inner = seat_agent(self.inner)
        return clone

    async def generate(self, request: DecisionRequest) -> Reply:
        return await self.inner.generate(request)

    def classify_error(self, exc: BaseException) -> ErrorClass:
        return self.inner.classify_error(exc)


def role_agent(entry: Mapping[str, Any], role: str, temperature: float | None) -> Agent:
    """The agent of ``entry`` (``{"model", "label"?, "params"?}``) for one role, sending the
    entry's own ``params.temperature`` if it has one, else ``temperature`` (``None``: none sent).

    Raises
    ------
    KeyError
        An unknown ``bot/evo-…`` name.
    """
    from coopeval.agents.registry import is_scripted, make_agent

    model = str(entry["model"])
    if is_scripted(model):
        return make_evo_bot(model)

    params = dict(entry.get("params") or {})
    # None is sent as "no temperature" (litellm drops None parameters): the provider's default,
    # never the agent layer's own default.
    params.setdefault("temperature", temperature)
    inner = make_agent({"model": model, "style": "IO", "params": params, "label": entry.get("label")})
    return StudyAgent(inner, role, str(entry.get("label") or model))


def run_agents(entry: Mapping[str, Any], settings: EvolutionSettings) -> RunAgents:
    """The strategy, gameplay and probe agents of one run, plus the free rider."""
    if is_evo_bot(str(entry["model"])):
        bot = make_evo_bot(str(entry["model"]))
        return RunAgents(bot, bot, bot, AlwaysZero())
    return RunAgents(
        strategy=role_agent(entry, "strategy", settings.strategy_temperature),
        gameplay=role_agent(entry, "gameplay", settings.gameplay_temperature),
        probe=role_agent(entry, "probe", settings.matrix_temperature),
        free_rider=AlwaysZero(),
    )
