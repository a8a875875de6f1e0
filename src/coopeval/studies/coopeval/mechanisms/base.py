"""What every mechanism shares: the cell context, the records it produces, prompt pieces.

A mechanism (CoopEval, arXiv 2604.15267, §3; docs/protocol/mechanisms.md) is a small class with a docstring citing
the paper section, declarative traits and an async ``run(ctx)`` that plays one cell (game ×
mechanism × replicate) and returns :class:`CellRecords`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from coopeval.agents.maker import DecisionMaker, DecisionOutcome
from coopeval.agents.protocol import Agent
from coopeval.agents.recorder import record_decision
from coopeval.core.prompts import PromptLibrary
from coopeval.core.rng import rng_for, sample_action, seed_int_for
from coopeval.decisions.formats import ActionDistribution, AnswerFormat
from coopeval.games.base import Game
from coopeval.studies.coopeval.mechanisms.catalog import MechanismInfo


@dataclass
class CellContext:
    """Everything a mechanism needs to play one cell.

    ``agents`` is the roster in config order; ``params`` the mechanism's parameters;
    ``compat`` the compatibility flags (docs/protocol/reference-data.md#compatibility-flags); ``label`` a short name for progress lines;
    ``max_matchups`` the cap of a match-up mechanism's sampled rosters (None: all S^N,
    :mod:`coopeval.studies.coopeval.rosters`).
    """

    game: Game
    agents: Sequence[Agent]
    replicate: int
    seed: int
    prompts: PromptLibrary
    maker: DecisionMaker
    params: Mapping[str, Any] = field(default_factory=dict)
    compat: Mapping[str, Any] = field(default_factory=dict)
    label: str = ""
    max_matchups: int | None = None


PLAYED_COLUMNS: dict[str, Any] = {
    "draw": None,
    "action": None,
    "action_token": None,
    "points": None,
    "base_points": None,
    "mediated": None,
}
"""The ``decisions`` columns of a played move (the uniform draw, sampled action, its token,
points after and before contracts, mediation), null until the move resolves."""


def played_columns(draw: float, action: int, token: str, points: float, base_points: float, mediated: bool) -> dict[str, Any]:
    """The :data:`PLAYED_COLUMNS` of one seat's resolved move: the uniform ``draw``, the base
    ``action`` index and its ``token``, ``points`` after and ``base_points`` before contracts,
    and whether the move was ``mediated``."""
    return {"draw": draw, "action": action, "action_token": token, "points": points, "base_points": base_points, "mediated": mediated}


@dataclass
class CellRecords:
    """Rows produced by one cell, in the column layout of :mod:`coopeval.core.schemas`."""

    matchups: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    llm_calls: list[dict[str, Any]] = field(default_factory=list)
    designs: list[dict[str, Any]] = field(default_factory=list)
    votes: list[dict[str, Any]] = field(default_factory=list)
    selections: list[dict[str, Any]] = field(default_factory=list)

    def record(
        self,
        outcome: DecisionOutcome,
        agent: Agent,
        fmt: AnswerFormat,
        matchup: str | None,
        round_: int,
        seat: int,
        **played: Any,
    ) -> None:
        """Append one decision's ``decisions`` row and its attempts' ``llm_calls`` rows through
        the engine's recorder (:func:`coopeval.agents.recorder.record_decision`).

        ``matchup`` is the ``matchup_id`` (None for designs, which belong to no matchup);
        ``round_`` 1-based (0 outside rounds); ``seat`` 0-based (stored 1-based); ``played``
        the CoopEval columns of the decision row (``match_id`` and the keys of
        :data:`PLAYED_COLUMNS`, null when the move is void).
        """
        rows = record_decision(
            outcome,
            agent.name,
            str(fmt.kind),
            {"matchup_id": matchup, "round": round_, "seat": seat + 1},
            {**PLAYED_COLUMNS, **played},
        )
        self.decisions.append(rows.decision)
        self.llm_calls.extend(rows.calls)


class Mechanism:
    """Base class. An instance carries its catalog entry (``info``): the type name and every
    other trait are declared in :mod:`coopeval.studies.coopeval.mechanisms.catalog`; build
    instances with :func:`coopeval.studies.coopeval.mechanisms.get_mechanism`."""

    def __init__(self, info: MechanismInfo) -> None:
        self.info = info

    @property
    def name(self) -> str:
        """The type name (catalog entry), e.g. ``"ReputationFirstOrder"``."""
        return self.info.name

    templates: ClassVar[tuple[str, ...]] = ("game", "seat", "action_output", "action_line", "others_one", "others_many", "action_output_every")
    """The prompt templates every cell of the mechanism renders (``resources/prompts/<name>.txt``);
    subclasses add theirs, and :meth:`prompt_templates` those that depend on the parameters."""

    @classmethod
    def prompt_templates(cls, info: MechanismInfo, params: Mapping[str, Any]) -> frozenset[str]:
        """The templates a cell of mechanism ``info`` with parameters ``params`` can render (its cell id
        hashes exactly these, and the cell plays with a library restricted to them)."""
        return frozenset(name for klass in cls.__mro__ for name in vars(klass).get("templates", ()))

    def params(self, ctx: CellContext) -> Any:
        """The cell's parameters as this mechanism's parameter dataclass (catalog defaults filled in)."""
        return self.info.parse_params(ctx.params)

    async def run(self, ctx: CellContext) -> CellRecords:
        """Play the whole cell."""
        raise NotImplementedError


class DiscountedRounds(Mechanism):
    """A mechanism that plays ``num_rounds`` T rounds and weighs them by ``discount`` δ, both
    read from the cell's parameters (Repetition, Reputation;
    docs/protocol/tournament.md#delta-weighted-score)."""

    def num_rounds(self, ctx: CellContext) -> int:
        """T, the rounds every matchup (or the population) plays."""
        return int(self.params(ctx).num_rounds)

    def discount(self, ctx: CellContext) -> float:
        """δ, shown as the continuation probability and used for the δ-weighted score."""
        return float(self.params(ctx).discount)


