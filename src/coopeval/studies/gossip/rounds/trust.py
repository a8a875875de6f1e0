"""Trust (investment) game rounds (docs/protocol/gossip.md#testbeds): the investor sends I, the responder returns R of
the multiplied amount, then both publish an assessment of the other (investor first); the log
takes both after both are written, and resources carry over. With no investment the responder
has nothing to decide (R = 0, no call). The responder's memory never quotes the investor's
private justification."""

from __future__ import annotations

from typing import Any

from coopeval.studies.gossip.formats import investor_format, responder_format
from coopeval.studies.gossip.memory import fmt_units
from coopeval.studies.gossip.metrics import AgentEvent
from coopeval.studies.gossip.rounds.loop import Round, RunLoop, justification_of
from coopeval.studies.gossip.testbeds import TrustGame


class TrustRounds:
    """The trust game's part of a round: ``first`` is the investor, ``second`` the responder."""

    async def actions(self, loop: RunLoop, rnd: Round) -> dict[str, Any] | None:
        """The investment, then (if any) the return; a failed return keeps the amount invested."""
        game = loop.testbed
        assert isinstance(game, TrustGame)
        inv, resp, t, say, m = rnd.first, rnd.second, rnd.t, loop.prompts.render, game.multiplier
        budget = max(rnd.res[0], 0.0)
        situation = say("trust_investor_situation", investor=inv, responder=resp, **rnd.units(loop.roles))
        choice = say("trust_investor_choice", responder=resp, max_invest=fmt_units(budget), multiplier=fmt_units(m))
        out_i = await loop.act(inv, resp, t, situation, choice, investor_format(budget), "investor", True, loop.bot_state(inv, resp, "investor"))
        if not out_i.ok or out_i.parsed is None:
            return {}
        invest = float(out_i.parsed["investor_action"])
        received = game.received(invest)
        back = 0.0
        resp_just: str | None = None
        if received > 0:
            situation = say(
                "trust_responder_situation", investor=inv, responder=resp, invest=fmt_units(invest), received=fmt_units(received),
                **rnd.units(loop.roles),
            )
            choice = say("trust_responder_choice", investor=inv, received=fmt_units(received))
            state = loop.bot_state(resp, inv, "responder", received=received)
            out_r = await loop.act(resp, inv, t, situation, choice, responder_format(received), "responder", True, state)
            if not out_r.ok or out_r.parsed is None:
                return {"first_amount": invest}
            back = float(out_r.parsed["responder_action"])
            resp_just = out_r.parsed["justification"]
        rnd.moves = {"invest": invest, "received": received, "back": back, "justifications": (out_i.parsed["justification"], resp_just)}
        rnd.rewards = game.payoff(invest, back)
        return None

    @staticmethod
    def _amounts(rnd: Round) -> dict[str, str]:
        m = rnd.moves
        return {"investor": rnd.first, "responder": rnd.second, "invest": fmt_units(m["invest"]),
                "received": fmt_units(m["received"]), "back": fmt_units(m["back"])}

    async def assessments(self, loop: RunLoop, rnd: Round) -> None:
        """The investor assesses the responder (well if R ≥ I), then the responder the investor
        (well if I > 0)."""
        inv, resp, say, m = rnd.first, rnd.second, loop.prompts.render, rnd.moves
        amounts = self._amounts(rnd)
        situation = say("trust_investor_witness", reward=fmt_units(rnd.rewards[0]), **amounts)
        rnd.gossips[inv] = await loop.gossip(inv, resp, rnd.t, situation, m["back"] >= m["invest"])
        situation = say("trust_responder_witness", reward=fmt_units(rnd.rewards[1]), investor_units=fmt_units(rnd.res[0]), **amounts)
        rnd.gossips[resp] = await loop.gossip(resp, inv, rnd.t, situation, m["invest"] > 0)

    def columns(self, loop: RunLoop, rnd: Round) -> dict[str, Any]:
        m, res = rnd.moves, rnd.res
        g_inv, g_resp = rnd.gossips.get(rnd.first), rnd.gossips.get(rnd.second)
        return {
            "first_amount": m["invest"], "second_amount": m["back"], "cost": m["invest"], "benefit": m["received"],
            "donation_ratio": m["invest"] / res[0] if res[0] > 0 else None,
            "first_reward": rnd.rewards[0], "second_reward": rnd.rewards[1],
            "first_action_justification": m["justifications"][0],
            "second_action_justification": m["justifications"][1],
            "second_gossip_justification": justification_of(g_resp),
            "first_gossip_justification": justification_of(g_inv),
            **loop.gossip_columns(g_resp, "second_"),
            **loop.gossip_columns(g_inv, "first_"),
        }

    def remember(self, loop: RunLoop, rnd: Round) -> None:
        inv, resp, m = rnd.first, rnd.second, rnd.moves
        amounts = {k: v for k, v in self._amounts(rnd).items() if k not in ("investor", "responder")}
        for me, other, role, my_r, own_just in (
            (inv, resp, "investor", rnd.rewards[0], m["justifications"][0]), (resp, inv, "responder", rnd.rewards[1], m["justifications"][1] or "")
        ):
            text = loop.prompts.render(
                f"trust_memory_{role}", round=rnd.t, other=other, reward=fmt_units(my_r), **amounts, **rnd.units(loop.roles)
            )
            mine_g, theirs_g = rnd.gossips.get(me), rnd.gossips.get(other)
            text += loop.post("post_mine", mine_g) + loop.post("post_theirs_about_me", theirs_g, other=other)
            loop.remember(me, text, own_just, mine_g)

    def record(self, loop: RunLoop, rnd: Round) -> None:
        inv, resp, t = rnd.first, rnd.second, rnd.t
        share = rnd.moves["invest"] / rnd.res[0] if rnd.res[0] > 0 else None
        loop.records.events.append(AgentEvent(inv, t, "investor", resp, rnd.rewards[0], share))
        loop.records.events.append(AgentEvent(resp, t, "responder", inv, rnd.rewards[1]))


ROUNDS = TrustRounds()
"""The part :func:`~.loop.play_rounds` plays trust-game rounds with."""
