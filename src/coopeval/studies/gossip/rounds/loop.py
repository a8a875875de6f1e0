"""The round loop of one run (docs/protocol/gossip.md#round-loop, #testbeds, #attacks-and-ablations): the run's state, its decisions and the one
round skeleton every testbed plays through (:func:`play_rounds`).

A run is strictly sequential: each round's prompts read the public log and the memories the
previous rounds wrote (parallelism is across runs, cells and models only). Every decision —
LLM or bot — goes through :meth:`DecisionMaker.decide` with a position of
``(study, testbed, condition, matching, agent, seed, replicate, round, player, role, kind)``
(docs/protocol/gossip.md#storage: seed, round, role, call kind; the maker adds the attempt). The condition and agent
make decision ids unique across the cells of one store; an agent that is not the cell's model (a bot attacker
or Max, who plays alike in the cells of every model) adds ``population``, the cell's model, since
the decision id is the hash of the position and the store refuses an id twice
(:func:`coopeval.pipeline.store.build_store`).

Failure policy ([decision], docs/protocol/gossip.md#parsing-and-failures: a failed row, never a substitute):

* an action decision that fails all attempts voids its round: status ``failed_action``, no
  payoff, no gossip, no log or memory entry; both agents get a *voided* interaction event
  (reward 0) so that the discount index of their later rewards stays as scheduled;
* a gossip decision that fails leaves the round's payoffs in place: status ``failed_gossip``, no
  log entry for that message, memory entries without it.

A testbed's own part (:class:`TestbedRounds`, one module per testbed in this package) asks its
decisions and writes its columns, memories and events; :func:`play_rounds` fills
:class:`RunRecords` with one ``gossip_rounds`` row per round, the interaction events for
:mod:`..metrics`, and the shared ``decisions``/``llm_calls`` rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from coopeval.agents.maker import DecisionMaker, DecisionOutcome
from coopeval.agents.progress import Progress
from coopeval.agents.protocol import Agent
from coopeval.agents.recorder import record_decision
from coopeval.agents.seats import seat_agent
from coopeval.core.prompts import PromptLibrary
from coopeval.core.rng import seed_int_for
from coopeval.studies.gossip.conditions import Condition
from coopeval.studies.gossip.formats import GOSSIP, REFLECTION, SIGNAL, GossipFormat
from coopeval.studies.gossip.memory import Channel, Gossip, LogEntry, PublicLog, fmt_units
from coopeval.studies.gossip.metrics import AgentEvent
from coopeval.studies.gossip.rounds.prompting import RunPrompts
from coopeval.studies.gossip.schedules import Pair
from coopeval.studies.gossip.testbeds import Testbed, testbed_entry
from coopeval.studies.gossip.tones import tone_rank


@dataclass
class RunRecords:
    """Rows of one run: ``rounds`` (gossip_rounds), ``events``, ``decisions``, ``llm_calls``,
    and the market's ``(quality, choice, seller reward, buyer reward)`` outcomes."""

    rounds: list[dict[str, Any]] = field(default_factory=list)
    events: list[AgentEvent] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    market: list[tuple[str, str, float, float]] = field(default_factory=list)