def others_description(ctx: CellContext) -> str:
    """'one other player' / '2 other players' (templates ``others_one`` / ``others_many``)."""
    n = ctx.game.n_players
    return ctx.prompts.render("others_one") if n == 2 else ctx.prompts.render("others_many", n=n - 1)


def game_section(ctx: CellContext, seat: int, tokens: tuple[str, ...] | None = None) -> str:
    """Game description and seat line for the reader at 0-based ``seat`` (docs/protocol/answers.md#prompt-content parts 1–2)."""
    game = ctx.game
    action_list = "\n".join(ctx.prompts.render("action_line", token=t, action=a) for t, a in zip(game.tokens, game.actions, strict=True))
    text = ctx.prompts.render(
        "game",
        others_desc=others_description(ctx),
        action_list=action_list,
        payoff_rules=game.seat_rules[seat],
    )
    return text + "\n\n" + ctx.prompts.render("seat", seat=seat + 1)


def action_instruction(ctx: CellContext, tokens: tuple[str, ...]) -> str:
    """The output instruction of an action decision (docs/protocol/answers.md#prompt-content part 4)."""
    token_list = ", ".join(tokens)
    example = "{" + ", ".join(f'"{t}": <INT>' for t in tokens) + "}"
    note = ctx.prompts.render("action_output_every") if len(tokens) > 2 else ""
    return ctx.prompts.render("action_output", token_list=token_list, example=example, extra_note=note)


def action_prompt(ctx: CellContext, seat: int, sections: Sequence[str], tokens: tuple[str, ...]) -> str:
    """The action prompt body of the reader at 0-based ``seat``: the game section, the mechanism
    ``sections`` and the action instruction over ``tokens``, separated by blank lines (without
    the style instruction; docs/protocol/answers.md#prompt-content)."""
    return "\n\n".join([game_section(ctx, seat), *sections, action_instruction(ctx, tokens)])


def continuation_percent(delta: float, truncate: bool = False) -> int:
    """δ as an integer percent: rounded (our default) or truncated (``compat.truncate_delta_percent``)."""
    return int(delta * 100) if truncate else round(delta * 100)


def matchup_id(seated: Sequence[Agent]) -> str:
    """A roster-independent matchup id: agent names in seat order joined by ``|``."""
    return "|".join(a.name for a in seated)


def position(ctx: CellContext, mechanism: str, seated: Sequence[Agent], round_: int, seat: int, kind: str) -> dict[str, Any]:
    """The decision's position (cache key part and RNG stream id; docs/protocol/engineering.md#response-cache, #randomness)."""
    return {
        "seed": ctx.seed,
        "game": ctx.game.key,
        "mechanism": mechanism,
        "replicate": ctx.replicate,
        "agents": [a.name for a in seated],
        "round": round_,
        "seat": seat,
        "kind": kind,
    }


def stream_parts(pos: Mapping[str, Any], purpose: str) -> tuple[str | int, ...]:
    """Position → RNG stream parts (strings are hashed by :func:`rng_for`)."""
    return (
        pos["game"],
        pos["mechanism"],
        int(pos["replicate"]),
        "|".join(pos["agents"]),
        int(pos["round"]),
        int(pos["seat"]),
        pos["kind"],
        purpose,
    )


