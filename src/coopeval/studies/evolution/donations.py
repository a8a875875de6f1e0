"""The donation games of a population (docs/protocol/evolution.md#donation-game, #traces, #vh-prompts, #punishment-variants, #horibe-prompts prompt 3).

A population is shuffled into the docs/protocol/evolution.md#schedule schedule and plays games 1 and 2; every donation is one
decision of the donor's model through the shared loop, in units (V&H) or percent (Horibe), read
and resolved by :mod:`~coopeval.studies.evolution.amounts` (the shown limit is the accepted
limit; nothing is clipped or substituted). A failed decision is an ``invalid`` event that
transfers nothing. Each event row stores the raw answer, the number read and the parse status.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from coopeval.agents.maker import DecisionOutcome
from coopeval.agents.protocol import Agent
from coopeval.agents.seats import seat_agent
from coopeval.decisions.parsing import check_answer
from coopeval.decisions.reasoning import strip_reasoning
from coopeval.studies.evolution.amounts import (
    percent_limit,
    stated_limit,
    units_for_percent,
    units_given,
)
from coopeval.studies.evolution.calls import RunContext, temperature_of
from coopeval.studies.evolution.formats import ANSWER_MARKER, DonationFormat
from coopeval.studies.evolution.game import Action, DonationContext, play_game
from coopeval.studies.evolution.population import neutral_names
from coopeval.studies.evolution.records import StepRecords
from coopeval.studies.evolution.settings import EvolutionSettings
from coopeval.studies.evolution.traces import Trace


def percent_base_of(settings: EvolutionSettings, donor_units: float) -> float:
    """The units a stated percentage is a share of: the donor's current holdings, or the
    endowment under ``percent_base: endowment`` (the stage game's
    :meth:`~coopeval.games.donation.ContinuousDonationGame.percent_base_units`)."""
    return settings.donation_game.percent_base_units(donor_units)


def donation_format_for(settings: EvolutionSettings, donor_units: float, variant: str | None = None) -> DonationFormat:
    """The answer format of one donation by a donor holding ``donor_units``: percent under
    Horibe's ``amount_unit: percent`` without punishment, else units; its limit is the one the
    prompt shows (:func:`~coopeval.studies.evolution.amounts.stated_limit`,
    :func:`~coopeval.studies.evolution.amounts.percent_limit`). ``variant`` defaults to the
    run's ``punishment``."""
    variant = settings.punishment if variant is None else variant
    percent = settings.amount_unit == "percent" and variant == "none"
    return DonationFormat(
        unit="percent" if percent else "units",
        max_value=percent_limit(donor_units, percent_base_of(settings, donor_units)) if percent else stated_limit(donor_units),
        variant=variant,
        max_justification_chars=settings.local_justification_chars,
    )


def resolve_donation(settings: EvolutionSettings, parsed: Mapping[str, Any], fmt: DonationFormat, donor_units: float) -> Action:
    """A validated answer → the action and the units it gives (docs/protocol/evolution.md#donation-game).

    Percent answers give p/100 of :func:`percent_base_of`; the shown limit means everything the
    donor holds (:mod:`coopeval.studies.evolution.amounts`); nothing is clipped.
    """
    kind, value = str(parsed["action"]), float(parsed["value"])
    if kind == "refuse":
        return Action("refuse", 0.0)
    if fmt.unit == "percent":
        return Action(kind, units_for_percent(value, donor_units, settings.donation_game))
    return Action(kind, units_given(value, donor_units))


@dataclass(frozen=True)
class Seating:
    """A population in its seat order: each seat's strategy text, agent, display name and id."""

    strategies: Sequence[str]
    agents: Sequence[Agent]
    names: Sequence[str]
    ids: Sequence[str]


