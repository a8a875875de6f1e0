"""One evolution run: generations as resumable steps (evolution spec §2.2, §3, §3.3–3.5).

A generation step is: build the population (generation 1: write N strategies; later: select
from the previous generation and write offspring), shuffle it, play games 1 and 2, score,
rank, then run the invasion tests and strategy-matrix probes on a seeded sample of its
agents. Each step returns its own rows and the population's state, so a
:class:`~coopeval.studies.evolution.checkpoint.Checkpoints` folder can persist it atomically and
a later run (after a kill, or with more generations) continues from the last finished step.

Every call goes through :meth:`DecisionMaker.decide` with the position ``{study, seed, run,
generation, context, game, round, pair, role, kind[, sample]}`` (cache key and provider seed);
random draws come from named streams ``rng_for(seed, run_key, generation, purpose, …)``, so a
step's result never depends on how it was reached.
"""

from __future__ import annotations

import asyncio
import json
import math
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from coopeval.agents.maker import DecisionMaker, DecisionOutcome
from coopeval.agents.protocol import Agent
from coopeval.agents.seats import seat_agent
from coopeval.core.rng import rng_for, seed_int_for
from coopeval.studies.evolution.amounts import percent_limit, stated_limit, units_for_percent, units_given
from coopeval.decisions.parsing import check_answer
from coopeval.studies.evolution.formats import ANSWER_MARKER, DonationFormat, StrategyFormat, truncate_words, word_count
from coopeval.studies.evolution.game import Action, DonationContext, GameRules, play_game
from coopeval.studies.evolution.matrix import SIZE, matrix_features
from coopeval.studies.evolution.prompting import EvolutionPrompts
from coopeval.studies.evolution.schedule import half_of
from coopeval.studies.evolution.selection import ranks, roulette_draw, shuffled_positions, truncation_survivors
from coopeval.studies.evolution.settings import EvolutionSettings
from coopeval.studies.evolution.traces import Trace, TraceEvent

FREE_RIDER_ID = "free-rider"


@dataclass
class Member:
    """One agent of a generation: its strategy, lineage and (after play) results."""

    agent_id: str
    born: int
    strategy: str
    justification: str = ""
    parent_id: str | None = None
    parent_rank: int | None = None
    word_count: int = 0
    truncated: bool = False
    status: str = "ok"
    attempts: int = 0
    survived: bool = False
    display: str = ""
    half: str = ""
    game1: float = math.nan
    game2: float = math.nan
    score: float = math.nan
    rank: int = 0
    tiebreak: int = 0

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Member:
        return Member(**dict(data))


@dataclass
class RunAgents:
    """The agents of one run: strategy writer, donor, matrix prober (the same model at the
    temperatures of §3.1) and the free rider of §3.3."""

    strategy: Agent
    gameplay: Agent
    probe: Agent
    free_rider: Agent


