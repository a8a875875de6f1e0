"""The donation games of one population (docs/protocol/evolution.md#donation-game, #schedule, #traces).

The stage game is the engine's :class:`~coopeval.games.donation.ContinuousDonationGame` (its
endowment, multiplier, punishment loss and what a percentage is a share of): every agent starts a
game with the endowment, resources compound within a game, and each donation is settled by
:meth:`~coopeval.games.donation.ContinuousDonationGame.settle`. This module adds the study's
part: the schedule, the behavioural traces (``trace_length`` events shown), the logged V&H
reputation, and the ``invalid`` move of a failed decision, which transfers nothing. The donations
of a round are decided concurrently from the resources and traces at the start of the round;
rounds are sequential (docs/protocol/evolution.md#schedule item 7).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from coopeval.games.donation import ContinuousDonationGame
from coopeval.studies.evolution.reputation import next_reputation
from coopeval.studies.evolution.schedule import Pairing, game_rounds, half_of
from coopeval.studies.evolution.traces import Trace, TraceEvent


@dataclass(frozen=True)
class DonationContext:
    """What one donor faces (docs/protocol/evolution.md#traces): indices into the population, 1-based ``round``
    within the game, resources at the start of the round and the recipient's shown trace."""

    game: int
    round: int
    pairing: Pairing
    donor_resources: float
    recipient_resources: float
    recipient_trace: Trace

    @property
    def donor(self) -> int:
        return self.pairing.donor

    @property
    def recipient(self) -> int:
        return self.pairing.recipient


@dataclass(frozen=True)
class Action:
    """A donor's resolved action: ``move`` in ``donate | punish | refuse | invalid`` and
    ``amount`` the units given or spent (0 ≤ amount ≤ donor's resources; 0 for refuse/invalid).
    ``record`` carries the decision's columns into the event row."""

    move: str
    amount: float = 0.0
    record: dict[str, Any] = field(default_factory=dict)


Decide = Callable[[Sequence[DonationContext]], Awaitable[Sequence[Action]]]
"""Decides all donations of one round (one action per context, same order)."""


@dataclass
class GameResult:
    """Final resources per agent (population order) and one event dict per donation."""

    final: list[float]
    events: list[dict[str, Any]]


async def play_game(
    names: Sequence[str], donation: ContinuousDonationGame, game: int, decide: Decide, trace_length: int
) -> GameResult:
    """Play one game (docs/protocol/evolution.md#schedule) of the population ``names`` (shuffled order: first half A)
    with the stage game ``donation``, showing each donor the last ``trace_length`` events of its
    recipient's trace (3; 1 in V&H's ablation; docs/protocol/evolution.md#traces).

    Event dicts have: game, round, pair, donor, recipient (names), donor_half, action, amount
    (units), percentage (of the donor's pre-decision resources), donor/recipient resources
    before and after, trace_shown (the :class:`Trace`), donor_reputation (the unused V&H score
    after this event, :mod:`~coopeval.studies.evolution.reputation`), plus the action's ``record``.

    Raises
    ------
    ValueError
        Odd or too small population; an unknown move; an action amount outside [0, donor resources].
    """
    n = len(names)
    rounds = game_rounds(n, game)
    resources = [float(donation.endowment)] * n
    traces = [Trace.empty(name) for name in names]
    reputation: list[float | None] = [None] * n  # logged only (docs/protocol/evolution.md#vh-metrics), reset with the traces
    events: list[dict[str, Any]] = []
    for round_index, pairings in enumerate(rounds, start=1):
        contexts = [
            DonationContext(
                game=game,
                round=round_index,
                pairing=p,
                donor_resources=resources[p.donor],
                recipient_resources=resources[p.recipient],
                recipient_trace=traces[p.recipient].shown(trace_length),
            )
            for p in pairings
        ]
        actions = list(await decide(contexts))
        if len(actions) != len(contexts):
            raise ValueError(f"decide returned {len(actions)} actions for {len(contexts)} donations")
        for ctx, action in zip(contexts, actions, strict=True):
            d, r = ctx.donor, ctx.recipient
            before_d, before_r = resources[d], resources[r]
            amount = float(action.amount) if action.move in ("donate", "punish") else 0.0
            if action.move != "invalid":  # a failed decision moves nothing
                try:
                    resources[d], resources[r] = donation.settle(action.move, amount, before_d, before_r)
                except ValueError as exc:
                    raise ValueError(f"round {round_index}: {names[d]}: {exc}") from None
            percent = donation.percent_of_holdings(amount, before_d)
            given = percent / 100.0 if action.move == "donate" else 0.0
            reputation[d] = next_reputation(reputation[d], min(given, 1.0), reputation[r])
            event = TraceEvent(round_index, names[d], names[r], action.move, percent, amount)
            traces[d] = traces[r].extended(event, trace_length)
            events.append(
                {
                    "game": game,
                    "round": round_index,
                    "pair": ctx.pairing.pair,
                    "donor": names[d],
                    "recipient": names[r],
                    "donor_half": half_of(n, d),
                    "action": action.move,
                    "amount": amount,
                    "percentage": percent,
                    "donor_resources_before": before_d,
                    "recipient_resources_before": before_r,
                    "donor_resources_after": resources[d],
                    "recipient_resources_after": resources[r],
                    "trace_shown": ctx.recipient_trace,
                    "donor_reputation": reputation[d],
                    **action.record,
                }
            )
    return GameResult(resources, events)


def constant_fraction_decide(fraction: float | Callable[[DonationContext], float]) -> Decide:
    """A ``decide`` where every donor gives ``fraction`` of its current resources (or the
    fraction the callable returns for the context): the docs/protocol/evolution.md#constant-fraction-oracle oracle's policy."""

    async def decide(contexts: Sequence[DonationContext]) -> list[Action]:
        out = []
        for ctx in contexts:
            f = fraction(ctx) if callable(fraction) else fraction
            out.append(Action("donate", f * ctx.donor_resources))
        return out

    return decide
