"""Market rounds (docs/protocol/gossip.md#testbeds): simultaneous seller and buyer choices; only the buyer publishes an
assessment of the seller, with the tone in the log; the buyer's gossip justification is stored."""

from __future__ import annotations

from typing import Any

from coopeval.studies.gossip.formats import BUYER, SELLER
from coopeval.studies.gossip.memory import fmt_units
from coopeval.studies.gossip.metrics import AgentEvent
from coopeval.studies.gossip.rounds.loop import Round, RunLoop, justification_of
from coopeval.studies.gossip.testbeds import Market


class MarketRounds:
    """The market's part of a round: ``first`` is the seller, ``second`` the buyer."""

    async def actions(self, loop: RunLoop, rnd: Round) -> dict[str, Any] | None:
        """The seller's quality and the buyer's choice (each asked even if the other failed)."""
        game = loop.testbed
        assert isinstance(game, Market)
        s, b, t, say = rnd.first, rnd.second, rnd.t, loop.prompts.render
        situation = say("market_seller_situation", seller=s, buyer=b)
        choice = say("market_seller_choice", cost_h=fmt_units(game.cost_h), cost_l=fmt_units(game.cost_l))
        out_s = await loop.act(s, b, t, situation, choice, SELLER, "seller", True, loop.bot_state(s, b, "seller"))
        situation = say("market_buyer_situation", seller=s, buyer=b)
        choice = say("market_buyer_choice", price_c=fmt_units(game.price_c), price_s=fmt_units(game.price_s))
        out_b = await loop.act(b, s, t, situation, choice, BUYER, "buyer", False, loop.bot_state(b, s, "buyer"))
        if not (out_s.ok and out_b.ok) or out_s.parsed is None or out_b.parsed is None:
            return {}
        q, c = out_s.parsed["seller_action"], out_b.parsed["buyer_action"]
        rnd.moves = {"quality": q, "choice": c, "justifications": (out_s.parsed["justification"], out_b.parsed["justification"])}
        rnd.rewards = game.payoff(q, c)
        return None

    async def assessments(self, loop: RunLoop, rnd: Round) -> None:
        """The buyer's assessment of the seller (well if the quality was high)."""
        s, b, m = rnd.first, rnd.second, rnd.moves
        situation = loop.prompts.render(
            "market_witness", seller=s, buyer=b, quality=m["quality"], choice=m["choice"], reward=fmt_units(rnd.rewards[1])
        )
        rnd.gossips[b] = await loop.gossip(b, s, rnd.t, situation, m["quality"] == "H")

    def columns(self, loop: RunLoop, rnd: Round) -> dict[str, Any]:
        m, g = rnd.moves, rnd.gossips.get(rnd.second)
        return {
            "first_action": m["quality"], "second_action": m["choice"], "first_reward": rnd.rewards[0], "second_reward": rnd.rewards[1],
            "first_action_justification": m["justifications"][0],
            "second_action_justification": m["justifications"][1],
            "second_gossip_justification": justification_of(g),
            **loop.gossip_columns(g, "second_"),
        }

    def remember(self, loop: RunLoop, rnd: Round) -> None:
        s, b, m, say = rnd.first, rnd.second, rnd.moves, loop.prompts.render
        g = rnd.gossips.get(b)
        deal = {"seller": s, "buyer": b, "quality": m["quality"], "choice": m["choice"]}
        seller_text = say("market_memory_seller", round=rnd.t, reward=fmt_units(rnd.rewards[0]), **deal) + loop.post("post_theirs", g, other=b)
        loop.remember(s, seller_text, m["justifications"][0])
        buyer_text = say("market_memory_buyer", round=rnd.t, reward=fmt_units(rnd.rewards[1]), **deal) + loop.post("post_mine", g)
        loop.remember(b, buyer_text, m["justifications"][1], g)

    def record(self, loop: RunLoop, rnd: Round) -> None:
        s, b, t, q, c = rnd.first, rnd.second, rnd.t, rnd.moves["quality"], rnd.moves["choice"]
        loop.records.market.append((q, c, rnd.rewards[0], rnd.rewards[1]))
        loop.records.events.append(AgentEvent(s, t, "seller", b, rnd.rewards[0], float(q == "H"), 1 if q == "H" else -1))
        loop.records.events.append(AgentEvent(b, t, "buyer", s, rnd.rewards[1], float(c == "c")))


ROUNDS = MarketRounds()
"""The part :func:`~.loop.play_rounds` plays market rounds with."""
