"""The round loop of one run, for each testbed (spec §4.1, §6, §8).

A run is strictly sequential: each round's prompts read the public log and the memories the
previous rounds wrote (parallelism is across runs, cells and models only). Every decision —
LLM or bot — goes through :meth:`DecisionMaker.decide` with a position of
``(study, testbed, condition, matching, agent, seed, replicate, round, player, role, kind)``
(spec §12: seed, round, role, call kind; the maker adds the attempt). The condition and agent
make decision ids unique across the cells of one store.

Failure policy ([decision], spec §4.5: a failed row, never a substitute):

* an action decision that fails all attempts voids its round: status ``failed_action``, no
  payoff, no gossip, no log or memory entry, no interaction event;
* a gossip decision that fails leaves the round's payoffs in place: status ``failed_gossip``, no
  log entry for that message, memory entries without it.

Each testbed function fills :class:`RunRecords` with one ``gossip_rounds`` row per round, the
interaction events for :mod:`.metrics`, and the shared ``decisions``/``llm_calls`` rows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from coopeval.agents.maker import DecisionMaker, DecisionOutcome
from coopeval.agents.progress import Progress
from coopeval.agents.protocol import Agent
from coopeval.agents.seats import seat_agent
from coopeval.core.prompts import PromptLibrary, number_text
from coopeval.core.rng import seed_int_for
from coopeval.studies.gossip.conditions import Condition
from coopeval.studies.gossip.formats import (
    BUYER,
    DONOR,
    GOSSIP,
    PD_ACTION,
    REFLECTION,
    SELLER,
    SIGNAL,
    GossipFormat,
    investor_format,
    responder_format,
)
from coopeval.studies.gossip.memory import Channel, LogEntry, PublicLog, fmt_units, percent
from coopeval.studies.gossip.metrics import AgentEvent
from coopeval.studies.gossip.schedules import Pair
from coopeval.studies.gossip.testbeds import DonationGame, Market, PrisonersDilemma, Testbed, TrustGame
from coopeval.studies.gossip.tones import tone_rank


def stated_numbers(tb: Testbed) -> dict[str, object]:
    """The numbers the ``<testbed>_overview`` prompt states, taken from the testbed the engine
    pays with (``number_text``: never rounded for display; issue 13 kind 11b), read off its
    ``payoff`` where it states a reward: ``initial``; donation and PD ``c``, ``b`` and PD
    ``cc`` (the both-cooperate reward); trust
    ``multiplier``; market sizes and each (quality, offer) payoff pair."""
    values: dict[str, object] = {"initial": number_text(tb.initial_resources)}
    if isinstance(tb, DonationGame):
        donor, recipient = tb.payoff("cooperate")
        values.update(c=number_text(-donor), b=number_text(recipient))
    if isinstance(tb, PrisonersDilemma):
        sucker, temptation = tb.payoff("C", "D")
        values.update(c=number_text(-sucker), b=number_text(temptation), cc=number_text(tb.payoff("C", "C")[0]))
    if isinstance(tb, TrustGame):
        values.update(multiplier=number_text(tb.multiplier))
    if isinstance(tb, Market):
        values.update(
            n_sellers=tb.n_sellers,
            n_buyers=tb.n_buyers,
            **{k.lower(): ", ".join(number_text(x) for x in tb.payoff(k[0], k[1:])) for k in ("Hc", "Hs", "Lc", "Ls")},
        )
    return values

@dataclass
class RunRecords:
    """Rows of one run: ``rounds`` (gossip_rounds), ``events``, ``decisions``, ``llm_calls``,
    and the market's ``(quality, choice, seller reward, buyer reward)`` outcomes."""

    rounds: list[dict[str, Any]] = field(default_factory=list)
    events: list[AgentEvent] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    market: list[tuple[str, str, float, float]] = field(default_factory=list)


