"""Stand-ins for the evolution tests: a cacheable fake LLM answering from the structured state."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from coopeval.agents.maker import DecisionMaker
from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.cache.response_cache import ResponseCache
from coopeval.core.prompts import PromptLibrary
from coopeval.studies.base import PlayInputs
from coopeval.studies.evolution.bots import AlwaysZero, EvoBot
from coopeval.studies.evolution.prompting import PROMPTS_DIR, EvolutionPrompts, evolution_prompts
from coopeval.studies.evolution.runner import EvolutionRun, RunAgents
from coopeval.studies.evolution.settings import EvolutionSettings


class SimulatedKill(RuntimeError):
    """Raised by :class:`FakeLLM` after ``fail_after`` calls (a fatal transport error stops the
    job like a kill: nothing after the last finished generation is written)."""


class FakeLLM:
    """A cacheable 'model' that counts its calls; ``strategy(request)`` and ``percent(state)``
    decide its answers (defaults: a short strategy, give 50 %)."""

    def __init__(
        self,
        temperature: float = 0.8,
        strategy: Callable[[DecisionRequest], str] | None = None,
        percent: Callable[[Mapping[str, Any]], float] | None = None,
        fail_after: int | None = None,
        model: str = "fake/llm",
    ) -> None:
        self.name = f"{model}[t={temperature}]"
        self.model = model
        self.style = "evolution"
        self.params = {"temperature": temperature}
        self.cacheable = True
        self.calls = 0
        self.prompts: list[str] = []
        self._strategy = strategy or (lambda r: "I think so.\nMy strategy will be to give half of what I have.")
        self._percent = percent or (lambda s: 50.0)
        self.fail_after = fail_after

    async def generate(self, request: DecisionRequest) -> Reply:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise SimulatedKill("simulated kill")
        self.calls += 1
        self.prompts.append(request.messages[-1]["content"])
        fmt: Any = request.answer_format
        if fmt.kind == "strategy":
            return Reply(text=self._strategy(request))
        return Reply(text=fmt.bot_text({**request.state, "bot_percent": self._percent(request.state)}))

    def for_seat(self) -> FakeLLM:
        """Seats share this fake: it stands for one model endpoint whose calls and prompts the
        tests count (it answers from the request only, so sharing leaks nothing)."""
        return self

    def classify_error(self, exc: BaseException) -> ErrorClass:
        return ErrorClass.FATAL


def settings(**kw: Any) -> EvolutionSettings:
    return EvolutionSettings.from_params({"protocol": "horibe", **kw})


def make_run(s: EvolutionSettings, agents: RunAgents, maker: DecisionMaker | None = None, seed: int = 1) -> EvolutionRun:
    prompts = EvolutionPrompts(evolution_prompts(), s)
    base = {"cell_id": "c", "source": "ours", "run": "r1", "protocol": s.protocol, "model": "m", "variant": "default"}
    return EvolutionRun(s, maker or DecisionMaker(None, {}), prompts, agents, seed, "runkey", base, "test")


def bot_agents(bot: EvoBot) -> RunAgents:
    return RunAgents(bot, bot, bot, AlwaysZero())


def inputs(cache: ResponseCache | None = None) -> PlayInputs:
    return PlayInputs(cache, PromptLibrary(PROMPTS_DIR))
