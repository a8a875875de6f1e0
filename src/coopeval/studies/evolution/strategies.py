"""Strategy writing and selection into a new generation (docs/protocol/evolution.md#vh-generation-loop, #vh-prompts, #horibe-changes, #horibe-prompts).

Generation 1: N agents each write a strategy from the first strategy prompt. Later generations:
V&H keeps the top half (seeded shuffle, stable ties, :mod:`~coopeval.studies.evolution.selection`)
unchanged and N/2 newcomers write strategies from the survivors' advice; Horibe draws N roulette
parents and each offspring rewrites its parent's strategy knowing the parent's rank. Horibe's
350-word limit is enforced by one re-ask, then truncation (flagged). Every agent is named once,
at birth (:mod:`~coopeval.studies.evolution.population`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import replace

from coopeval.agents.seats import seat_agent
from coopeval.studies.evolution.calls import RunContext
from coopeval.studies.evolution.formats import StrategyFormat, truncate_words, word_count
from coopeval.studies.evolution.population import Member, neutral_names
from coopeval.studies.evolution.records import StepRecords
from coopeval.studies.evolution.selection import (
    require_finite_scores,
    roulette_draw,
    roulette_is_uniform,
    truncation_survivors,
)
from coopeval.studies.evolution.settings import EvolutionSettings


def strategy_format_for(settings: EvolutionSettings) -> StrategyFormat:
    """The strategy answer format of a run with ``settings`` (V&H phrase or Horibe ``Strategy:``,
    docs/protocol/evolution.md#vh-prompts, #horibe-prompts)."""
    reasoning = settings.local_reasoning_chars if settings.protocol == "vh" else 0
    return StrategyFormat(settings.protocol, settings.word_limit, settings.local_strategy_chars, reasoning)


class StrategyWriter(RunContext):
    """The strategy side of a run: writing, naming and selecting members."""

    def strategy_format(self) -> StrategyFormat:
        """The run's strategy answer format (:func:`strategy_format_for`)."""
        return strategy_format_for(self.settings)

    async def write_strategy(self, records: StepRecords, generation: int, index: int, body: str, member: Member) -> Member:
        """Ask for one strategy; enforce the word limit (one re-ask, then truncate, docs/protocol/evolution.md#horibe-changes)."""
        fmt = self.strategy_format()
        pos = self.position(generation, "evolution", 0, 0, index, "writer", "strategy")
        writer = seat_agent(self.agents.strategy)  # each member's writer is its own instance (issue 13 kind 9)
        outcome = await self.call(records, writer, body, fmt, pos, {"kind": "strategy"})
        attempts = len(outcome.attempts)
        if not outcome.ok or outcome.parsed is None:
            return replace(member, strategy="", status="failed", attempts=attempts)
        parsed = outcome.parsed
        limit = self.settings.word_limit
        truncated = False
        if limit is not None and parsed["words"] > limit:
            again_body = self.prompts.strategy_too_long(body, int(parsed["words"]))
            again_pos = self.position(generation, "evolution", 0, 0, index, "writer", "strategy-reask")
            again = await self.call(records, writer, again_body, fmt, again_pos, {"kind": "strategy"})
            attempts += len(again.attempts)
            if again.ok and again.parsed is not None:
                parsed = again.parsed
            if parsed["words"] > limit:
                parsed = {**parsed, "strategy": truncate_words(parsed["strategy"], limit)}
                truncated = True
        text = str(parsed["strategy"])
        return replace(
            member,
            strategy=text,
            justification=str(parsed.get("justification", "")),
            word_count=word_count(text),
            truncated=truncated,
            status="ok",
            attempts=attempts,
        )

    def newborn(self, generation: int, count: int, taken: Sequence[str] = ()) -> list[Member]:
        """``count`` new members of ``generation`` (ids ``{generation}_{k}``), each named for
        life: a neutral name not in ``taken`` (seeded), or its id under
        ``compat.vh_generation_names``."""
        ids = [f"{generation}_{k + 1}" for k in range(count)]
        if self.settings.generation_names:
            names = ids
        else:
            names = neutral_names(count, taken, self.prompts.player_name, self.rng(generation, "names", "evolution"))
        return [Member(agent_id, generation, "", display=name) for agent_id, name in zip(ids, names, strict=True)]

    async def first_population(self, records: StepRecords) -> list[Member]:
        """Generation 1: N strategies from the first strategy prompt."""
        members = self.newborn(1, self.settings.n_agents)
        tasks = [self.write_strategy(records, 1, k, self.prompts.strategy_first(m.display), m) for k, m in enumerate(members)]
        return list(await asyncio.gather(*tasks))

    async def next_population(self, records: StepRecords, generation: int, previous: Sequence[Member]) -> list[Member]:
        """Selection from the scored previous generation (docs/protocol/evolution.md#vh-generation-loop item 3, docs/protocol/evolution.md#horibe-changes)."""
        n = self.settings.n_agents
        scores = [m.score for m in previous]
        ids = [m.agent_id for m in previous]
        require_finite_scores(scores, ids)
        if self.settings.selection == "truncation_top_half":
            positions = [m.tiebreak for m in previous]
            survivors = [replace(previous[i], survived=True) for i in truncation_survivors(scores, positions, ids)]
            advice = [(m.strategy, m.score) for m in survivors]
            newcomers = self.newborn(generation, n - len(survivors), [m.display for m in survivors])
            tasks = [
                self.write_strategy(records, generation, k, self.prompts.strategy_later_vh(m.display, advice), m)
                for k, m in enumerate(newcomers)
            ]
            return [*survivors, *await asyncio.gather(*tasks)]
        parents = [previous[p] for p in roulette_draw(scores, n, self.rng(generation, "roulette"), ids)]
        fallback = roulette_is_uniform(scores)  # Σ f = 0: parents drawn uniformly, flagged on the offspring's rows
        children = [
            replace(child, parent_id=parent.agent_id, parent_rank=parent.rank, selection_fallback=fallback)
            for child, parent in zip(self.newborn(generation, n), parents, strict=True)
        ]
        tasks = [
            self.write_strategy(records, generation, k, self.prompts.strategy_later_horibe(child.display, parent.strategy, parent.rank), child)
            for k, (child, parent) in enumerate(zip(children, parents, strict=True))
        ]
        return list(await asyncio.gather(*tasks))
