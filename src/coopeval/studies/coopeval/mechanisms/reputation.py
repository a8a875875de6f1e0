"""Reputation− (``ReputationFirstOrder``) and Reputation+ (``Reputation``).

CoopEval (arXiv 2604.15267) docs/protocol/answers.md#prompt-content and docs/protocol/mechanisms.md#reputation, docs/protocol/tournament.md#delta-weighted-score, #matchups-and-call-counts, docs/protocol/evaluation.md#mean. A population holds every agent
in every seat; a seated agent keeps its seat for the whole tournament and has a stable
anonymous id ``Agent #u`` numbered by config order, then seat. In each of exactly T rounds
every seat group is shuffled independently and uniformly (named stream ``"matching"`` of the
round) and the i-th members of the groups form match i, so everybody plays every round.
Matches of a round are played concurrently; rounds are sequential and the history is updated
after each round.

The mechanism section shows the current co-players by anonymous id and, for the reader and
each co-player, the tree of their matches in the global window [r − k, r − 1], most recent
first: round, every player's label, sampled action token and points. The seat each action was
played in is added for games not flagged symmetric (the Trust Game; also Matching Pennies,
whose seats differ in our per-seat default, docs/protocol/games.md#matching-pennies). Under a match at depth d, if
d + 1 < ``max_recursion_depth``, the history of each other player of that match *before* that
match (still inside the window) is nested. Depth 1 (Reputation−) shows only the subject's own
matches; depth 3 (Reputation+) three levels.

Records: one ``matchups`` row per seated agent (``matchup_id`` = ``"<agent>#P<seat>"``,
``agents`` = [agent]) and one ``decisions`` row per (seated agent, round) with ``match_id`` =
``"r<round>m<i>"``. Scores are the δ-weighted averages (docs/protocol/tournament.md#delta-weighted-score) of each seated agent's T
per-round payoffs, although partners change every round; a type's Mean is the mean over its
seated agents. There is no metagame (no Fitness, no deviation rating).

Failure policy (our choice; docs/protocol/answers.md#re-asks says a failed decision ends only its own matchup): when a
decision fails after all re-asks, its match of that round gets no sampled actions and no
points and is not part of anybody's history. Every seated agent of that match is *withdrawn*:
its history stops, it is not matched again, and its ``matchups`` row is ``failed`` (its score
would lack a round). Withdrawing the whole match keeps all seat groups equally large, so the
remaining agents keep being matched every round and finish with complete scores. Withdrawn
agents' earlier matches stay visible in the others' histories.

Scripted bots read ``state["history"]`` as rounds of action indices in seat order (see
:mod:`coopeval.agents.bots`). Here that history is shaped for the *current* match: one row per
round of the window [r − k, r − 1], oldest first, whose entry at seat s is the action played
in that round by the agent now seated at s (the reader's own action at its own seat; every
active agent played every past round, in its fixed seat). Tit-for-tat thus answers the current
co-players' last known actions and grim-trigger punishes a co-player that defected anywhere in
the window: the bots see no more than the prompt shows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from coopeval.agents.progress import Progress
from coopeval.agents.protocol import Agent
from coopeval.agents.seats import seat_agent
from coopeval.core.rng import rng_for
from coopeval.studies.coopeval.mechanisms.base import (
    CellContext,
    CellRecords,
    DiscountedRounds,
    action_prompt,
    bot_state,
    continuation_percent,
    others_description,
    play_base_round,
)
from coopeval.studies.coopeval.mechanisms.catalog import MechanismInfo


@dataclass(frozen=True)
class SeatedAgent:
    """One member of the reputation population (docs/protocol/mechanisms.md#reputation item 1).

    ``uid`` is the 1-based anonymous id, ``seat`` 0-based; ``name`` is ``"<agent>#P<seat>"``.
    """

    uid: int
    agent: Agent
    seat: int

    @property
    def name(self) -> str:
        """The seated name ``"<agent>#P<seat>"`` (docs/protocol/games.md#roster), the ``matchup_id`` of its rows."""
        return f"{self.agent.name}#P{self.seat + 1}"

    @property
    def label(self) -> str:
        """The anonymous id shown to other players, ``"Agent #<uid>"``."""
        return f"Agent #{self.uid}"


@dataclass(frozen=True)
class Match:
    """A played match: round, index in the round (1-based), members' uids in seat order,
    sampled actions and points in seat order."""

    round: int
    index: int
    members: tuple[int, ...]
    actions: tuple[int, ...]
    points: tuple[float, ...]


def build_population(agents: Sequence[Agent], n_players: int) -> list[SeatedAgent]:
    """Every agent in every seat, ids by config order then seat (docs/protocol/mechanisms.md#reputation item 1); each seated
    agent is its own instance (:func:`coopeval.agents.seats.seat_agent`)."""
    return [
        SeatedAgent(uid=i * n_players + seat + 1, agent=seat_agent(agent), seat=seat)
        for i, agent in enumerate(agents)
        for seat in range(n_players)
    ]


def draw_matching(
    ctx: CellContext, mechanism: str, groups: Sequence[Sequence[int]], round_: int
) -> list[tuple[int, ...]]:
    """The matches of one round (docs/protocol/mechanisms.md#reputation item 2).

    ``groups[s]`` lists the active uids of seat s (equal lengths). Each group is permuted
    independently and uniformly, in seat order, from the named stream
    ``(game, mechanism, replicate, "matching", round)``; match i takes the i-th member of every
    permuted group. Returns the matches as uid tuples in seat order.
    """
    rng = rng_for(ctx.seed, ctx.game.key, mechanism, ctx.replicate, "matching", round_)
    shuffled = [[group[j] for j in rng.permutation(len(group))] for group in groups]
    sizes = {len(g) for g in shuffled}
    if len(sizes) > 1:
        raise AssertionError(f"seat groups of unequal size {sorted(sizes)} in round {round_}")
    return list(zip(*shuffled, strict=True))


def format_points(ctx: CellContext, value: float) -> str:
    """Points as shown in prompts: ``3``, ``0.5``, with 'point'/'points' (templates
    ``points_one`` / ``points_many``)."""
    text = f"{value:g}"
    return ctx.prompts.render("points_one" if text in ("1", "-1") else "points_many", n=text)


class HistoryView:
    """Renders the recursive reputation history for one reader (docs/protocol/mechanisms.md#reputation item 5)."""

    def __init__(
        self,
        ctx: CellContext,
        population: Sequence[SeatedAgent],
        matches_of: dict[int, list[Match]],
        round_: int,
        reader: int,
        lookup_depth: int,
        max_depth: int,
    ) -> None:
        self.ctx = ctx
        self.by_uid = {p.uid: p for p in population}
        self.matches_of = matches_of
        self.round = round_
        self.reader = reader
        self.window_start = max(1, round_ - lookup_depth)
        self.max_depth = max_depth
        self.show_seats = not ctx.game.symmetric

    def label(self, uid: int) -> str:
        """``"you"`` for the reader, else the anonymous id."""
        return self.ctx.prompts.render("reputation_you") if uid == self.reader else self.agent_label(uid)

    def agent_label(self, uid: int) -> str:
        """The anonymous id of ``uid`` as the prompts show it (``Agent #4``)."""
        return self.ctx.prompts.render("reputation_agent", uid=self.by_uid[uid].uid)

    def owner(self, uid: int) -> str:
        """Possessive form: ``"Your"`` / ``"Agent #4's"``."""
        if uid == self.reader:
            return self.ctx.prompts.render("reputation_your")
        return self.ctx.prompts.render("reputation_owner", label=self.agent_label(uid))

    def move(self, match: Match, seat: int) -> str:
        """One player's part of a match entry: label, action token, [seat,] points."""
        seat_note = self.ctx.prompts.render("reputation_seat_note", seat=seat + 1) if self.show_seats else ""
        return self.ctx.prompts.render(
            "reputation_move",
            player=self.label(match.members[seat]),
            token=self.ctx.game.tokens[match.actions[seat]],
            seat_note=seat_note,
            points=format_points(self.ctx, match.points[seat]),
        )

    def entry(self, match: Match, subject: int) -> str:
        """One match line, subject first, then the other players in seat order."""
        own = match.members.index(subject)
        order = [own] + [s for s in range(len(match.members)) if s != own]
        return self.ctx.prompts.render(
            "reputation_match",
            round=match.round,
            moves="; ".join(self.move(match, s) for s in order),
        )

    def tree(self, subject: int, before: int, depth: int, indent: str) -> list[str]:
        """Lines of ``subject``'s matches in [window_start, before), most recent first.

        Under each entry at ``depth`` d, if d + 1 < ``max_depth``, every other player's matches
        before that entry's round are nested one level deeper (an empty nested history is left
        out; the round numbers show where the window starts).
        """
        lines: list[str] = []
        matches = [
            m for m in self.matches_of.get(subject, []) if self.window_start <= m.round < before
        ]
        for match in sorted(matches, key=lambda m: m.round, reverse=True):
            lines.append(f"{indent}- {self.entry(match, subject)}")
            if depth + 1 < self.max_depth:
                for other in match.members:
                    if other == subject:
                        continue
                    nested = self.tree(other, match.round, depth + 1, indent + "    ")
                    if nested:
                        owner = self.owner(other)
                        header = self.ctx.prompts.render("reputation_earlier", owner=owner)
                        lines.append(f"{indent}  {header}")
                        lines.extend(nested)
        return lines

    def block(self, subject: int) -> str:
        """The top-level history of one subject: a tree or the no-history statement."""
        lines = self.tree(subject, self.round, 0, "")
        if not lines:
            return self.ctx.prompts.render("reputation_no_history", owner=self.owner(subject))
        header = self.ctx.prompts.render("reputation_history_header", owner=self.owner(subject))
        return "\n".join([header, *lines])


class ReputationFirstOrder(DiscountedRounds):
    """Reputation− (CoopEval docs/protocol/answers.md#prompt-content; docs/protocol/mechanisms.md#reputation): random re-matching with first-order histories.

    Parameters (``ctx.params``): ``num_rounds`` T (15), ``discount`` δ (0.8; shown as the
    continuation probability and used for the δ-weighted score), ``lookup_depth`` k (3),
    ``max_recursion_depth`` (1 here, 3 for :class:`Reputation`). See the module docstring for
    the failure policy and the bots' view of the history.
    """

    templates: ClassVar[tuple[str, ...]] = (
        "reputation", "reputation_no_history", "reputation_history_header", "reputation_match", "reputation_move",
        "reputation_agent", "reputation_you", "reputation_your", "reputation_owner", "reputation_seat_note",
        "reputation_co_player", "points_one", "points_many",
    )

    @classmethod
    def prompt_templates(cls, info: MechanismInfo, params: Mapping[str, Any]) -> frozenset[str]:
        """Also the nested-history templates when ``max_recursion_depth`` > 1."""
        nested = int(info.parse_params(params).max_recursion_depth) > 1
        return super().prompt_templates(info, params) | ({"reputation_nesting", "reputation_earlier"} if nested else set())

    def lookup_depth(self, ctx: CellContext) -> int:
        return int(self.params(ctx).lookup_depth)

    def recursion_depth(self, ctx: CellContext) -> int:
        return int(self.params(ctx).max_recursion_depth)

    def prompt(
        self,
        ctx: CellContext,
        population: Sequence[SeatedAgent],
        matches_of: dict[int, list[Match]],
        round_: int,
        members: Sequence[int],
        seat: int,
    ) -> str:
        """The action prompt body of the match member at 0-based ``seat``: the game, the
        mechanism section (docs/protocol/mechanisms.md#reputation items 4–5) and the action
        instruction (without the style instruction; docs/protocol/answers.md#prompt-content)."""
        reader = members[seat]
        depth = self.recursion_depth(ctx)
        k = self.lookup_depth(ctx)
        view = HistoryView(ctx, population, matches_of, round_, reader, k, depth)
        co_players = ", ".join(
            ctx.prompts.render("reputation_co_player", label=view.agent_label(u), seat=s + 1) for s, u in enumerate(members) if u != reader
        )
        blocks = [view.block(reader)] + [view.block(u) for u in members if u != reader]
        truncate = bool(ctx.compat.get("truncate_delta_percent", False))
        section = ctx.prompts.render(
            "reputation",
            partners=others_description(ctx),
            continue_percent=continuation_percent(self.discount(ctx), truncate),
            rounds_played=round_ - 1,
            co_players=co_players,
            lookup_depth=k,
            nesting_note=ctx.prompts.render("reputation_nesting") if depth > 1 else "",
            histories="\n\n".join(blocks),
        )
        return action_prompt(ctx, seat, [section], ctx.game.tokens)

    def bot_history(
        self, ctx: CellContext, matches_of: dict[int, list[Match]], round_: int, members: Sequence[int]
    ) -> list[list[int]]:
        """The bots' view (module docstring): rounds of the window [r − k, r − 1], oldest first;
        entry s of a round is the action ``members[s]`` played that round, in its fixed seat s."""
        start = max(1, round_ - self.lookup_depth(ctx))
        rows = []
        for past in range(start, round_):
            row = []
            for seat, uid in enumerate(members):
                match = next(m for m in matches_of[uid] if m.round == past)
                assert match.members[seat] == uid  # seats are fixed for the whole tournament
                row.append(match.actions[seat])
            rows.append(row)
        return rows

    async def run(self, ctx: CellContext) -> CellRecords:
        """Play the whole population game of one cell."""
        game = ctx.game
        n = game.n_players
        records = CellRecords()
        population = build_population(ctx.agents, n)
        by_uid = {p.uid: p for p in population}
        matches_of: dict[int, list[Match]] = {p.uid: [] for p in population}
        active = {p.uid for p in population}
        n_rounds = self.num_rounds(ctx)
        label = ctx.label or f"{self.name}/{game.name}"
        progress = Progress(label, n_rounds * len(ctx.agents), ctx.maker, unit="matches")

        async def play_match(round_: int, index: int, members: tuple[int, ...]) -> Match | None:
            seated = [by_uid[u].agent for u in members]
            history = self.bot_history(ctx, matches_of, round_, members)
            played = await play_base_round(
                ctx,
                self.name,
                seated,
                round_,
                [self.prompt(ctx, population, matches_of, round_, members, seat) for seat in range(n)],
                [bot_state(ctx, seat, history, round=round_) for seat in range(n)],
                records,
                [by_uid[uid].name for uid in members],
                match_id=f"r{round_}m{index}",
            )
            progress.step(failed=played is None)
            if played is None:
                return None
            actions, payoffs = played
            return Match(round_, index, tuple(members), tuple(actions), tuple(payoffs))

        for round_ in range(1, n_rounds + 1):
            groups = [
                [p.uid for p in population if p.seat == s and p.uid in active] for s in range(n)
            ]
            matches = draw_matching(ctx, self.name, groups, round_)
            played = await asyncio.gather(
                *(play_match(round_, i, m) for i, m in enumerate(matches, start=1))
            )
            for _ in range(len(ctx.agents) - len(matches)):
                progress.step(failed=True)  # slots of withdrawn agents
            # The history changes only after the whole round (docs/protocol/mechanisms.md#reputation item 3).
            for members, match in zip(matches, played, strict=True):
                if match is None:
                    active.difference_update(members)  # withdraw the failed match (see module doc)
                    continue
                for uid in members:
                    matches_of[uid].append(match)
        for p in population:
            records.matchups.append(
                {
                    "matchup_id": p.name,
                    "agents": [p.agent.name],
                    "n_rounds": n_rounds,
                    "discount": self.discount(ctx),
                    "status": "complete" if p.uid in active else "failed",
                }
            )
        return records


class Reputation(ReputationFirstOrder):
    """Reputation+ (CoopEval docs/protocol/answers.md#prompt-content; docs/protocol/mechanisms.md#reputation): like :class:`ReputationFirstOrder` with nested
    histories of the opponents' earlier matches, ``max_recursion_depth`` 3 by default."""

