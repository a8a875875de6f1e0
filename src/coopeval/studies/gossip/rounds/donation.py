"""Donation game rounds (docs/protocol/gossip.md#round-loop): the donor acts, the recipient (the only witness) publishes an
assessment of the donor; then the log, both memories and the payoffs."""

from __future__ import annotations

from typing import Any

from coopeval.studies.gossip.formats import DONOR
from coopeval.studies.gossip.memory import fmt_units, percent
from coopeval.studies.gossip.metrics import AgentEvent
from coopeval.studies.gossip.rounds.loop import Round, RunLoop
from coopeval.studies.gossip.testbeds import DonationGame


class DonationRounds:
    """The donation game's part of a round: ``first`` is the donor, ``second`` the recipient."""

    async def actions(self, loop: RunLoop, rnd: Round) -> dict[str, Any] | None:
        """The donor's choice; its payoff (−c, b) or (0, 0)."""
        game = loop.testbed
        assert isinstance(game, DonationGame)
        d, r, say = rnd.first, rnd.second, loop.prompts.render
        situation = say("donation_situation", donor=d, recipient=r, **rnd.units(loop.roles))
        choice = say("donation_choice", recipient=r, c=fmt_units(game.c), b=fmt_units(game.b))
        act = await loop.act(d, r, rnd.t, situation, choice, DONOR, "donor", True, loop.bot_state(d, r, "donor"))
        if not act.ok or act.parsed is None:
            return {"first_action_justification": None}
        action = act.parsed["donor_action"]
        rnd.rewards = game.payoff(action)
        cost = -rnd.rewards[0]
        rnd.moves = {
            "action": action,
            "cooperated": action == "cooperate",
            "justification": act.parsed["justification"],
            "deed": {
                "donor": d, "recipient": r, "cost": fmt_units(cost), "benefit": fmt_units(rnd.rewards[1]),
                "share": percent(cost, rnd.res[0]),
            },
            "outcome": "cooperated" if action == "cooperate" else "defected",
        }
        return None

    async def assessments(self, loop: RunLoop, rnd: Round) -> None:
        """The recipient's assessment of the donor."""
        d, r, say, m = rnd.first, rnd.second, loop.prompts.render, rnd.moves
        seen = say(f"donation_seen_{m['outcome']}", **m["deed"])
        situation = say("donation_witness", donor=d, recipient=r, seen=seen, **rnd.units(loop.roles))
        rnd.gossips[r] = await loop.gossip(r, d, rnd.t, situation, m["cooperated"])

    def columns(self, loop: RunLoop, rnd: Round) -> dict[str, Any]:
        g = rnd.gossips.get(rnd.second)
        cost, benefit = -rnd.rewards[0], rnd.rewards[1]
        return {
            "first_action": rnd.moves["action"], "cost": cost, "benefit": benefit,
            "donation_ratio": cost / rnd.res[0] if rnd.res[0] > 0 else None,
            "first_reward": rnd.rewards[0], "second_reward": rnd.rewards[1],
            "first_action_justification": rnd.moves["justification"],
            "second_gossip_justification": g.justification if g is not None and g.ok else None,
            **loop.gossip_columns(g, "second_"),
        }

    def remember(self, loop: RunLoop, rnd: Round) -> None:
        d, r, say, m = rnd.first, rnd.second, loop.prompts.render, rnd.moves
        g = rnd.gossips.get(r)
        units = rnd.units(loop.roles)
        deed = say(f"donation_deed_{m['outcome']}", **m["deed"])
        loop.remember(
            d, say("donation_memory_donor", round=rnd.t, recipient=r, deed=deed, **units) + loop.post("post_theirs_then", g, other=r),
            m["justification"],
        )
        their = say(f"donation_their_{m['outcome']}", **m["deed"])
        loop.remember(
            r, say("donation_memory_recipient", round=rnd.t, donor=d, their=their, **units) + loop.post("post_mine_then", g),
            g.justification if g is not None and g.ok else "",
        )

    def record(self, loop: RunLoop, rnd: Round) -> None:
        d, r, t, coop = rnd.first, rnd.second, rnd.t, rnd.moves["cooperated"]
        loop.records.events.append(AgentEvent(d, t, "donor", r, rnd.rewards[0], float(coop), 1 if coop else -1))
        loop.records.events.append(AgentEvent(r, t, "recipient", d, rnd.rewards[1]))


ROUNDS = DonationRounds()
"""The part :func:`~.loop.play_rounds` plays donation-game rounds with."""