def draw_action(ctx: CellContext, pos: Mapping[str, Any], distribution: Mapping[str, int], tokens: tuple[str, ...]) -> tuple[float, int]:
    """The uniform draw of this decision's own stream and the sampled action index."""
    draw = float(rng_for(ctx.seed, *stream_parts(pos, "action")).random())
    return draw, sample_action(dict(distribution), tokens, draw)


def provider_seed(ctx: CellContext, pos: Mapping[str, Any]) -> int:
    """The best-effort provider seed of a decision."""
    return seed_int_for(ctx.seed, *stream_parts(pos, "provider"))


def history_state(history: Sequence[Sequence[int]]) -> list[list[int]]:
    """History as plain lists for the bots' state."""
    return [list(r) for r in history]


def bot_state(ctx: CellContext, seat: int, history: Sequence[Sequence[int]], **extra: Any) -> dict[str, Any]:
    """The structured state scripted bots decide from (``game_title`` and ``action_labels``, the
    actions' names in token order, are for a person's form)."""
    game = ctx.game
    return {
        "game": game.key,
        "seat": seat,
        "n_players": game.n_players,
        "n_actions": game.n_actions,
        "game_title": game.title,
        "action_labels": list(game.actions),
        "cooperative_action": game.cooperative_profile[seat],
        "baseline_action": game.nash_profile[seat],
        "history": history_state(history),
        **extra,
    }


@dataclass
class SimultaneousMove:
    """The outcome of one simultaneous decision by every seat (docs/protocol/answers.md#prompt-content, #sampling).

    ``drawn`` holds the sampled token index per seat and ``draws`` the uniform draws, or both
    are None when any seat's decision failed (the move is then void; nothing is substituted).
    """

    outcomes: list[DecisionOutcome]
    drawn: list[int] | None
    draws: list[float] | None


async def decide_simultaneously(
    ctx: CellContext,
    seated: Sequence[Agent],
    bodies: Sequence[str],
    fmt: AnswerFormat,
    positions: Sequence[Mapping[str, Any]],
    states: Sequence[Mapping[str, Any]],
) -> SimultaneousMove:
    """Ask every seat concurrently for its distribution over ``fmt.keys`` and sample each
    action from the decision's own RNG stream."""
    outcomes = list(
        await asyncio.gather(
            *(
                ctx.maker.decide(agent, bodies[seat], fmt, positions[seat], state=states[seat], seed=provider_seed(ctx, positions[seat]))
                for seat, agent in enumerate(seated)
            )
        )
    )
    if not all(outcome.ok for outcome in outcomes):
        return SimultaneousMove(outcomes, None, None)
    sampled = [draw_action(ctx, positions[seat], outcome.parsed or {}, fmt.keys) for seat, outcome in enumerate(outcomes)]
    return SimultaneousMove(outcomes, [action for _, action in sampled], [draw for draw, _ in sampled])


async def play_base_round(
    ctx: CellContext,
    mechanism: str,
    seated: Sequence[Agent],
    round_: int,
    bodies: Sequence[str],
    states: Sequence[Mapping[str, Any]],
    records: CellRecords,
    matchups: Sequence[str],
    **columns: Any,
) -> tuple[list[int], tuple[float, ...]] | None:
    """Play one simultaneous move of the base game with no mediation or contract (Repetition,
    Reputation; docs/protocol/answers.md#prompt-content, #sampling): ask every seat (prompt
    ``bodies[seat]``, bot state ``states[seat]``), sample, score with the game's payoffs and
    append one ``decisions`` row per seat under ``matchups[seat]`` (``columns``: further
    CoopEval columns, e.g. ``match_id``).

    Returns the sampled action indices and payoffs in seat order, or None when a decision
    failed (the move is void: its rows carry no action and no points).
    """
    game = ctx.game
    fmt = ActionDistribution(game.tokens)
    positions = [position(ctx, mechanism, seated, round_, seat, "action") for seat in range(game.n_players)]
    move = await decide_simultaneously(ctx, seated, bodies, fmt, positions, states)
    actions, draws = move.drawn, move.draws
    payoffs = None if actions is None else game.payoffs(tuple(actions))
    for seat, (agent, outcome) in enumerate(zip(seated, move.outcomes, strict=True)):
        played: dict[str, Any] = dict(columns)
        if actions is not None and draws is not None and payoffs is not None:
            played |= played_columns(draws[seat], actions[seat], fmt.keys[actions[seat]], payoffs[seat], payoffs[seat], False)
        records.record(outcome, agent, fmt, matchups[seat], round_, seat, **played)
    return None if actions is None or payoffs is None else (actions, payoffs)