@dataclass
class StepRecords:
    """Rows of one generation step, per table name."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, table: str, row: dict[str, Any]) -> None:
        self.tables.setdefault(table, []).append(row)

    def sort(self) -> None:
        """Put rows in an order independent of which concurrent call finished first, so a
        rerun (or a resumed run) gives identical tables."""
        for table, rows in self.tables.items():
            key = _SORT_KEYS.get(table)
            if key is not None:
                rows.sort(key=key)


def _none_first(value: Any) -> tuple[bool, Any]:
    return (value is not None, value if value is not None else "")


_SORT_KEYS: dict[str, Any] = {
    "llm_calls": lambda r: (r["decision_id"], r["attempt"]),
    "decisions": lambda r: r["decision_id"],
    "evo_events": lambda r: (r["context"], _none_first(r["strategy_id"]), r["game"], r["round"], r["pair"]),
    "invasion_tests": lambda r: r["strategy_id"],
    "strategy_matrix": lambda r: (r["strategy_id"], r["i"], r["j"], r["sample"]),
    "matrix_features": lambda r: r["strategy_id"],
}


def temperature_of(agent: Agent) -> float | None:
    """The temperature an agent sends (``None`` for bots)."""
    value = agent.params.get("temperature") if agent.cacheable else None
    return float(value) if value is not None else None


class EvolutionRun:
    """Plays one run (protocol × model × variant × replicate) generation by generation.

    Parameters
    ----------
    settings:
        The run's parameters.
    maker:
        The shared decision loop.
    prompts:
        The run's prompt renderer.
    agents:
        The run's agents.
    seed:
        The config seed (named RNG streams and provider seeds).
    run_key:
        Hash of everything that shapes the run's trajectory (not the number of generations):
        part of every position, so different runs never share an answer.
    base:
        Identifying columns of every row (cell_id, source, run, protocol, model, variant).
    label:
        Prefix of progress lines on stderr.
    """

    def __init__(
        self,
        settings: EvolutionSettings,
        maker: DecisionMaker,
        prompts: EvolutionPrompts,
        agents: RunAgents,
        seed: int,
        run_key: str,
        base: Mapping[str, Any],
        label: str = "evolution",
    ) -> None:
        self.s = settings
        self.maker = maker
        self.prompts = prompts
        self.agents = agents
        self.seed = seed
        self.run_key = run_key
        self.base = dict(base)
        self.label = label
        self.rules = GameRules(settings.endowment, settings.multiplier, settings.punishment_loss, settings.trace_length)
        self.shared_base = {
            "cell_id": self.base.get("cell_id"),
            "source": "ours",
            "run": self.base.get("run"),
            "mechanism": f"evolution/{settings.protocol}",
            "game": "donor_game",
            "study": "evolution",  # the shared tables' study column, where the schema has it
        }

    # ------------------------------------------------------------------------------------
    # positions, calls and their records
    # ------------------------------------------------------------------------------------

    def position(self, generation: int, context: str, game: int, round_: int, pair: int, role: str, kind: str, **extra: Any) -> dict[str, Any]:
        """The decision's position (spec §6 "cache position")."""
        return {
            "study": "evolution",
            "seed": self.seed,
            "run": self.run_key,
            "generation": generation,
            "context": context,
            "game": game,
            "round": round_,
            "pair": pair,
            "role": role,
            "kind": kind,
            **extra,
        }

    def rng(self, generation: int, *purpose: str | int) -> Any:
        return rng_for(self.seed, "evolution", self.run_key, generation, *purpose)

    async def call(
        self,
        records: StepRecords,
        agent: Agent,
        body: str,
        fmt: Any,
        pos: Mapping[str, Any],
        state: Mapping[str, Any],
    ) -> DecisionOutcome:
        """One decision through the shared loop; its attempt and decision rows are recorded."""
        provider_seed = seed_int_for(self.seed, *(str(v) if not isinstance(v, int) else v for v in pos.values()))
        outcome = await self.maker.decide(agent, body, fmt, pos, state=state, seed=provider_seed)
        matchup = f"g{pos['generation']}/{pos['context']}/game{pos['game']}"
        for attempt in outcome.attempts:
            records.add(
                "llm_calls",
                {**self.shared_base, **attempt, "matchup_id": matchup, "round": pos["round"], "seat": int(pos["pair"]) + 1},
            )
        records.add(
            "decisions",
            {
                **self.shared_base,
                "decision_id": outcome.decision_id,
                "matchup_id": matchup,
                "match_id": json.dumps(dict(pos), sort_keys=True),
                "round": pos["round"],
                "seat": int(pos["pair"]) + 1,
                "agent": agent.name,
                "kind": str(fmt.kind),
                "status": outcome.status,
                "parsed": json.dumps(outcome.parsed) if outcome.parsed is not None else None,
                "n_attempts": len(outcome.attempts),
                **outcome.reply_columns,
                "response": outcome.response,
                "error": outcome.error,
            },
        )
        return outcome

    # ------------------------------------------------------------------------------------
    # strategies (§2.2, §2.3, §3.1, §3.2)
    # ------------------------------------------------------------------------------------

    def strategy_format(self) -> StrategyFormat:
        return StrategyFormat(
            self.s.protocol, self.s.word_limit, self.s.local_strategy_chars, self.s.local_reasoning_chars if self.s.protocol == "vh" else 0
        )

    async def write_strategy(self, records: StepRecords, generation: int, index: int, body: str, member: Member) -> Member:
        """Ask for one strategy; enforce the word limit (one re-ask, then truncate, §3.1)."""
        fmt = self.strategy_format()
        pos = self.position(generation, "evolution", 0, 0, index, "writer", "strategy")
        writer = seat_agent(self.agents.strategy)  # each member's writer is its own instance (issue 13 kind 9)
        outcome = await self.call(records, writer, body, fmt, pos, {"kind": "strategy"})
        attempts = len(outcome.attempts)
        if not outcome.ok or outcome.parsed is None:
            return replace(member, strategy="", status="failed", attempts=attempts)
        parsed = outcome.parsed
        limit = self.s.word_limit
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

    def writer_name(self, agent_id: str, index: int) -> str:
        return agent_id if self.s.generation_names else f"Player {index + 1}"

    async def first_population(self, records: StepRecords) -> list[Member]:
        """Generation 1: N strategies from the first strategy prompt."""
        tasks = []
        for k in range(self.s.n_agents):
            agent_id = f"1_{k + 1}"
            body = self.prompts.strategy_first(self.writer_name(agent_id, k))
            tasks.append(self.write_strategy(records, 1, k, body, Member(agent_id, 1, "")))
        return list(await asyncio.gather(*tasks))

    async def next_population(self, records: StepRecords, generation: int, previous: Sequence[Member]) -> list[Member]:
        """Selection from the scored previous generation (§2.2 item 3, §3.1)."""
        n = self.s.n_agents
        scores = [m.score for m in previous]
        if self.s.selection == "truncation_top_half":
            positions = [m.tiebreak for m in previous]
            survivors = [replace(previous[i], survived=True) for i in truncation_survivors(scores, positions)]
            advice = [(m.strategy, m.score) for m in survivors]
            tasks = []
            for k in range(n - len(survivors)):
                agent_id = f"{generation}_{k + 1}"
                body = self.prompts.strategy_later_vh(self.writer_name(agent_id, k), advice)
                tasks.append(self.write_strategy(records, generation, k, body, Member(agent_id, generation, "")))
            newcomers = list(await asyncio.gather(*tasks))
            return [*survivors, *newcomers]
        parents = roulette_draw(scores, n, self.rng(generation, "roulette"))
        tasks = []
        for k, p in enumerate(parents):
            parent = previous[p]
            agent_id = f"{generation}_{k + 1}"
            body = self.prompts.strategy_later_horibe(self.writer_name(agent_id, k), parent.strategy, parent.rank)
            child = Member(agent_id, generation, "", parent_id=parent.agent_id, parent_rank=parent.rank)
            tasks.append(self.write_strategy(records, generation, k, body, child))
        return list(await asyncio.gather(*tasks))

    # ------------------------------------------------------------------------------------
    # donations (§1, §2.3, §2.4)
    # ------------------------------------------------------------------------------------

    def percent_base(self, donor_units: float) -> float:
        """The units a stated percentage is a share of (§1 amounts, ``percent_base``)."""
        return donor_units if self.s.percent_base == "current" else self.s.endowment

    def donation_format(self, donor_units: float, variant: str | None = None) -> DonationFormat:
        """The answer format of one donation: its limit is the one the prompt shows."""
        variant = self.s.punishment if variant is None else variant
        percent = self.s.amount_unit == "percent" and variant == "none"
        return DonationFormat(
            unit="percent" if percent else "units",
            max_value=percent_limit(donor_units, self.percent_base(donor_units)) if percent else stated_limit(donor_units),
            variant=variant,
            max_justification_chars=self.s.local_justification_chars,
        )

    def resolve(self, parsed: Mapping[str, Any], fmt: DonationFormat, donor_units: float) -> Action:
        """A validated answer → the action and its units (§1 amounts, ``percent_base``).

        Percent answers give p/100 of the current resources, or of the endowment under
        ``percent_base: endowment``; the shown limit means everything the donor holds
        (:mod:`coopeval.studies.evolution.amounts`); nothing is clipped.
        """
        kind, value = str(parsed["action"]), float(parsed["value"])
        if kind == "refuse":
            return Action("refuse", 0.0)
        if fmt.unit == "percent":
            return Action(kind, units_for_percent(value, donor_units, self.percent_base(donor_units)))
        return Action(kind, units_given(value, donor_units))

    @staticmethod
    def final_verdict(outcome: DecisionOutcome, fmt: DonationFormat) -> dict[str, Any]:
        """The final attempt's raw answer (the text after ``Answer:``, or the whole reply
        without one) and parse status: ``ok`` or the parser's code of its last rejection
        (``invalid``, ``ambiguous``, ``range``, ``truncated``, …)."""
        if outcome.ok and outcome.parsed is not None:
            return {"raw_answer": outcome.parsed.get("raw"), "parse_status": "ok"}
        before, found, after = outcome.response.partition(ANSWER_MARKER)
        raw = (after if found else before).strip()
        check = check_answer(fmt, outcome.response, outcome.reply_columns["finish_reason"] or None)
        return {"raw_answer": raw, "parse_status": check.code or "failed"}

    def decider(
        self,
        records: StepRecords,
        generation: int,
        context: str,
        strategies: Sequence[str],
        agents: Sequence[Agent],
        names: Sequence[str],
        ids: Sequence[str],
    ) -> Any:
        """The ``decide`` callback of :func:`play_game` for one population."""

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
                # Never the reference's silent zero, never R's inherited chain (§1.2, §2.3).
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
    ) -> tuple[list[float], list[float], list[int], list[str]]:
        """Shuffle, play games 1 and 2; return game-1 and game-2 finals per *input* index,
        the shuffled order (input indices) and the display names (shuffled order). Every donor
        plays with its own instance of its agent (:func:`coopeval.agents.seats.seat_agent`)."""
        n = len(strategies)
        agents = [seat_agent(a) for a in agents]
        order = [int(i) for i in self.rng(generation, "shuffle", context).permutation(n)]
        labels = [int(i) for i in self.rng(generation, "names", context).permutation(n)]
        ids_s = [ids[i] for i in order]
        names = ids_s if self.s.generation_names else [f"Player {labels[k] + 1}" for k in range(n)]
        decide = self.decider(
            records, generation, context, [strategies[i] for i in order], [agents[i] for i in order], names, ids_s
        )
        finals: list[list[float]] = []
        for game in (1, 2):
            result = await play_game(names, self.rules, game, decide)
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

    # ------------------------------------------------------------------------------------
    # one generation
    # ------------------------------------------------------------------------------------

    def score(self, game1: float, game2: float) -> float:
        """Selection score (§2.2 item 2.5, §3.1): the sum over both games, or 2 × game 2."""
        return 2.0 * game2 if self.s.score_rule == "game2_double" else game1 + game2

    async def step(self, generation: int, previous: Sequence[Member] | None) -> tuple[list[Member], StepRecords]:
        """Play generation ``generation`` (1-based) after ``previous`` (None for the first)."""
        started = time.monotonic()
        records = StepRecords()
        if previous is None:
            members = await self.first_population(records)
        else:
            members = await self.next_population(records, generation, previous)
        n = len(members)
        g1, g2, order, names = await self.play_population(
            records, generation, "evolution", [m.strategy for m in members], [self.agents.gameplay] * n, [m.agent_id for m in members]
        )
        for k, i in enumerate(order):
            members[i].display, members[i].half = names[k], half_of(n, k)
        scores = [self.score(a, b) for a, b in zip(g1, g2, strict=True)]
        positions = shuffled_positions(n, self.rng(generation, "rank-ties"))
        rank_of = ranks(scores, positions)
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
                },
            )
        records.add("evo_generations", self.generation_row(generation, records, g1, g2))
        await self.analyse(records, generation, members)
        records.sort()
        s = self.maker.stats
        print(
            f"[{self.label}] generation {generation}/{self.s.generations}: mean final resources "
            f"{(sum(g1) + sum(g2)) / (2 * n):.2f}, {s.calls_made} model calls, {s.cache_hits} cache hits, "
            f"{s.failed_decisions} failed decisions, {time.monotonic() - started:.0f}s",
            file=sys.stderr,
            flush=True,
        )
        return members, records

    def generation_row(self, generation: int, records: StepRecords, g1: Sequence[float], g2: Sequence[float]) -> dict[str, Any]:
        """The §2.5 population metrics of the generation's own games."""
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

    # ------------------------------------------------------------------------------------
    # robustness: invasion tests (§3.3) and strategy matrices (§3.4, §3.5)
    # ------------------------------------------------------------------------------------

    def analysis_sample(self, generation: int, members: Sequence[Member]) -> list[Member]:
        """The seeded sample of analysed agents (same sample for invasion and matrices)."""
        size = min(max(self.s.invasion_per_generation, self.s.matrix_per_generation), len(members))
        picked = self.rng(generation, "analysis-sample").permutation(len(members))[:size]
        return [members[int(i)] for i in picked]

    async def analyse(self, records: StepRecords, generation: int, members: Sequence[Member]) -> None:
        sample = [m for m in self.analysis_sample(generation, members) if m.status == "ok"]
        tasks = [self.invasion(records, generation, m) for m in sample[: self.s.invasion_per_generation]]
        tasks += [self.matrix(records, generation, m) for m in sample[: self.s.matrix_per_generation]]
        await asyncio.gather(*tasks)

    async def invasion(self, records: StepRecords, generation: int, member: Member) -> dict[str, Any]:
        """N − 1 copies of ``member``'s strategy + the always-zero bot, both games, no
        evolution; robust iff the copies' mean score > the bot's (§3.3)."""
        n = self.s.n_agents
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

    def probe_trace(self, x_a: float, x_b: float) -> Trace:
        """The synthetic chain of §3.4: round t−1 A gave x_A % to B, t−2 B gave x_B % to C,
        t−3 C gave x_C % to D (amounts for agents at the probe's resources)."""
        r, t = self.s.matrix_resources, self.s.matrix_round
        events = (
            TraceEvent(t - 1, "Player 2", "Player 3", "donate", x_a, x_a / 100 * r),
            TraceEvent(t - 2, "Player 3", "Player 4", "donate", x_b, x_b / 100 * r),
            TraceEvent(t - 3, "Player 4", "Player 5", "donate", self.s.matrix_x_c, self.s.matrix_x_c / 100 * r),
        )
        return Trace(events, "").shown(self.s.trace_length)

    async def matrix(self, records: StepRecords, generation: int, member: Member) -> None:
        """The 11 × 11 probe grid of ``member``'s strategy and its features (§3.4, §3.5).

        Probes ask the plain donation question (no punish/refuse option), round
        ``matrix_round`` of game 1, both agents at ``matrix_resources`` units, generation =
        the strategy's own; each of ``matrix_samples`` samples is its own position.
        """
        r = self.s.matrix_resources
        context = f"matrix:{member.agent_id}"

        async def probe(i: int, j: int, sample: int) -> tuple[int, int, float | None]:
            trace = self.probe_trace(10.0 * j, 10.0 * i)
            fmt = self.donation_format(r, variant="none")
            body = self.prompts.donation(
                "Player 1", member.strategy, member.born, self.s.matrix_round, "Player 2", r, trace, r, punishment="none"
            )
            pos = self.position(generation, context, 1, self.s.matrix_round, i * SIZE + j, "donor", "matrix-probe", sample=sample)
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
            *(probe(i, j, s) for i in range(SIZE) for j in range(SIZE) for s in range(self.s.matrix_samples))
        )
        sums: dict[tuple[int, int], list[float]] = {}
        for i, j, pct in cells:
            if pct is not None:
                sums.setdefault((i, j), []).append(pct)
        n_failed = sum(1 for i in range(SIZE) for j in range(SIZE) if (i, j) not in sums)
        row: dict[str, Any] = {**self.base, "generation": generation, "strategy_id": member.agent_id, "n_failed_cells": n_failed}
        if n_failed == 0:
            m = [[sum(sums[(i, j)]) / len(sums[(i, j)]) for j in range(SIZE)] for i in range(SIZE)]
            row.update(matrix_features(m, self.s.monotonicity_constant_rows).as_row())
        records.add("matrix_features", row)
