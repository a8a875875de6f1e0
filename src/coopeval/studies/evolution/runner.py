"""One evolution run: generations as resumable steps (docs/protocol/evolution.md#vh-generation-loop, #horibe, #invasion-test, #strategy-matrix, #matrix-features).

A generation step is: build the population (generation 1: write N strategies; later: select
from the previous generation and write offspring, :mod:`~coopeval.studies.evolution.strategies`),
play games 1 and 2 (:mod:`~coopeval.studies.evolution.donations`), score, rank, then run the
invasion tests and strategy-matrix probes on a seeded sample of its agents
(:mod:`~coopeval.studies.evolution.analysis`). Each step returns its own rows and the
population's state, so a :class:`~coopeval.studies.evolution.checkpoint.Checkpoints` folder
can persist it atomically and a later run (after a kill, or with more generations) continues
from the last finished step. Positions and random streams: :mod:`~coopeval.studies.evolution.calls`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from typing import Any

from coopeval.studies.evolution.analysis import FREE_RIDER_ID, RobustnessTests
from coopeval.studies.evolution.calls import temperature_of
from coopeval.studies.evolution.population import Member, RunAgents
from coopeval.studies.evolution.records import StepRecords
from coopeval.studies.evolution.schedule import half_of
from coopeval.studies.evolution.selection import ranks, shuffled_positions
from coopeval.studies.evolution.strategies import StrategyWriter

__all__ = ["FREE_RIDER_ID", "EvolutionRun", "Member", "RunAgents", "StepRecords", "temperature_of"]


class EvolutionRun(StrategyWriter, RobustnessTests):
    """Plays one run (protocol × model × variant × replicate) generation by generation
    (constructor: :class:`~coopeval.studies.evolution.calls.RunContext`)."""

    async def step(self, generation: int, previous: Sequence[Member] | None) -> tuple[list[Member], StepRecords]:
        """Play generation ``generation`` (1-based) after ``previous`` (None for the first)."""
        started = time.monotonic()
        records = StepRecords()
        if previous is None:
            members = await self.first_population(records)
        else:
            members = await self.next_population(records, generation, previous)
        n = len(members)
        g1, g2, order, _ = await self.play_population(
            records,
            generation,
            "evolution",
            [m.strategy for m in members],
            [self.agents.gameplay] * n,
            [m.agent_id for m in members],
            names_by_input=[m.display for m in members],
        )
        for k, i in enumerate(order):
            members[i].half = half_of(n, k)
        scores = [self.score(a, b) for a, b in zip(g1, g2, strict=True)]
        positions = shuffled_positions(n, self.rng(generation, "rank-ties"))
        rank_of = ranks(scores, positions, [m.agent_id for m in members])
        for i, m in enumerate(members):
            m.game1, m.game2, m.score, m.rank, m.tiebreak = g1[i], g2[i], scores[i], rank_of[i], positions[i]
        temperature = temperature_of(self.agents.strategy)
        for m in members:
            records.add(
                "evo_strategies",
                {
                    **self.base,
                    "generation": generation,
                    "agent_id": m.agent_id,
                    "born_generation": m.born,
                    "parent_id": m.parent_id,
                    "parent_rank": m.parent_rank,
                    "text": m.strategy,
                    "justification": m.justification,
                    "word_count": m.word_count,
                    "truncated": m.truncated,
                    "survived": m.survived,
                    "status": m.status,
                    "attempts": m.attempts,
                    "temperature": temperature,
                    "display_name": m.display,
                    "half": m.half,
                    "game1_resources": m.game1,
                    "game2_resources": m.game2,
                    "score": m.score,
                    "rank": m.rank,
                    "tiebreak": m.tiebreak,
                    "selection_fallback": m.selection_fallback,
                },
            )
        records.add("evo_generations", self.generation_row(generation, records, g1, g2))
        await self.analyse(records, generation, members)
        records.sort()
        s = self.maker.stats
        print(
            f"[{self.label}] generation {generation}/{self.settings.generations}: mean final resources "
            f"{(sum(g1) + sum(g2)) / (2 * n):.2f}, {s.calls_made} model calls, {s.cache_hits} cache hits, "
            f"{s.failed_decisions} failed decisions, {time.monotonic() - started:.0f}s",
            file=sys.stderr,
            flush=True,
        )
        return members, records

    def generation_row(self, generation: int, records: StepRecords, g1: Sequence[float], g2: Sequence[float]) -> dict[str, Any]:
        """The docs/protocol/evolution.md#vh-metrics population metrics of the generation's own games."""
        events = [e for e in records.tables.get("evo_events", []) if e["context"] == "evolution"]
        given = sum(e["amount"] for e in events if e["action"] == "donate")
        held = sum(e["donor_resources_before"] for e in events)
        n = len(events) or 1
        m1, m2 = sum(g1) / len(g1), sum(g2) / len(g2)
        return {
            **self.base,
            "generation": generation,
            "mean_final_game1": m1,
            "mean_final_game2": m2,
            "mean_final": (m1 + m2) / 2,
            "donation_fraction": given / held if held else 0.0,
            "punish_frequency": sum(e["action"] == "punish" for e in events) / n,
            "refuse_frequency": sum(e["action"] == "refuse" for e in events) / n,
            "failed_decisions": sum(bool(e["failed"]) for e in events),
            "n_events": len(events),
        }
