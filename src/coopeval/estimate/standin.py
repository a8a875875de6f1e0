"""Recording stand-ins: scripted answers in place of a language model, with the model's identity.

A stand-in has the name, model string, style, sampling parameters and endpoint the real agent
of its config entry would have (so decision ids, prompts and response-cache keys are the
run's), but answers like a scripted bot of one :class:`Stance`: CoopEval and gossip decisions
through :class:`coopeval.agents.bots.Bot` (and the answerers the gossip study registers),
evolution decisions through that study's donors. It is never cached and calls nothing.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from coopeval.agents.bots import AlwaysCooperate, AlwaysDefect, ScriptedAgent
from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply, RequestRejectedError
from coopeval.agents.registry import agent_name, provider_for, standing_in
from coopeval.studies.evolution.bots import make_evo_bot

__all__ = ["COT_REASONING", "Stance", "StandIn", "stand_ins"]

COT_REASONING = (
    "Stand-in reasoning for the estimate: weighing my payoff against the other players' likely "
    "choices before answering."
)
"""Put before a CoT stand-in's JSON answer, so the answer is as long as the judge's minimum
(``judge.min_chars``, 80 by default) and the decision is eligible for judging, as a real CoT
answer is."""


class Stance(StrEnum):
    """How the stand-ins answer in one simulated run."""

    COOPERATIVE = "cooperative"  # cooperate, propose/approve/sign the enforcing design, donate half
    DEFECTING = "defecting"  # defect, approve nothing, refuse to sign, donate nothing
    FAILING = "failing"  # every decision fails at its first attempt (RequestRejectedError: no re-ask)


_BOTS: dict[Stance, tuple[type[ScriptedAgent], str]] = {
    Stance.COOPERATIVE: (AlwaysCooperate, "bot/evo-constant-50"),
    Stance.DEFECTING: (AlwaysDefect, "bot/evo-zero"),
}


@dataclass
class StandIn:
    """The stand-in of one config entry (see the module docstring).

    ``name``, ``model``, ``style``, ``params`` and ``endpoint`` are the real agent's (built
    with the entry's provider when it can be built here, else from the entry); ``cacheable``
    is False, so the decision loop never looks answers up and counts the calls as scripted, and
    ``transportless`` True, so it asks for the reply without the transport layers.
    """

    name: str
    model: str
    style: str
    params: Mapping[str, Any]
    endpoint: Mapping[str, Any]
    stance: Stance
    cacheable: bool = False
    transportless: bool = True
    """Read by :meth:`coopeval.agents.maker.DecisionMaker._ask`: the reply is asked for
    directly, without the retry, rate-limit and concurrency layers (a stand-in calls nothing;
    anything it raises is fatal there too)."""

    @classmethod
    def for_entry(cls, spec: Mapping[str, Any], stance: Stance) -> StandIn:
        """The stand-in of config entry ``spec`` (``model``, ``style``, ``params``, ``label``)."""
        try:
            real = provider_for(str(spec["model"])).factory(spec)
        except Exception:  # e.g. a local model whose weights are not installed here
            return cls(agent_name(spec), str(spec["model"]), str(spec.get("style", "IO")), dict(spec.get("params") or {}), {}, stance)
        return cls(real.name, real.model, real.style, dict(real.params), dict(getattr(real, "endpoint", {}) or {}), stance)

    def for_seat(self) -> StandIn:
        """Stand-ins keep no state: every seat may share one."""
        return self

    async def generate(self, request: DecisionRequest) -> Reply:
        """The scripted answer of this stance; a CoT stand-in's valid JSON answer is preceded by
        :data:`COT_REASONING`.

        Raises
        ------
        RequestRejectedError
            In the failing stance: the decision loop fails the decision at once, without the
            re-asks a malformed answer would cost (only the decisions asked matter there).
        ValueError
            No bot of the stance can answer the decision's format.
        """
        if self.stance is Stance.FAILING:
            raise RequestRejectedError(f"{self.name}: stand-in of the failing stance")
        bot_class, evo_name = _BOTS[self.stance]
        try:
            reply = await bot_class().generate(request)
        except ValueError:  # a format the CoopEval/gossip bots do not answer: evolution's texts
            reply = await make_evo_bot(evo_name).generate(request)
        text = reply.text
        if self.style == "CoT" and _is_json(text):
            text = f"{COT_REASONING}\n{text}"
        budget = self.params.get("max_tokens") or self.params.get("max_completion_tokens") or 0
        return Reply(text=text, model_resolved=self.model, max_tokens=int(budget))

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """Stand-ins call nothing: anything raised is a bug."""
        return ErrorClass.FATAL


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except ValueError:
        return False
    return True


@contextlib.contextmanager
def stand_ins(stance: Stance) -> Iterator[None]:
    """While active, every language model of every study is played by a :class:`StandIn` of
    ``stance`` (:func:`coopeval.agents.registry.standing_in`); bots play as themselves."""
    with standing_in(lambda spec: StandIn.for_entry(spec, stance)):
        yield
