"""Prisoner's dilemma rounds (docs/protocol/gossip.md#testbeds): two simultaneous actions, then each player publishes an
assessment of the other; both messages enter the log after both are written."""

from __future__ import annotations

from typing import Any

from coopeval.studies.gossip.formats import PD_ACTION
from coopeval.studies.gossip.memory import fmt_units
from coopeval.studies.gossip.metrics import AgentEvent
from coopeval.studies.gossip.rounds.loop import Round, RunLoop, justification_of
from coopeval.studies.gossip.testbeds import PrisonersDilemma


class PrisonersDilemmaRounds:
    """The PD's part of a round: ``first`` and ``second`` are players 1 and 2."""

    async def actions(self, loop: RunLoop, rnd: Round) -> dict[str, Any] | None:
        """Both players' choices (each asked even if the other failed); the PD payoffs."""
        game = loop.testbed
        assert isinstance(game, PrisonersDilemma)
        a, b, say = rnd.first, rnd.second, loop.prompts.render
        parsed: dict[str, dict[str, Any]] = {}
        for me, other, mine, theirs in ((a, b, rnd.res[0], rnd.res[1]), (b, a, rnd.res[1], rnd.res[0])):
            situation = say("pd_situation", me=me, other=other, mine=fmt_units(mine), theirs=fmt_units(theirs))
            choice = say("pd_choice", other=other, c=fmt_units(game.c), b=fmt_units(game.b))
            out = await loop.act(me, other, rnd.t, situation, choice, PD_ACTION, "player", True, loop.bot_state(me, other, "player"))
            if out.ok and out.parsed is not None:
                parsed[me] = out.parsed
        if len(parsed) < 2:
            return {}
        rnd.moves = {name: {"action": p["player_action"], "justification": p["justification"]} for name, p in parsed.items()}
        rnd.rewards = game.payoff(rnd.moves[a]["action"], rnd.moves[b]["action"])
        return None

    async def assessments(self, loop: RunLoop, rnd: Round) -> None:
        """Player 2 assesses player 1, then player 1 assesses player 2."""
        a, b, m = rnd.first, rnd.second, rnd.moves
        for me, other, my_r in ((b, a, rnd.rewards[1]), (a, b, rnd.rewards[0])):
            situation = loop.prompts.render(
                "pd_witness", me=me, other=other, my_action=m[me]["action"], their_action=m[other]["action"], reward=fmt_units(my_r)
            )
            rnd.gossips[me] = await loop.gossip(me, other, rnd.t, situation, m[other]["action"] == "C")

    def columns(self, loop: RunLoop, rnd: Round) -> dict[str, Any]:
        game = loop.testbed
        assert isinstance(game, PrisonersDilemma)
        a, b = rnd.first, rnd.second
        act_a, res = rnd.moves[a]["action"], rnd.res
        cost, benefit = game.cost_benefit(act_a == "C")
        ga, gb = rnd.gossips.get(a), rnd.gossips.get(b)
        return {
            "first_action": act_a, "second_action": rnd.moves[b]["action"], "cost": cost, "benefit": benefit,
            "donation_ratio": cost / res[0] if res[0] > 0 else None,
            "first_reward": rnd.rewards[0], "second_reward": rnd.rewards[1],
            "first_action_justification": rnd.moves[a]["justification"],
            "second_action_justification": rnd.moves[b]["justification"],
            "second_gossip_justification": justification_of(gb),
            "first_gossip_justification": justification_of(ga),
            **loop.gossip_columns(gb, "second_"),
            **loop.gossip_columns(ga, "first_"),
        }

    def remember(self, loop: RunLoop, rnd: Round) -> None:
        a, b, m, res = rnd.first, rnd.second, rnd.moves, rnd.res
        for me, other, my_r, mine, theirs in ((a, b, rnd.rewards[0], res[0], res[1]), (b, a, rnd.rewards[1], res[1], res[0])):
            text = loop.prompts.render(
                "pd_memory", round=rnd.t, other=other, mine=fmt_units(mine), theirs=fmt_units(theirs),
                my_action=m[me]["action"], their_action=m[other]["action"], reward=fmt_units(my_r),
            )
            mine_g, theirs_g = rnd.gossips.get(me), rnd.gossips.get(other)
            text += loop.post("post_mine", mine_g) + loop.post("post_theirs_about_me", theirs_g, other=other)
            loop.remember(me, text, m[me]["justification"], mine_g)

    def record(self, loop: RunLoop, rnd: Round) -> None:
        a, b, t = rnd.first, rnd.second, rnd.t
        act_a, act_b = rnd.moves[a]["action"], rnd.moves[b]["action"]
        loop.records.events.append(AgentEvent(a, t, "player", b, rnd.rewards[0], float(act_a == "C"), 1 if act_a == "C" else -1))
        loop.records.events.append(AgentEvent(b, t, "player", a, rnd.rewards[1], float(act_b == "C"), 1 if act_b == "C" else -1))


ROUNDS = PrisonersDilemmaRounds()
"""The part :func:`~.loop.play_rounds` plays PD rounds with."""