class RunLoop(RunPrompts):
    """State and helpers of one run.

    Parameters
    ----------
    testbed, condition:
        The game (with γ and horizon already resolved) and the condition's flags.
    names:
        Agent names in seat order.
    agents:
        The agent answering for each name (the LLM population's agent, or a bot).
    kinds:
        ``honest``, ``max`` or ``attacker`` per name.
    schedule:
        Round pairs (seat indices), see :mod:`.schedules`.
    memory_cap, log_cap:
        Entries of each agent's private memory and of the public log shown in a prompt (0 =
        all; the cell's ``memory_cap`` / ``log_cap``).
    message_agent:
        Who writes attacker messages under ``attacker_messages: llm`` (the cell's model).
    population:
        The cell's model (its name); the decisions of the other agents carry it in their position.

    Each name plays with its own instance of its agent, and each attacker has its own instance
    of the message writer (:func:`coopeval.agents.seats.seat_agent`).
    """

    def __init__(
        self,
        testbed: Testbed,
        condition: Condition,
        names: Sequence[str],
        agents: Mapping[str, Agent],
        kinds: Mapping[str, str],
        schedule: Sequence[Pair],
        maker: DecisionMaker,
        prompts: PromptLibrary,
        seed: int,
        replicate: int,
        matching: str,
        run_label: str,
        memory_cap: int,
        log_cap: int,
        message_agent: Agent | None = None,
        population: str = "",
    ) -> None:
        self.testbed = testbed
        self.population = population
        self.cond = condition
        self.names = tuple(names)
        # Every name is its own player: its own agent instance (issue 13 kind 9).
        self.agents = {name: seat_agent(agent) for name, agent in agents.items()}
        self.kinds = dict(kinds)
        self.schedule = list(schedule)
        self.maker = maker
        self.prompts = prompts
        self.seed = seed
        self.replicate = replicate
        self.matching = matching
        self.run_label = run_label
        self.message_agents = (
            {} if message_agent is None else {n: seat_agent(message_agent) for n in self.names if self.kinds[n] == "attacker"}
        )
        self.log = PublicLog(prompts, show_tone=condition.show_tone, max_entries=log_cap)
        self.memory = {n: Channel(prompts, "memory_empty", memory_cap) for n in self.names}
        self.resources = {n: float(testbed.initial_resources) for n in self.names}
        self.interactions = dict.fromkeys(self.names, 0)
        self.records = RunRecords()
        self.attackers = [n for n in self.names if self.kinds.get(n) == "attacker"]
        self.progress = Progress(run_label, len(self.schedule), maker, unit="rounds", interval=10.0)

    async def act(
        self,
        name: str,
        partner: str,
        round_: int,
        situation: str,
        choice: str,
        fmt: Any,
        role: str,
        observed: bool,
        state: Mapping[str, Any],
    ) -> DecisionOutcome:
        """An action decision, preceded by a separate reflection call under ``reflection_call``
        (honest agents only). A failed reflection is recorded and the action is asked without
        it (the reflection is an input, not an answer, so nothing is substituted)."""
        reflection = ""
        if self.cond.reflection_call and self.kinds.get(name, "honest") == "honest":
            body = self.reflection_body(name, partner, round_, situation)
            out = await self.decide(name, body, REFLECTION, round_, role, "reflection", state)
            if out.ok and out.parsed is not None:
                reflection = str(out.parsed["reflection"])
        body = self.action_body(name, partner, round_, situation, choice, fmt.instruction(), observed, reflection)
        return await self.decide(name, body, fmt, round_, role, "action", state)

    # -- decisions ---------------------------------------------------------------------------
    def bot_state(self, name: str, partner: str, role: str, **extra: Any) -> dict[str, Any]:
        """Structured state for scripted bots (never part of the cache key)."""
        return {
            "testbed": self.key,
            "role": role,
            "self": name,
            "partner": partner,
            "log": self.log.state(),
            "resources": self.resources[name],
            "co_attackers": list(self.attackers) if self.kinds.get(name) == "attacker" else [],
            "third_party_praise": self.cond.attacker_third_party_praise,
            **extra,
        }

    async def decide(
        self,
        name: str,
        body: str,
        fmt: Any,
        round_: int,
        role: str,
        kind: str,
        state: Mapping[str, Any],
        agent: Agent | None = None,
    ) -> DecisionOutcome:
        """One decision through the maker, recorded in ``decisions`` and ``llm_calls``."""
        agent = agent or self.agents[name]
        position = {
            "study": "gossip",
            "testbed": self.key,
            "condition": self.cond.name,
            "matching": self.matching,
            "agent": agent.name,
            "seed": self.seed,
            "replicate": self.replicate,
            "round": round_,
            "player": name,
            "role": role,
            "kind": kind,
        }
        if self.population and agent.name != self.population:  # the same bot in every model's cell
            position["population"] = self.population
        provider_seed = seed_int_for(self.seed, "gossip", self.key, self.replicate, round_, name, role, kind)
        outcome = await self.maker.decide(agent, body, fmt, position, state=state, seed=provider_seed)
        seat = self.names.index(name) + 1
        parsed = outcome.parsed or {}
        token = next((str(v) for k, v in parsed.items() if k.endswith("_action") or k in ("tone", "signal")), None)
        rows = record_decision(
            outcome,
            agent.name,
            str(fmt.kind),
            {"matchup_id": self.run_label, "round": round_, "seat": seat},
            {"match_id": f"r{round_}:{name}:{role}", "action_token": token},
        )
        self.records.llm_calls.extend(rows.calls)
        self.records.decisions.append(rows.decision)
        return outcome

    async def gossip(self, witness: str, subject: str, round_: int, situation: str, cooperated: bool) -> Gossip:
        """The witness's assessment of ``subject`` (docs/protocol/gossip.md#prompts gossip module, docs/protocol/gossip.md#greedy-defector, #collusive-attackers)."""
        kind = self.kinds.get(witness, "honest")
        if kind == "max":  # Max posts a fixed text without a call and keeps no memory (docs/protocol/gossip.md#greedy-defector)
            return Gossip(True, LogEntry(round_, witness, subject, self.prompts.render("max_post"), ""), "", 2, False)
        state = self.bot_state(witness, subject, "witness", cooperated=cooperated)
        if self.signal_mode != "tone":
            body = self.witness_body(witness, subject, round_, situation, SIGNAL)
            outcome = await self.decide(witness, body, SIGNAL, round_, "witness", "signal", state)
            if not outcome.ok or outcome.parsed is None:
                return Gossip(False)
            signal = int(outcome.parsed["signal"])
            return Gossip(True, LogEntry(round_, witness, subject, str(signal), "", signal), outcome.parsed["justification"])
        if kind == "attacker" and self.cond.attacker_messages == "llm" and witness in self.message_agents:
            forced = "praising" if subject in self.attackers else "criticism"
            fmt = GossipFormat(tones=(forced,))
            body = self.prompts.render(
                "attacker_gossip", round=round_, agent=witness, partner=subject, tone=forced,
                tone_meaning=self.tone_meaning(forced), output=fmt.instruction(),
            )
            outcome = await self.decide(witness, body, fmt, round_, "witness", "gossip", state, agent=self.message_agents[witness])
        else:
            body = self.witness_body(witness, subject, round_, situation, GOSSIP)
            outcome = await self.decide(witness, body, GOSSIP, round_, "witness", "gossip", state)
        if not outcome.ok or outcome.parsed is None:
            return Gossip(False)
        p = outcome.parsed
        entry = LogEntry(round_, witness, subject, p["gossip"], p["tone"])
        return Gossip(True, entry, p["justification"], p["word_count"], p["over_word_limit"])

    # -- bookkeeping -------------------------------------------------------------------------
    def remember(self, name: str, text: str, justification: str, gossip: Gossip | None = None) -> None:
        """Append a first-person memory entry (Max keeps none; docs/protocol/gossip.md#greedy-defector) with the agent's own
        justification when reflection is on (docs/protocol/gossip.md#memory): the action's, then (template
        ``memory_justifications``) that of the agent's own assessment ``gossip`` if any."""
        if self.kinds.get(name) == "max":
            return
        if self.cond.reflection:
            if gossip is not None and gossip.ok and gossip.justification:
                justification = self.prompts.render("memory_justifications", action=justification, gossip=gossip.justification)
            if justification:
                text += self.prompts.render("memory_reasoning", justification=justification)
        self.memory[name].add(text)

    def gossip_columns(self, g: Gossip | None, prefix: str) -> dict[str, Any]:
        """The ``gossip_rounds`` columns of assessment ``g`` (None: not asked), prefixed by its
        author's position (``first_`` or ``second_``)."""
        e = g.entry if g is not None and g.ok else None
        return {
            f"{prefix}tone": (e.tone or None) if e else None,
            f"{prefix}tone_rank": tone_rank(e.tone) if e else None,
            f"{prefix}signal": e.signal if e else None,
            f"{prefix}message": e.message if e else None,
            f"{prefix}word_count": g.word_count if g is not None and g.ok else None,
            f"{prefix}over_word_limit": g.over_word_limit if g is not None and g.ok else None,
        }

    def round_row(self, round_: int, first: str, second: str, res: tuple[float, float], status: str, **values: Any) -> dict[str, Any]:
        """A ``gossip_rounds`` row (other columns filled by the study); every round builds exactly
        one, so this also advances the job's progress line."""
        self.progress.step()
        first_role, second_role = testbed_entry(self.key).roles
        return {
            "round": round_,
            "first_role": first_role,
            "second_role": second_role,
            "first_agent": first,
            "second_agent": second,
            "first_kind": self.kinds.get(first, "honest"),
            "second_kind": self.kinds.get(second, "honest"),
            "first_index": self.interactions[first] + 1,
            "second_index": self.interactions[second] + 1,
            "first_resources": res[0],
            "second_resources": res[1],
            "status": status,
            **values,
        }

    def add_log(self, *gossips: Gossip | None) -> None:
        """Append assessments to the public log after all of a round's messages are written."""
        if not self.cond.gossip:
            return
        for g in gossips:
            if g is not None and g.ok and g.entry is not None:
                self.log.add(g.entry)

    def settle(self, round_: int, first: str, second: str, rewards: tuple[float, float]) -> None:
        self.resources[first] += rewards[0]
        self.resources[second] += rewards[1]
        self.interactions[first] += 1
        self.interactions[second] += 1