@dataclass
class Gossip:
    """A published (or attempted) assessment; ``ok`` False when the call failed."""

    ok: bool
    entry: LogEntry | None = None
    justification: str = ""
    word_count: int | None = None
    over_word_limit: bool | None = None


class RunLoop:
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
    message_agent:
        Who writes attacker messages under ``attacker_messages: llm`` (the cell's model).

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
        memory_cap: int = 0,
        log_cap: int = 0,
        message_agent: Agent | None = None,
    ) -> None:
        self.testbed = testbed
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
        self.interactions = {n: 0 for n in self.names}
        self.records = RunRecords()
        self.attackers = [n for n in self.names if self.kinds.get(n) == "attacker"]
        self.progress = Progress(run_label, len(self.schedule), maker, unit="rounds", interval=10.0)

    # -- prompt pieces -----------------------------------------------------------------------
    @property
    def key(self) -> str:
        return self.testbed.key

    @property
    def signal_mode(self) -> str:
        return self.cond.signal

    def rules(self, name: str) -> str:
        """The rules section (the reference's system message) for ``name`` (spec §4.2)."""
        tb = self.testbed
        values = {**stated_numbers(tb), "pairing_phrase": self.prompts.render(f"pairing_{self.matching}")}
        overview = self.prompts.render(f"{self.key}_overview", **values)
        horizon = tb.horizon
        length = self.prompts.render(f"length_{horizon}", n_rounds=tb.n_rounds)
        if not self.cond.gossip:
            information = self.prompts.render("information_none")
        elif self.signal_mode == "tone":
            information = self.prompts.render("information_gossip", who_posts=self.prompts.render(f"{self.key}_who_posts"))
        else:
            information = self.prompts.render(
                "information_signal", who_posts=self.prompts.render(f"{self.key}_who_posts"), convention=self.convention()
            )
        return self.prompts.render(
            "rules",
            agent=name,
            n_agents=len(self.names),
            horizon_phrase=self.prompts.render(f"horizon_{horizon}"),
            game_title=self.prompts.render(f"{self.key}_title"),
            gamma=f"{tb.gamma:g}",
            overview=overview,
            length=length,
            information=information,
        )

    def convention(self) -> str:
        """The stated meaning of 1 and 0 under ``binary_convention`` ("" otherwise)."""
        return self.prompts.render("convention") if self.signal_mode == "binary_convention" else ""

    def _common(self, name: str, partner: str, gossip_visible: bool = True) -> dict[str, object]:
        tb = self.testbed
        community = ""
        if self.cond.gossip and gossip_visible:
            community = self.prompts.render("community", partner=partner, log=self.log.render())
        equilibrium = self.prompts.render(f"equilibrium_{tb.horizon}") if self.cond.equilibrium_knowledge else ""
        if self.cond.reflection:
            which = "_".join(("equilibrium",) * self.cond.equilibrium_knowledge + ("gossip",) * self.cond.gossip) or "plain"
            reflect_items = self.prompts.render(f"reflect_items_{which}")
            guidelines = self.prompts.render("guidelines_reflect", reflect_items=reflect_items, partner=partner)
        else:
            guidelines = self.prompts.render("guidelines_plain")
        return {
            "gamma": f"{tb.gamma:g}",
            "length_note": self.prompts.render("length_note_finite", n_rounds=tb.n_rounds) if tb.horizon == "finite" else "",
            "memory": self.memory[name].render(),
            "community": community,
            "equilibrium": equilibrium,
            "guidelines": guidelines,
        }

    def action_body(
        self, name: str, partner: str, round_: int, situation: str, choice: str, output: str, observed: bool, reflection: str = ""
    ) -> str:
        """Rules + the action prompt (one user message; the maker appends the style line).
        ``reflection`` is the agent's own reflection of a separate call (``reflection_call``)."""
        if observed and self.cond.gossip:
            word = self.prompts.render("signal_word_tone" if self.signal_mode == "tone" else "signal_word_binary")
            accountability = self.prompts.render("accountability_observed", partner=partner, signal_word=word)
        else:
            accountability = self.prompts.render("accountability_none")
        body = self.prompts.render(
            "action",
            round=round_,
            situation=situation,
            choice=choice,
            output=output,
            accountability=accountability,
            reflection=self.prompts.render("reflection_shown", reflection=reflection) + "\n" if reflection else "",
            **self._common(name, partner),
        )
        return self.rules(name) + "\n\n" + body

    def reflection_body(self, name: str, partner: str, round_: int, situation: str) -> str:
        """Rules + the separate reflection prompt (spec §11, ``reflection_call``)."""
        common = self._common(name, partner)
        body = self.prompts.render(
            "reflect",
            round=round_,
            situation=situation,
            partner=partner,
            memory=common["memory"],
            community=common["community"],
            equilibrium=common["equilibrium"],
            output=REFLECTION.instruction(),
        )
        return self.rules(name) + "\n\n" + body

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

    def witness_body(self, name: str, partner: str, round_: int, situation: str, fmt: Any) -> str:
        """Rules + the gossip (or signal) prompt."""
        if self.signal_mode == "tone":
            tone_list = "\n".join(self.prompts.render("tone_line", tone=t, meaning=self.tone_meaning(t)) for t in fmt.tones)
            task = self.prompts.render("task_gossip", partner=partner, tone_list=tone_list)
        else:
            task = self.prompts.render("task_signal", partner=partner, convention=self.convention())
        body = self.prompts.render(
            "witness",
            round=round_,
            situation=situation,
            partner=partner,
            task=task,
            output=fmt.instruction(),
            **self._common(name, partner),
        )
        return self.rules(name) + "\n\n" + body

    def tone_meaning(self, tone: str) -> str:
        """What ``tone`` means, as the prompts state it (``tone_meaning_<tone>``)."""
        return self.prompts.render(f"tone_meaning_{tone}")

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
        provider_seed = seed_int_for(self.seed, "gossip", self.key, self.replicate, round_, name, role, kind)
        outcome = await self.maker.decide(agent, body, fmt, position, state=state, seed=provider_seed)
        seat = self.names.index(name) + 1
        base = {"matchup_id": self.run_label, "round": round_, "seat": seat}
        for attempt in outcome.attempts:
            self.records.llm_calls.append({**base, **attempt})
        parsed = outcome.parsed or {}
        token = next((str(v) for k, v in parsed.items() if k.endswith("_action") or k in ("tone", "signal")), None)
        self.records.decisions.append(
            {
                **base,
                "decision_id": outcome.decision_id,
                "match_id": f"r{round_}:{name}:{role}",
                "agent": agent.name,
                "kind": str(fmt.kind),
                "status": outcome.status,
                "parsed": json.dumps(outcome.parsed) if outcome.parsed is not None else None,
                "action_token": token,
                "n_attempts": len(outcome.attempts),
                **outcome.reply_columns,
                "response": outcome.response,
                "error": outcome.error,
            }
        )
        return outcome

    async def gossip(self, witness: str, subject: str, round_: int, situation: str, cooperated: bool) -> Gossip:
        """The witness's assessment of ``subject`` (spec §4.2 gossip module, §8.1, §8.2)."""
        kind = self.kinds.get(witness, "honest")
        if kind == "max":  # Max posts a fixed text without a call and keeps no memory (§8.1)
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
    def published(self, g: Gossip | None) -> str:
        """How a published assessment reads inside a memory entry ("" if none)."""
        if g is None or not g.ok or g.entry is None:
            return ""
        return self.prompts.render("published", shown=g.entry.content(self.cond.show_tone, self.prompts))

    def post(self, template: str, g: Gossip | None, **values: object) -> str:
        """Template ``template`` quoting the published assessment ``g`` ("" if none)."""
        shown = self.published(g)
        return self.prompts.render(template, post=shown, **values) if shown else ""

    def remember(self, name: str, text: str, justification: str, gossip: Gossip | None = None) -> None:
        """Append a first-person memory entry (Max keeps none; §8.1) with the agent's own
        justification when reflection is on (spec §4.4): the action's, then (template
        ``memory_justifications``) that of the agent's own assessment ``gossip`` if any."""
        if self.kinds.get(name) == "max":
            return
        if self.cond.reflection:
            if gossip is not None and gossip.ok and gossip.justification:
                justification = self.prompts.render("memory_justifications", action=justification, gossip=gossip.justification)
            if justification:
                text += self.prompts.render("memory_reasoning", justification=justification)
        self.memory[name].add(text)

    def gossip_columns(self, g: Gossip | None, prefix: str = "") -> dict[str, Any]:
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
        return {
            "round": round_,
            "donor": first,
            "recipient": second,
            "donor_kind": self.kinds.get(first, "honest"),
            "recipient_kind": self.kinds.get(second, "honest"),
            "donor_index": self.interactions[first] + 1,
            "recipient_index": self.interactions[second] + 1,
            "donor_resources": res[0],
            "recipient_resources": res[1],
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


def _u(x: float) -> str:
    return fmt_units(x)


# --------------------------------------------------------------------------------------------
# testbeds
# --------------------------------------------------------------------------------------------


async def play_donation(loop: RunLoop) -> RunRecords:
    """Donation game rounds (spec §4.1): donor action, recipient gossip, log, memory, payoffs."""
    game = loop.testbed
    assert isinstance(game, DonationGame)
    for t, (di, ri) in enumerate(loop.schedule, start=1):
        d, r = loop.names[di], loop.names[ri]
        res = (loop.resources[d], loop.resources[r])
        say = loop.prompts.render
        units = {"donor_units": _u(res[0]), "recipient_units": _u(res[1])}
        situation = say("donation_situation", donor=d, recipient=r, **units)
        choice = say("donation_choice", recipient=r, c=_u(game.c), b=_u(game.b))
        act = await loop.act(d, r, t, situation, choice, DONOR, "donor", True, loop.bot_state(d, r, "donor"))
        if not act.ok or act.parsed is None:
            loop.records.rounds.append(loop.round_row(t, d, r, res, "failed_action", donor_action_justification=None))
            continue
        action = act.parsed["donor_action"]
        cooperated = action == "cooperate"
        donor_reward, recipient_reward = game.payoff(action)
        cost, benefit = -donor_reward, recipient_reward
        ratio = cost / res[0] if res[0] > 0 else None
        deed = {"donor": d, "recipient": r, "cost": _u(cost), "benefit": _u(benefit), "share": percent(cost, res[0])}
        outcome = "cooperated" if cooperated else "defected"
        g: Gossip | None = None
        if loop.cond.gossip:
            seen = say(f"donation_seen_{outcome}", **deed)
            g = await loop.gossip(r, d, t, say("donation_witness", donor=d, recipient=r, seen=seen, **units), cooperated)
        loop.add_log(g)
        status = "ok" if g is None or g.ok else "failed_gossip"
        row = loop.round_row(
            t, d, r, res, status,
            action=action, cost=cost, benefit=benefit, donation_ratio=ratio,
            donor_reward=donor_reward, recipient_reward=recipient_reward,
            donor_action_justification=act.parsed["justification"],
            recipient_gossip_justification=g.justification if g is not None and g.ok else None,
            **loop.gossip_columns(g),
        )
        loop.records.rounds.append(row)
        loop.remember(
            d,
            say("donation_memory_donor", round=t, recipient=r, deed=say(f"donation_deed_{outcome}", **deed), **units)
            + loop.post("post_theirs_then", g, other=r),
            act.parsed["justification"],
        )
        loop.remember(
            r,
            say("donation_memory_recipient", round=t, donor=d, their=say(f"donation_their_{outcome}", **deed), **units)
            + loop.post("post_mine_then", g),
            g.justification if g is not None and g.ok else "",
        )
        loop.records.events.append(AgentEvent(d, t, "donor", r, donor_reward, float(cooperated), 1 if cooperated else -1))
        loop.records.events.append(AgentEvent(r, t, "recipient", d, recipient_reward))
        loop.settle(t, d, r, (donor_reward, recipient_reward))
    return loop.records


async def play_pd(loop: RunLoop) -> RunRecords:
    """PD rounds (spec §6): two simultaneous actions, then each player gossips about the other;
    both messages enter the log after both are written."""
    game = loop.testbed
    assert isinstance(game, PrisonersDilemma)
    for t, (ai, bi) in enumerate(loop.schedule, start=1):
        a, b = loop.names[ai], loop.names[bi]
        res = (loop.resources[a], loop.resources[b])
        parsed: dict[str, dict[str, Any]] = {}
        failed = False
        say = loop.prompts.render
        for me, other, mine, theirs in ((a, b, res[0], res[1]), (b, a, res[1], res[0])):
            situation = say("pd_situation", me=me, other=other, mine=_u(mine), theirs=_u(theirs))
            choice = say("pd_choice", other=other, c=_u(game.c), b=_u(game.b))
            out = await loop.act(me, other, t, situation, choice, PD_ACTION, "player", True, loop.bot_state(me, other, "player"))
            if not out.ok or out.parsed is None:
                failed = True
            else:
                parsed[me] = out.parsed
        if failed:
            loop.records.rounds.append(loop.round_row(t, a, b, res, "failed_action"))
            continue
        act_a, act_b = parsed[a]["player_action"], parsed[b]["player_action"]
        ra, rb = game.payoff(act_a, act_b)
        gossips: dict[str, Gossip | None] = {a: None, b: None}
        if loop.cond.gossip:
            for me, other, my_act, their_act, my_r in ((b, a, act_b, act_a, rb), (a, b, act_a, act_b, ra)):
                situation = say("pd_witness", me=me, other=other, my_action=my_act, their_action=their_act, reward=_u(my_r))
                gossips[me] = await loop.gossip(me, other, t, situation, their_act == "C")
        loop.add_log(gossips[b], gossips[a])
        status = "ok" if all(g is None or g.ok for g in gossips.values()) else "failed_gossip"
        loop.records.rounds.append(
            loop.round_row(
                t, a, b, res, status,
                action=act_a, partner_action=act_b,
                cost=game.c if act_a == "C" else 0.0, benefit=game.b if act_a == "C" else 0.0,
                donation_ratio=(game.c / res[0] if act_a == "C" and res[0] > 0 else (0.0 if res[0] > 0 else None)),
                donor_reward=ra, recipient_reward=rb,
                donor_action_justification=parsed[a]["justification"],
                recipient_action_justification=parsed[b]["justification"],
                recipient_gossip_justification=gossips[b].justification if gossips[b] and gossips[b].ok else None,  # type: ignore[union-attr]
                donor_gossip_justification=gossips[a].justification if gossips[a] and gossips[a].ok else None,  # type: ignore[union-attr]
                **loop.gossip_columns(gossips[b]),
                **loop.gossip_columns(gossips[a], "partner_"),
            )
        )
        for me, other, my_act, their_act, my_r, mine, theirs in (
            (a, b, act_a, act_b, ra, res[0], res[1]), (b, a, act_b, act_a, rb, res[1], res[0])
        ):
            text = say(
                "pd_memory", round=t, other=other, mine=_u(mine), theirs=_u(theirs), my_action=my_act, their_action=their_act,
                reward=_u(my_r),
            )
            text += loop.post("post_mine", gossips[me]) + loop.post("post_theirs_about_me", gossips[other], other=other)
            loop.remember(me, text, parsed[me]["justification"], gossips[me])
        loop.records.events.append(AgentEvent(a, t, "player", b, ra, float(act_a == "C"), 1 if act_a == "C" else -1))
        loop.records.events.append(AgentEvent(b, t, "player", a, rb, float(act_b == "C"), 1 if act_b == "C" else -1))
        loop.settle(t, a, b, (ra, rb))
    return loop.records


async def play_trust(loop: RunLoop) -> RunRecords:
    """Trust-game rounds (spec §6): investment, return, both gossip (investor first), log after
    both; resources carry over. With no investment the responder has nothing to decide (R = 0,
    no call). The responder's memory never quotes the investor's private justification."""
    game = loop.testbed
    assert isinstance(game, TrustGame)
    m = game.multiplier
    for t, (ii, ri) in enumerate(loop.schedule, start=1):
        inv, resp = loop.names[ii], loop.names[ri]
        res = (loop.resources[inv], loop.resources[resp])
        say = loop.prompts.render
        units = {"investor_units": _u(res[0]), "responder_units": _u(res[1])}
        fmt_i = investor_format(max(res[0], 0.0))
        situation = say("trust_investor_situation", investor=inv, responder=resp, **units)
        choice = say("trust_investor_choice", responder=resp, max_invest=_u(max(res[0], 0.0)), multiplier=_u(m))
        out_i = await loop.act(inv, resp, t, situation, choice, fmt_i, "investor", True, loop.bot_state(inv, resp, "investor"))
        if not out_i.ok or out_i.parsed is None:
            loop.records.rounds.append(loop.round_row(t, inv, resp, res, "failed_action"))
            continue
        invest = float(out_i.parsed["investor_action"])
        received = m * invest
        back = 0.0
        resp_just: str | None = None
        if received > 0:
            fmt_r = responder_format(received)
            situation = say("trust_responder_situation", investor=inv, responder=resp, invest=_u(invest), received=_u(received), **units)
            choice = say("trust_responder_choice", investor=inv, received=_u(received))
            out_r = await loop.act(
                resp, inv, t, situation, choice, fmt_r, "responder", True, loop.bot_state(resp, inv, "responder", received=received)
            )
            if not out_r.ok or out_r.parsed is None:
                loop.records.rounds.append(loop.round_row(t, inv, resp, res, "failed_action", amount=invest))
                continue
            back = float(out_r.parsed["responder_action"])
            resp_just = out_r.parsed["justification"]
        r_inv, r_resp = game.payoff(invest, back)
        gossips: dict[str, Gossip | None] = {inv: None, resp: None}
        moves = {"investor": inv, "responder": resp, "invest": _u(invest), "received": _u(received), "back": _u(back)}
        if loop.cond.gossip:
            gossips[inv] = await loop.gossip(
                inv, resp, t, say("trust_investor_witness", reward=_u(r_inv), **moves), back >= invest
            )
            gossips[resp] = await loop.gossip(
                resp, inv, t, say("trust_responder_witness", reward=_u(r_resp), investor_units=_u(res[0]), **moves), invest > 0
            )
        loop.add_log(gossips[inv], gossips[resp])
        status = "ok" if all(g is None or g.ok for g in gossips.values()) else "failed_gossip"
        loop.records.rounds.append(
            loop.round_row(
                t, inv, resp, res, status,
                amount=invest, partner_amount=back, cost=invest, benefit=received,
                donation_ratio=invest / res[0] if res[0] > 0 else None,
                donor_reward=r_inv, recipient_reward=r_resp,
                donor_action_justification=out_i.parsed["justification"],
                recipient_action_justification=resp_just,
                recipient_gossip_justification=gossips[resp].justification if gossips[resp] and gossips[resp].ok else None,  # type: ignore[union-attr]
                donor_gossip_justification=gossips[inv].justification if gossips[inv] and gossips[inv].ok else None,  # type: ignore[union-attr]
                **loop.gossip_columns(gossips[resp]),
                **loop.gossip_columns(gossips[inv], "partner_"),
            )
        )
        for me, other, role, my_r, own_just in (
            (inv, resp, "investor", r_inv, out_i.parsed["justification"]), (resp, inv, "responder", r_resp, resp_just or "")
        ):
            text = say(
                f"trust_memory_{role}", round=t, other=other, invest=_u(invest), received=_u(received), back=_u(back),
                reward=_u(my_r), **units,
            )
            text += loop.post("post_mine", gossips[me]) + loop.post("post_theirs_about_me", gossips[other], other=other)
            loop.remember(me, text, own_just, gossips[me])
        share = invest / res[0] if res[0] > 0 else None
        loop.records.events.append(AgentEvent(inv, t, "investor", resp, r_inv, share))
        loop.records.events.append(AgentEvent(resp, t, "responder", inv, r_resp))
        loop.settle(t, inv, resp, (r_inv, r_resp))
    return loop.records


async def play_market(loop: RunLoop) -> RunRecords:
    """Market rounds (spec §6): simultaneous seller and buyer choices; only the buyer gossips
    about the seller, with the tone in the log; the buyer's gossip justification is stored."""
    game = loop.testbed
    assert isinstance(game, Market)
    for t, (si, bi) in enumerate(loop.schedule, start=1):
        s, b = loop.names[si], loop.names[bi]
        res = (loop.resources[s], loop.resources[b])
        say = loop.prompts.render
        situation = say("market_seller_situation", seller=s, buyer=b)
        choice = say("market_seller_choice", cost_h=_u(game.cost_h), cost_l=_u(game.cost_l))
        out_s = await loop.act(s, b, t, situation, choice, SELLER, "seller", True, loop.bot_state(s, b, "seller"))
        situation = say("market_buyer_situation", seller=s, buyer=b)
        choice = say("market_buyer_choice", price_c=_u(game.price_c), price_s=_u(game.price_s))
        out_b = await loop.act(b, s, t, situation, choice, BUYER, "buyer", False, loop.bot_state(b, s, "buyer"))
        if not (out_s.ok and out_b.ok) or out_s.parsed is None or out_b.parsed is None:
            loop.records.rounds.append(loop.round_row(t, s, b, res, "failed_action"))
            continue
        q, c = out_s.parsed["seller_action"], out_b.parsed["buyer_action"]
        rs, rb = game.payoff(q, c)
        g: Gossip | None = None
        if loop.cond.gossip:
            g = await loop.gossip(b, s, t, say("market_witness", seller=s, buyer=b, quality=q, choice=c, reward=_u(rb)), q == "H")
        loop.add_log(g)
        loop.records.rounds.append(
            loop.round_row(
                t, s, b, res, "ok" if g is None or g.ok else "failed_gossip",
                action=q, partner_action=c, donor_reward=rs, recipient_reward=rb,
                donor_action_justification=out_s.parsed["justification"],
                recipient_action_justification=out_b.parsed["justification"],
                recipient_gossip_justification=g.justification if g is not None and g.ok else None,
                **loop.gossip_columns(g),
            )
        )
        deal = {"seller": s, "buyer": b, "quality": q, "choice": c}
        loop.remember(
            s, say("market_memory_seller", round=t, reward=_u(rs), **deal) + loop.post("post_theirs", g, other=b), out_s.parsed["justification"]
        )
        loop.remember(b, say("market_memory_buyer", round=t, reward=_u(rb), **deal) + loop.post("post_mine", g), out_b.parsed["justification"], g)
        loop.records.market.append((q, c, rs, rb))
        loop.records.events.append(AgentEvent(s, t, "seller", b, rs, float(q == "H"), 1 if q == "H" else -1))
        loop.records.events.append(AgentEvent(b, t, "buyer", s, rb, float(c == "c")))
        loop.settle(t, s, b, (rs, rb))
    return loop.records


PLAYERS = {"donation": play_donation, "pd": play_pd, "trust": play_trust, "market": play_market}
