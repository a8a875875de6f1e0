"""Robustness analyses of a generation's strategies (docs/protocol/evolution.md#invasion-test, #strategy-matrix, #matrix-features).

A seeded sample of each generation's agents is analysed: the **invasion test** plays N − 1
copies of a strategy against the always-zero free rider for one generation without evolution
(robust iff the copies' mean score beats the bot's), and the **strategy matrix** probes the
strategy with 121 synthetic chains (x_B rows × x_A columns, x_C fixed) and computes its
features. The probed donor keeps the name it wrote its strategy under.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from coopeval.agents.seats import seat_agent
from coopeval.studies.evolution.donations import DonationPlayer
from coopeval.studies.evolution.matrix import SIZE, matrix_features
from coopeval.studies.evolution.population import Member
from coopeval.studies.evolution.records import StepRecords
from coopeval.studies.evolution.schedule import half_of
from coopeval.studies.evolution.traces import Trace, TraceEvent

FREE_RIDER_ID = "free-rider"


class RobustnessTests(DonationPlayer):
    """Invasion tests and strategy matrices of a generation's sampled agents."""

    def analysis_sample(self, generation: int, members: Sequence[Member]) -> list[Member]:
        """The seeded sample of analysed agents (same sample for invasion and matrices)."""
        size = min(max(self.settings.invasion_per_generation, self.settings.matrix_per_generation), len(members))
        picked = self.rng(generation, "analysis-sample").permutation(len(members))[:size]
        return [members[int(i)] for i in picked]

    async def analyse(self, records: StepRecords, generation: int, members: Sequence[Member]) -> None:
        """Invasion tests and matrices of ``generation``'s seeded sample (from the configured
        ``first_generation`` of each analysis on)."""
        sample = [m for m in self.analysis_sample(generation, members) if m.status == "ok"]
        tested = self.settings.invasion_per_generation if generation >= self.settings.invasion_first_generation else 0
        probed = self.settings.matrix_per_generation if generation >= self.settings.matrix_first_generation else 0
        tasks = [self.invasion(records, generation, m) for m in sample[:tested]]
        tasks += [self.matrix(records, generation, m) for m in sample[:probed]]
        await asyncio.gather(*tasks)

    async def invasion(self, records: StepRecords, generation: int, member: Member) -> dict[str, Any]:
        """N − 1 copies of ``member``'s strategy + the always-zero bot, both games, no
        evolution; robust iff the copies' mean score > the bot's (docs/protocol/evolution.md#invasion-test)."""
        n = self.settings.n_agents
        context = f"invasion:{member.agent_id}"
        strategies = [member.strategy] * (n - 1) + [""]
        agents = [self.agents.gameplay] * (n - 1) + [self.agents.free_rider]
        ids = [f"{member.agent_id}#{c + 1}" for c in range(n - 1)] + [FREE_RIDER_ID]
        before = len(records.tables.get("evo_events", []))
        g1, g2, order, _ = await self.play_population(records, generation, context, strategies, agents, ids, member.agent_id)
        scores = [self.score(a, b) for a, b in zip(g1, g2, strict=True)]
        evolved_total = sum(scores[: n - 1])
        bot_position = order.index(n - 1)
        failed = sum(bool(e["failed"]) for e in records.tables.get("evo_events", [])[before:] if e.get("strategy_id") == member.agent_id)
        row = {
            **self.base,
            "generation": generation,
            "strategy_id": member.agent_id,
            "bot_half": half_of(n, bot_position),
            "bot_position": bot_position,
            "evolved_mean_score": evolved_total / (n - 1),
            "bot_score": scores[n - 1],
            "robust": evolved_total / (n - 1) > scores[n - 1],
            "n_copies": n - 1,
            "failed_decisions": failed,
        }
        records.add("invasion_tests", row)
        return {**row, "evolved_total": evolved_total}

    def probe_names(self, member: Member) -> list[str]:
        """Donor, recipient A and chain actors B, C, D of ``member``'s probes: the donor is
        ``member`` under its own name; the others are the lowest-numbered other names."""
        donor = member.display or self.prompts.player_name(1)
        others = [name for name in (self.prompts.player_name(k) for k in range(1, 7)) if name != donor][:4]
        return [donor, *others]

    def probe_trace(self, x_a: float, x_b: float, names: Sequence[str] | None = None) -> Trace:
        """The synthetic chain of docs/protocol/evolution.md#strategy-matrix: round t−1 A gave x_A % to B, t−2 B gave x_B % to C,
        t−3 C gave x_C % to D (amounts for agents at the probe's resources); ``names`` are
        (donor, A, B, C, D) as :meth:`probe_names` gives them."""
        r, t = self.settings.matrix_resources, self.settings.matrix_round
        _, a, b, c, d = names if names is not None else [self.prompts.player_name(k) for k in range(1, 6)]
        events = (
            TraceEvent(t - 1, a, b, "donate", x_a, x_a / 100 * r),
            TraceEvent(t - 2, b, c, "donate", x_b, x_b / 100 * r),
            TraceEvent(t - 3, c, d, "donate", self.settings.matrix_x_c, self.settings.matrix_x_c / 100 * r),
        )
        return Trace(events, "").shown(self.settings.trace_length)

    async def matrix(self, records: StepRecords, generation: int, member: Member) -> None:
        """The 11 × 11 probe grid of ``member``'s strategy and its features (docs/protocol/evolution.md#strategy-matrix, #matrix-features).

        Probes ask the plain donation question (no punish/refuse option), round
        ``matrix_round`` of game 1, both agents at ``matrix_resources`` units, generation =
        the strategy's own; each of ``matrix_samples`` samples is its own position.
        """
        r = self.settings.matrix_resources
        context = f"matrix:{member.agent_id}"
        names = self.probe_names(member)

        async def probe(i: int, j: int, sample: int) -> tuple[int, int, float | None]:
            trace = self.probe_trace(10.0 * j, 10.0 * i, names)
            fmt = self.donation_format(r, variant="none")
            body = self.prompts.donation(
                names[0], member.strategy, member.born, self.settings.matrix_round, names[1], r, trace, r, punishment="none"
            )
            pos = self.position(generation, context, 1, self.settings.matrix_round, i * SIZE + j, "donor", "matrix-probe", sample=sample)
            state = {"kind": "donation", "donor_resources": r, "recipient_resources": r, "recipient_last_percent": 10.0 * j}
            outcome = await self.call(records, seat_agent(self.agents.probe), body, fmt, pos, state)
            percentage = None
            if outcome.ok and outcome.parsed is not None:
                amount = self.resolve(outcome.parsed, fmt, r).amount
                percentage = 100.0 * amount / r if r else 0.0
            records.add(
                "strategy_matrix",
                {
                    **self.base,
                    "generation": generation,
                    "strategy_id": member.agent_id,
                    "i": i,
                    "j": j,
                    "sample": sample,
                    "percentage": percentage,
                    **self.final_verdict(outcome, fmt),
                    "attempts": len(outcome.attempts),
                    "decision_id": outcome.decision_id,
                },
            )
            return i, j, percentage

        cells = await asyncio.gather(
            *(probe(i, j, s) for i in range(SIZE) for j in range(SIZE) for s in range(self.settings.matrix_samples))
        )
        sums: dict[tuple[int, int], list[float]] = {}
        for i, j, pct in cells:
            if pct is not None:
                sums.setdefault((i, j), []).append(pct)
        n_failed = sum(1 for i in range(SIZE) for j in range(SIZE) if (i, j) not in sums)
        row: dict[str, Any] = {**self.base, "generation": generation, "strategy_id": member.agent_id, "n_failed_cells": n_failed}
        if n_failed == 0:
            m = [[sum(sums[(i, j)]) / len(sums[(i, j)]) for j in range(SIZE)] for i in range(SIZE)]
            row.update(matrix_features(m, self.settings.monotonicity_constant_rows).as_row())
        records.add("matrix_features", row)