def justification_of(g: Gossip | None) -> str | None:
    """The justification of a published assessment (None if there is none or its call failed)."""
    return g.justification if g is not None and g.ok else None


@dataclass
class Round:
    """One round in play: its number ``t``, the pair (``first``, ``second``: donor/recipient,
    player 1/2, investor/responder, seller/buyer), their resources before it, and what the
    testbed part stores while playing it (``moves``: answers and amounts, ``rewards``: the
    pair's rewards, ``gossips``: each witness's assessment, in the order the log receives them)."""

    t: int
    first: str
    second: str
    res: tuple[float, float]
    moves: dict[str, Any] = field(default_factory=dict)
    rewards: tuple[float, float] = (0.0, 0.0)
    gossips: dict[str, Gossip | None] = field(default_factory=dict)

    def units(self, roles: tuple[str, str]) -> dict[str, str]:
        """The pair's resources before the round as the prompts state them, named by role:
        ``{"donor_units": "10", "recipient_units": "9"}``."""
        return {f"{roles[0]}_units": fmt_units(self.res[0]), f"{roles[1]}_units": fmt_units(self.res[1])}


class TestbedRounds(Protocol):
    """A testbed's part of a round (one implementation per testbed module of this package)."""

    async def actions(self, loop: RunLoop, rnd: Round) -> dict[str, Any] | None:
        """Ask the round's action decisions and set ``rnd.moves`` and ``rnd.rewards``; on a
        failed action return the ``failed_action`` row's extra columns (else None)."""
        ...

    async def assessments(self, loop: RunLoop, rnd: Round) -> None:
        """Ask the witnesses' assessments (called with gossip on) into ``rnd.gossips``."""
        ...

    def columns(self, loop: RunLoop, rnd: Round) -> dict[str, Any]:
        """The testbed's columns of the round's ``gossip_rounds`` row."""
        ...

    def remember(self, loop: RunLoop, rnd: Round) -> None:
        """Write both agents' memory entries of the round."""
        ...

    def record(self, loop: RunLoop, rnd: Round) -> None:
        """Append the round's interaction events (and testbed outcomes) to ``loop.records``."""
        ...


