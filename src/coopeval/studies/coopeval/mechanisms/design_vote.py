"""Design → approval vote → play: the shared protocol of Mediation and Contracting.

CoopEval (arXiv 2604.15267) docs/protocol/answers.md#parsing, #re-asks; docs/protocol/mechanisms.md#mediation, #contracting, docs/protocol/tournament.md#tournament-driver, #matchups-and-call-counts. Every seated agent (roster agent ×
seat) proposes one design per cell, before any matchup is played; the design is reused in
every matchup of that seated agent. Each matchup (every seat-ordered tuple of roster agents, as
for NoMechanism) then runs one approval vote over its N designs in seat order, selects the
winner uniformly among the most-approved options from the named stream
``rng_for(seed, game, mechanism, replicate, matchup_id, "vote_tiebreak")``, and plays one
simultaneous round under the selected design.

Failures (docs/protocol/answers.md#re-asks): a design, vote or signature that stays invalid after every re-ask is
recorded with status ``failed`` and never replaced by a default. A failed design fails every
matchup of its seated agent (no vote is asked there); a failed vote, signature or action fails
only its own matchup.

Records (see :mod:`coopeval.core.schemas`):

* ``designs``: one row per seated agent (``design`` = validated JSON, null if failed);
* ``decisions``: design rows (``round`` 0, no matchup), vote and signature rows (``round`` 0,
  ``parsed`` = the validated answer), one ``selection`` row per voted matchup (``round`` 0, no
  seat or agent; ``parsed`` = :meth:`Selection.as_json`, including Contracting's activation)
  and the action rows of round 1;
* ``votes``: one row per (voter, option) of every valid vote.

The records themselves (seated designs, selections, the tie-break) are in
:mod:`coopeval.studies.coopeval.mechanisms.selection`.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from coopeval.agents.progress import Progress
from coopeval.agents.protocol import Agent
from coopeval.agents.seats import seat_agent
from coopeval.core.prompts import number_text
from coopeval.core.rng import rng_for
from coopeval.decisions.formats import ActionDistribution, AnswerFormat, ApprovalVote
from coopeval.studies.coopeval.mechanisms.base import (
    CellContext,
    CellRecords,
    action_prompt,
    bot_state,
    decide_simultaneously,
    game_section,
    matchup_id,
    played_columns,
    position,
    provider_seed,
)
from coopeval.studies.coopeval.mechanisms.catalog import MechanismInfo
from coopeval.studies.coopeval.mechanisms.repetition import RepeatedPlay
from coopeval.studies.coopeval.mechanisms.selection import (
    Design,
    SeatedDesign,
    Selection,
    select_winner,
)


def points_text(ctx: CellContext, value: float) -> str:
    """``1 point`` / ``3 points`` / ``1.5 points`` (templates ``points_one`` / ``points_many``)."""
    number = number_text(value)  # the engine's value, never rounded (issue 13 kind 11b)
    return ctx.prompts.render("points_one" if abs(value) == 1 else "points_many", n=number)


class DesignVoteMechanism(RepeatedPlay):
    """Base class of Mediation and Contracting (docs/protocol/mechanisms.md#mediation, #contracting, docs/protocol/tournament.md#tournament-driver): designs, votes, one round.

    Subclasses set ``vote_format`` (:class:`MediatorVote` | :class:`ContractVote`) and
    implement the design format and prompts, the cooperation-enforcing design the scripted
    bots propose, and :meth:`after_vote` (the play under the selection). The design kind
    (``"mediator"`` | ``"contract"``) and the prompt prefix come from the catalog entry.
    Matchups are those of :class:`RepeatedPlay` (every seat-ordered tuple); stored discount 1.0.
    """

    vote_format: ClassVar[type[ApprovalVote]]

    @classmethod
    def prompt_templates(cls, info: MechanismInfo, params: Mapping[str, Any]) -> frozenset[str]:
        """Also ``<prefix>_rules``, ``<prefix>_design`` and ``<prefix>_vote`` (the entry's ``prompt_prefix``)."""
        return super().prompt_templates(info, params) | {"vote_option", *(f"{info.prompt_prefix}_{part}" for part in ("rules", "design", "vote"))}

    @property
    def design_kind(self) -> str:
        """``"mediator"`` or ``"contract"`` (declared in the mechanism catalog)."""
        return str(self.info.design_kind)

    # -- subclass hooks -------------------------------------------------------------------------

    def design_format(self, ctx: CellContext) -> AnswerFormat:
        """The output contract of a design decision."""
        raise NotImplementedError

    def enforcing_design(self, ctx: CellContext) -> Design:
        """The cooperation-enforcing design scripted bots propose and approve."""
        raise NotImplementedError

    def rules_text(self, ctx: CellContext) -> str:
        """The explanation of the mechanism shown in design, vote and signature prompts."""
        raise NotImplementedError

    def design_task(self, ctx: CellContext, fmt: AnswerFormat) -> str:
        """The design task and its output instruction."""
        raise NotImplementedError

    def describe_option(self, ctx: CellContext, design: Design) -> str:
        """The lines describing one design in a vote or play prompt."""
        raise NotImplementedError

    def design_hints(self, ctx: CellContext, fmt: AnswerFormat) -> dict[str, str]:
        """What each key of a design answer means, one line per key, for a person's form
        (:func:`coopeval.agents.human.context.seat_context`; never part of a prompt). Default: none."""
        return {}

    async def after_vote(
        self, ctx: CellContext, seated: tuple[Agent, ...], mid: str, selection: Selection, records: CellRecords
    ) -> str:
        """Play the matchup under ``selection``; append rows; return ``complete`` | ``failed``."""
        raise NotImplementedError

    # -- the protocol ---------------------------------------------------------------------------

    def num_rounds(self, ctx: CellContext) -> int:
        return 1

    def discount(self, ctx: CellContext) -> float:
        return 1.0

    async def run(self, ctx: CellContext) -> CellRecords:
        """Collect every design, then play every matchup (docs/protocol/tournament.md#tournament-driver)."""
        records = CellRecords()
        designs = await self.collect_designs(ctx, records)
        matchups = self.matchups(ctx)
        progress = Progress(ctx.label or f"{self.name}/{ctx.game.name}", len(matchups), ctx.maker)

        async def one(seated: tuple[Agent, ...]) -> None:
            status = await self.play_designed_matchup(ctx, seated, designs, records)
            progress.step(failed=status != "complete")

        await asyncio.gather(*(one(s) for s in matchups))
        return records

    def design_prompt(self, ctx: CellContext, seat: int, fmt: AnswerFormat) -> str:
        """Game description and seat line, the mechanism rules and the design task (docs/protocol/answers.md#prompt-content)."""
        return "\n\n".join([game_section(ctx, seat), self.rules_text(ctx), self.design_task(ctx, fmt)])

    async def collect_designs(self, ctx: CellContext, records: CellRecords) -> dict[tuple[str, int], SeatedDesign]:
        """Ask every seated agent (roster agent × seat) for its design, concurrently.

        Returns the designs keyed by (agent name, 0-based seat); rows go to ``records``.
        """
        game = ctx.game
        fmt = self.design_format(ctx)
        enforcing = self.enforcing_design(ctx)
        kind = str(fmt.kind)
        seated_agents = [(seat_agent(agent), seat) for agent in ctx.agents for seat in range(game.n_players)]
        hints = self.design_hints(ctx, fmt)  # for a person's form

        async def ask(agent: Agent, seat: int) -> SeatedDesign:
            pos = position(ctx, self.name, (agent,), 0, seat, kind)
            outcome = await ctx.maker.decide(
                agent,
                self.design_prompt(ctx, seat, fmt),
                fmt,
                pos,
                state=bot_state(ctx, seat, [], enforcing_design=enforcing, field_hints=hints),
                seed=provider_seed(ctx, pos),
            )
            return SeatedDesign(agent, seat, outcome)

        results = await asyncio.gather(*(ask(a, s) for a, s in seated_agents))
        designs: dict[tuple[str, int], SeatedDesign] = {}
        for item in results:
            designs[(item.agent.name, item.seat)] = item
            design = item.design
            records.designs.append(
                {
                    "designer": item.designer,
                    "agent": item.agent.name,
                    "seat": item.seat + 1,
                    "design_kind": self.design_kind,
                    "design": json.dumps(design) if design is not None else None,
                    "status": "ok" if item.outcome.ok else "failed",
                }
            )
            # Designs belong to no matchup: matchup_id is null (as in the reference import).
            records.record(item.outcome, item.agent, fmt, None, 0, item.seat)
        return designs

    async def play_designed_matchup(
        self,
        ctx: CellContext,
        seated: tuple[Agent, ...],
        designs: Mapping[tuple[str, int], SeatedDesign],
        records: CellRecords,
    ) -> str:
        """Vote, select and play one matchup; return its status."""
        mid = matchup_id(seated)
        options = [designs[(agent.name, seat)] for seat, agent in enumerate(seated)]
        status = "failed"
        if all(o.design is not None for o in options):  # a failed design fails the matchup
            selection = await self.vote(ctx, seated, mid, options, records)
            if selection is not None:
                status = await self.after_vote(ctx, seated, mid, selection, records)
        self.append_matchup(ctx, seated, mid, status, records)
        return status

    def append_matchup(
        self, ctx: CellContext, seated: Sequence[Agent], mid: str, status: str, records: CellRecords
    ) -> None:
        """The ``matchups`` row (one round, discount 1.0)."""
        records.matchups.append(
            {
                "matchup_id": mid,
                "agents": [a.name for a in seated],
                "n_rounds": self.num_rounds(ctx),
                "discount": self.discount(ctx),
                "status": status,
            }
        )

    def vote_prompt(self, ctx: CellContext, seat: int, options: Sequence[SeatedDesign], fmt: AnswerFormat) -> str:
        """The approval-vote prompt: the N designs in seat order, labelled by proposer seat."""
        listing = "\n\n".join(
            ctx.prompts.render("vote_option", key=key, seat=o.seat + 1, design=self.describe_option(ctx, o.design or {}))
            for key, o in zip(fmt.keys, options, strict=True)
        )
        example = "{" + ", ".join(f'"{k}": <true or false>' for k in fmt.keys) + "}"
        task = ctx.prompts.render(
            f"{self.info.prompt_prefix}_vote",
            n_options=len(options),
            options=listing,
            keys=", ".join(fmt.keys),
            example=example,
        )
        return "\n\n".join([game_section(ctx, seat), self.rules_text(ctx), task])

    async def vote(
        self,
        ctx: CellContext,
        seated: tuple[Agent, ...],
        mid: str,
        options: Sequence[SeatedDesign],
        records: CellRecords,
    ) -> Selection | None:
        """Run the approval vote of one matchup; None if any vote failed (the matchup fails)."""
        n = ctx.game.n_players
        fmt = self.vote_format.over(n)
        kind = str(fmt.kind)
        enforcing = self.enforcing_design(ctx)
        designs = [o.design for o in options]
        # each option as the vote prompt words it, for a person's form (beside its vote)
        option_texts = {
            key: ctx.prompts.render("vote_option", key=key, seat=o.seat + 1, design=self.describe_option(ctx, o.design or {}))
            for key, o in zip(fmt.keys, options, strict=True)
        }
        positions = [position(ctx, self.name, seated, 0, seat, kind) for seat in range(n)]
        outcomes = await asyncio.gather(
            *(
                ctx.maker.decide(
                    agent,
                    self.vote_prompt(ctx, seat, options, fmt),
                    fmt,
                    positions[seat],
                    state=bot_state(ctx, seat, [], enforcing_design=enforcing, options=designs, own_option=seat + 1,
                                    option_texts=option_texts),
                    seed=provider_seed(ctx, positions[seat]),
                )
                for seat, agent in enumerate(seated)
            )
        )
        for seat, (agent, outcome) in enumerate(zip(seated, outcomes, strict=True)):
            records.record(outcome, agent, fmt, mid, 0, seat)
            if outcome.ok:
                assert outcome.parsed is not None
                for option, key in enumerate(fmt.keys, start=1):
                    records.votes.append(
                        {
                            "matchup_id": mid,
                            "voter_seat": seat + 1,
                            "agent": agent.name,
                            "option": option,
                            "approve": bool(outcome.parsed[key]),
                        }
                    )
        if not all(o.ok for o in outcomes):
            return None
        approvals = [sum(bool(o.parsed[key]) for o in outcomes if o.parsed is not None) for key in fmt.keys]
        rng = rng_for(ctx.seed, ctx.game.key, self.name, ctx.replicate, mid, "vote_tiebreak")
        index, tied = select_winner(approvals, lambda k: int(rng.integers(k)))
        chosen = options[index - 1]
        assert chosen.design is not None
        return Selection(self.design_kind, index, chosen.designer, chosen.design, approvals, tied)

    def append_selection(self, ctx: CellContext, mid: str, selection: Selection, records: CellRecords) -> None:
        """The ``selections`` row of a voted matchup (schema in :mod:`coopeval.core.schemas`)."""
        payload = selection.as_json()
        records.selections.append(
            {
                "matchup_id": mid,
                "design_kind": payload.pop("design_kind"),
                "selected_index": payload.pop("selected_index"),
                "selected_designer": payload.pop("selected_designer"),
                "all_signed": payload.get("all_signed"),
                "design": json.dumps(payload.pop("design")),
                "details": json.dumps(payload),
            }
        )

    async def play_round(
        self,
        ctx: CellContext,
        seated: tuple[Agent, ...],
        mid: str,
        tokens: tuple[str, ...],
        sections: Sequence[str],
        states: Sequence[Mapping[str, Any]],
        resolve: Callable[[list[int]], tuple[list[int], list[float], list[float], list[bool]]],
        records: CellRecords,
    ) -> str:
        """Ask every seat for its distribution over ``tokens`` (round 1), sample and resolve.

        ``resolve(drawn)`` maps the sampled token indices to (resolved base actions, points,
        base points, mediated flags). Returns ``complete`` or ``failed``.
        """
        fmt = ActionDistribution(tokens)
        n = ctx.game.n_players
        positions = [position(ctx, self.name, seated, 1, seat, "action") for seat in range(n)]
        move = await decide_simultaneously(
            ctx,
            seated,
            [action_prompt(ctx, seat, [sections[seat]], tokens) for seat in range(n)],
            fmt,
            positions,
            states,
        )
        outcomes, draws = move.outcomes, move.draws
        resolved = None if move.drawn is None else resolve(move.drawn)
        for seat, (agent, outcome) in enumerate(zip(seated, outcomes, strict=True)):
            extra: dict[str, Any] = {}
            if resolved is not None and draws is not None:
                actions, points, base_points, mediated = resolved
                extra = played_columns(
                    draws[seat], actions[seat], ctx.game.tokens[actions[seat]], points[seat], base_points[seat], mediated[seat]
                )
            records.record(outcome, agent, fmt, mid, 1, seat, **extra)
        return "failed" if resolved is None else "complete"
