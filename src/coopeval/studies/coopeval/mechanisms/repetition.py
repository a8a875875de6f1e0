"""NoMechanism and Repetition: matchups over every seat-ordered tuple of agents.

CoopEval (arXiv 2604.15267) docs/protocol/answers.md and docs/protocol/mechanisms.md#no-mechanism, #repetition, docs/protocol/tournament.md#matchups-and-call-counts: the matchups are the ordered Cartesian
product, with replacement, of the roster over the seats (self-play included), each played once
per replicate. Repetition plays exactly T rounds with the same partners, tells agents the
continuation probability δ and shows the last k rounds (most recent first); only sampled
action tokens are shown. Seats decide concurrently within a round; rounds are sequential.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from typing import ClassVar

from coopeval.agents.progress import Progress
from coopeval.agents.protocol import Agent
from coopeval.agents.seats import seat_agent
from coopeval.studies.coopeval.mechanisms.base import (
    CellContext,
    CellRecords,
    DiscountedRounds,
    Mechanism,
    action_prompt,
    bot_state,
    continuation_percent,
    matchup_id,
    play_base_round,
)
from coopeval.studies.coopeval.rosters import rosters


class RepeatedPlay(Mechanism):
    """Shared matchup loop; subclasses set ``num_rounds`` and the mechanism section."""

    def num_rounds(self, ctx: CellContext) -> int:
        return 1

    def discount(self, ctx: CellContext) -> float:
        return 1.0

    def section(self, ctx: CellContext, seat: int, round_: int, history: Sequence[Sequence[int]]) -> str:
        """The mechanism section for ``seat`` in 1-based ``round_`` ('' for none)."""
        return ""

    def shown_rounds(self, ctx: CellContext, history: Sequence[Sequence[int]]) -> list[tuple[int, Sequence[int]]]:
        """The past rounds the prompt shows, as (1-based round, actions in seat order), oldest
        first. Both the prompt and the scripted bots' ``state["history"]`` come from it, so a
        bot decides only from what its seat is shown (issue 13 kind 12a). None here."""
        return []

    def matchups(self, ctx: CellContext) -> list[tuple[Agent, ...]]:
        """Every seat-ordered tuple of roster agents (S^N matchups), or the seat-balanced sample
        of at most ``ctx.max_matchups`` of them (:mod:`coopeval.studies.coopeval.rosters`; one
        sample per game, group size and replicate, shared by the mechanisms), each seat its own
        instance (:func:`coopeval.agents.seats.seat_agent`)."""
        game = ctx.game
        chosen = rosters(len(ctx.agents), game.n_players, ctx.max_matchups, ctx.seed, game.key, game.n_players, ctx.replicate)
        return [tuple(seat_agent(ctx.agents[i]) for i in roster) for roster in chosen]

    async def run(self, ctx: CellContext) -> CellRecords:
        records = CellRecords()
        matchups = self.matchups(ctx)
        progress = Progress(ctx.label or f"{self.name}/{ctx.game.name}", len(matchups), ctx.maker)

        async def one(seated: tuple[Agent, ...]) -> None:
            status = await self.play_matchup(ctx, seated, records)
            progress.step(failed=status != "complete")

        await asyncio.gather(*(one(s) for s in matchups))
        return records

    async def play_matchup(self, ctx: CellContext, seated: tuple[Agent, ...], records: CellRecords) -> str:
        """Play one matchup, append its rows, and return its status (complete | failed)."""
        game = ctx.game
        mid = matchup_id(seated)
        tokens = game.tokens
        history: list[list[int]] = []
        status = "complete"
        n_rounds = self.num_rounds(ctx)
        for round_ in range(1, n_rounds + 1):
            played = await play_base_round(
                ctx,
                self.name,
                seated,
                round_,
                [self.prompt(ctx, seat, round_, history, tokens) for seat in range(game.n_players)],
                [
                    bot_state(ctx, seat, [a for _, a in self.shown_rounds(ctx, history)], points_so_far=self.points(ctx, seat, history))
                    for seat in range(game.n_players)
                ],
                records,
                [mid] * game.n_players,
            )
            if played is None:
                status = "failed"  # a failed decision ends only its own matchup (docs/protocol/answers.md#re-asks)
                break
            history.append(played[0])
        records.matchups.append(
            {
                "matchup_id": mid,
                "agents": [a.name for a in seated],
                "n_rounds": n_rounds,
                "discount": self.discount(ctx),
                "status": status,
            }
        )
        return status

    @staticmethod
    def points(ctx: CellContext, seat: int, history: Sequence[Sequence[int]]) -> float:
        """The seat's undiscounted base-game points over the rounds played so far (shown to a person)."""
        return math.fsum(ctx.game.payoffs(tuple(actions))[seat] for actions in history)

    def prompt(self, ctx: CellContext, seat: int, round_: int, history: Sequence[Sequence[int]], tokens: tuple[str, ...]) -> str:
        """The action prompt body (without the style instruction; docs/protocol/answers.md#prompt-content)."""
        section = self.section(ctx, seat, round_, history)
        return action_prompt(ctx, seat, [section] if section else [], tokens)