async def play_rounds(loop: RunLoop, part: TestbedRounds) -> RunRecords:
    """Play every round of ``loop.schedule`` through ``part``: actions (a failed one voids the
    round), assessments, the log (after all of a round's messages are written), the round row,
    memories, events, then the payoffs."""
    for t, (i, j) in enumerate(loop.schedule, start=1):
        first, second = loop.names[i], loop.names[j]
        rnd = Round(t, first, second, (loop.resources[first], loop.resources[second]))
        failed = await part.actions(loop, rnd)
        if failed is not None:
            loop.records.rounds.append(loop.round_row(t, first, second, rnd.res, "failed_action", **failed))
            loop.records.events.extend(
                AgentEvent(agent, t, "voided", partner, 0.0, voided=True)
                for agent, partner in ((first, second), (second, first))
            )
            continue
        if loop.cond.gossip:
            await part.assessments(loop, rnd)
        loop.add_log(*rnd.gossips.values())
        status = "ok" if all(g is None or g.ok for g in rnd.gossips.values()) else "failed_gossip"
        loop.records.rounds.append(loop.round_row(t, first, second, rnd.res, status, **part.columns(loop, rnd)))
        part.remember(loop, rnd)
        part.record(loop, rnd)
        loop.settle(t, first, second, rnd.rewards)
    return loop.records