class DonationPlayer(RunContext):
    """The gameplay side of a run: donation formats, answers, and whole populations' games."""

    def percent_base(self, donor_units: float) -> float:
        """The units a stated percentage is a share of (:func:`percent_base_of`)."""
        return percent_base_of(self.settings, donor_units)

    def donation_format(self, donor_units: float, variant: str | None = None) -> DonationFormat:
        """The answer format of one donation (:func:`donation_format_for`)."""
        return donation_format_for(self.settings, donor_units, variant)

    def resolve(self, parsed: Mapping[str, Any], fmt: DonationFormat, donor_units: float) -> Action:
        """A validated answer → the action and its units (:func:`resolve_donation`)."""
        return resolve_donation(self.settings, parsed, fmt, donor_units)

    @staticmethod
    def final_verdict(outcome: DecisionOutcome, fmt: DonationFormat) -> dict[str, Any]:
        """The final attempt's raw answer (the text after ``Answer:`` outside reasoning blocks,
        or the whole reply without one) and parse status: ``ok`` or the parser's code of its
        last rejection (``invalid``, ``ambiguous``, ``range``, ``truncated``, …)."""
        before, found, after = strip_reasoning(outcome.response).partition(ANSWER_MARKER)
        raw = (after if found else before).strip()
        if outcome.ok:
            return {"raw_answer": raw, "parse_status": "ok"}
        check = check_answer(fmt, outcome.response, outcome.reply_columns["finish_reason"] or None)
        return {"raw_answer": raw, "parse_status": check.code or "failed"}

    def decider(self, records: StepRecords, generation: int, context: str, seats: Seating) -> Any:
        """The ``decide`` callback of :func:`play_game` for one population in its seat order."""
        strategies, agents, names, ids = seats.strategies, seats.agents, seats.names, seats.ids

        async def one(ctx: DonationContext) -> Action:
            d = ctx.donor
            fmt = self.donation_format(ctx.donor_resources)
            body = self.prompts.donation(
                names[d],
                strategies[d],
                generation,
                ctx.round,
                names[ctx.recipient],
                ctx.recipient_resources,
                ctx.recipient_trace,
                ctx.donor_resources,
            )
            pos = self.position(generation, context, ctx.game, ctx.round, ctx.pairing.pair, "donor", "donation")
            state = {
                "kind": "donation",
                "donor_resources": ctx.donor_resources,
                "recipient_resources": ctx.recipient_resources,
                "recipient_last_percent": ctx.recipient_trace.last_percent(),
            }
            agent = agents[d]
            outcome = await self.call(records, agent, body, fmt, pos, state)
            verdict = self.final_verdict(outcome, fmt)
            record = {
                "donor_id": ids[d],
                "recipient_id": ids[ctx.recipient],
                "trace_shown": self.prompts.trace(ctx.recipient_trace),
                "raw_answer": verdict["raw_answer"],
                "parse_status": verdict["parse_status"],
                "attempts": len(outcome.attempts),
                "failed": not outcome.ok,
                "error": outcome.error,
                "decision_id": outcome.decision_id,
                "temperature": temperature_of(agent),
            }
            if not outcome.ok or outcome.parsed is None:
                # Never the reference's silent zero, never R's inherited chain (docs/protocol/evolution.md#traces, #vh-prompts).
                return Action("invalid", 0.0, {**record, "stated_value": None, "justification": None})
            action = self.resolve(outcome.parsed, fmt, ctx.donor_resources)
            record.update(stated_value=float(outcome.parsed["value"]), justification=outcome.parsed.get("justification"))
            return Action(action.move, action.amount, record)

        async def decide(contexts: Sequence[DonationContext]) -> list[Action]:
            return list(await asyncio.gather(*(one(c) for c in contexts)))

        return decide

    async def play_population(
        self,
        records: StepRecords,
        generation: int,
        context: str,
        strategies: Sequence[str],
        agents: Sequence[Agent],
        ids: Sequence[str],
        strategy_id: str | None = None,
        names_by_input: Sequence[str] | None = None,
    ) -> tuple[list[float], list[float], list[int], list[str]]:
        """Shuffle, play games 1 and 2; return game-1 and game-2 finals per *input* index,
        the shuffled order (input indices) and the display names (shuffled order). Every donor
        plays with its own instance of its agent (:func:`coopeval.agents.seats.seat_agent`).

        ``names_by_input`` are the agents' names (a generation's members keep the names they
        wrote their strategies under); without them (invasion tests) the agents get seeded
        neutral names, or their ids under ``compat.vh_generation_names``."""
        n = len(strategies)
        agents = [seat_agent(a) for a in agents]
        order = [int(i) for i in self.rng(generation, "shuffle", context).permutation(n)]
        ids_s = [ids[i] for i in order]
        if names_by_input is not None:
            names = [names_by_input[i] for i in order]
        elif self.settings.generation_names:
            names = ids_s
        else:
            names = neutral_names(n, (), self.prompts.player_name, self.rng(generation, "names", context))
        decide = self.decider(records, generation, context, Seating([strategies[i] for i in order], [agents[i] for i in order], names, ids_s))
        finals: list[list[float]] = []
        for game in (1, 2):
            result = await play_game(names, self.donation, game, decide, self.settings.trace_length)
            for event in result.events:
                if isinstance(event["trace_shown"], Trace):
                    event["trace_shown"] = self.prompts.trace(event["trace_shown"])
                records.add(
                    "evo_events", {**self.base, "generation": generation, "context": context.split(":")[0], "strategy_id": strategy_id, **event}
                )
            by_input = [0.0] * n
            for k, i in enumerate(order):
                by_input[i] = result.final[k]
            finals.append(by_input)
        return finals[0], finals[1], order, names