class NoMechanism(RepeatedPlay):
    """One simultaneous play per matchup, no mechanism section (docs/protocol/mechanisms.md#no-mechanism). Discount 1.0."""



class Repetition(DiscountedRounds, RepeatedPlay):
    """Repeated play with the same partners (CoopEval docs/protocol/answers.md#prompt-content; docs/protocol/mechanisms.md#repetition).

    Parameters (``ctx.params``): ``num_rounds`` T (15), ``discount`` δ (0.8; shown as the
    continuation probability and used for the δ-weighted score), ``lookup_depth`` k (3).
    Fidelity note kept from the paper: exactly T rounds are played although agents are told
    the game continues with probability δ, and the last round carries the tail weight δ^(T−1).
    """

    templates: ClassVar[tuple[str, ...]] = (
        "repetition", "history_empty", "history_header", "history_round", "history_move", "history_move_you",
        "repetition_partners_one", "repetition_partners_many", "repetition_them_one", "repetition_them_many",
    )

    def section(self, ctx: CellContext, seat: int, round_: int, history: Sequence[Sequence[int]]) -> str:
        n = ctx.game.n_players
        truncate = bool(ctx.compat.get("truncate_delta_percent", False))
        return ctx.prompts.render(
            "repetition",
            partners=ctx.prompts.render("repetition_partners_one" if n == 2 else "repetition_partners_many"),
            them=ctx.prompts.render("repetition_them_one" if n == 2 else "repetition_them_many"),
            continue_percent=continuation_percent(self.discount(ctx), truncate),
            rounds_played=round_ - 1,
            history=render_history(ctx, seat, self.shown_rounds(ctx, history)),
        )

    def shown_rounds(self, ctx: CellContext, history: Sequence[Sequence[int]]) -> list[tuple[int, Sequence[int]]]:
        """The last min(k, r−1) rounds (k = ``lookup_depth``), oldest first (docs/protocol/mechanisms.md#repetition)."""
        k = int(self.params(ctx).lookup_depth)
        return list(enumerate(history, start=1))[-k:] if k > 0 else []


def render_history(ctx: CellContext, seat: int, window: Sequence[tuple[int, Sequence[int]]]) -> str:
    """The shown rounds ``window`` (oldest first, see :meth:`Repetition.shown_rounds`), most
    recent first, reader labelled 'you' (docs/protocol/mechanisms.md#repetition)."""
    if not window:
        return ctx.prompts.render("history_empty")
    lines = [ctx.prompts.render("history_header", window=len(window))]
    for round_index, actions in reversed(window):
        played = "; ".join(
            ctx.prompts.render("history_move_you", action=a) if s == seat else ctx.prompts.render("history_move", seat=s + 1, action=a)
            for s, a in enumerate(actions)
        )
        lines.append(ctx.prompts.render("history_round", round=round_index, moves=played))
    return "\n".join(lines)
