"""Behavioural traces: what a donor learns about its recipient (docs/protocol/evolution.md#traces).

When donor D acts on recipient R in round t, D's new trace is the event "in round t, D did …
to R" followed by R's latest trace (most recent first). A donor sees its recipient's latest
trace truncated to the last ``trace_length`` events (3 by default, 1 for the ablation); a chain
shorter than that ends in "<X> had no previous interactions". Traces are reset at the start of
each game, and an invalid answer appends an explicit ``invalid`` event for D, never R's chain
alone (the reference's misattribution bug, docs/protocol/evolution.md#traces).
"""

from __future__ import annotations

import string
from collections.abc import Mapping
from dataclasses import dataclass

from coopeval.studies.evolution.amounts import shown_units

EVENT_KINDS = ("donate", "punish", "refuse", "invalid")


@dataclass(frozen=True)
class TraceEvent:
    """One event of a trace.

    ``round`` is 1-based within the game; ``percent`` is the share of the actor's pre-decision
    resources given or spent (0–100, shown with two decimals); ``amount`` the units given or
    spent; ``move`` one of :data:`EVENT_KINDS`.
    """

    round: int
    actor: str
    target: str
    move: str
    percent: float
    amount: float


@dataclass(frozen=True)
class Trace:
    """An agent's latest trace: ``events`` most recent first; ``origin`` the agent whose empty
    history ends the chain (shown as "had no previous interactions" when the chain is short)."""

    events: tuple[TraceEvent, ...]
    origin: str

    @staticmethod
    def empty(name: str) -> Trace:
        """The trace of an agent that has not acted yet in this game."""
        return Trace((), name)

    def extended(self, event: TraceEvent, keep: int) -> Trace:
        """The actor's new trace: ``event`` then this (the recipient's) chain, at most ``keep``
        events (older events can never be shown, so they are dropped, and so is the origin once
        the chain is ``keep`` long: a full chain never ends in "had no previous interactions")."""
        events = (event, *self.events)[:keep]
        return Trace(events, self.origin if len(events) < keep else "")

    def shown(self, trace_length: int) -> Trace:
        """The trace a donor sees: the last ``trace_length`` events, and the "no previous
        interactions" line only when the chain is shorter than that (issue 21 item 6)."""
        events = self.events[:trace_length]
        complete = len(events) == len(self.events) and len(events) < trace_length
        return Trace(events, self.origin if complete else "")

    def last_percent(self) -> float | None:
        """The percentage the trace's owner gave in its latest event (``None`` if it has no
        event; 0 for punish, refuse and invalid events)."""
        if not self.events:
            return None
        event = self.events[0]
        return event.percent if event.move == "donate" else 0.0


def render_trace(trace: Trace, templates: Mapping[str, str], punishment_loss: float = 2.0) -> str:
    """The trace as numbered lines, most recent first.

    ``templates`` maps each event kind and ``"no_history"`` to a :class:`string.Template` with
    the fields ``$round``, ``$actor``, ``$target``, ``$percent`` (two decimals), ``$amount``,
    ``$removed`` (amount × ``punishment_loss``, punish events) and ``$name`` (``no_history``
    ends a short chain; ``empty`` is the whole text for an agent without events).
    """
    lines = []
    for index, event in enumerate(trace.events, start=1):
        text = string.Template(templates[event.move]).substitute(
            round=event.round,
            actor=event.actor,
            target=event.target,
            percent=f"{event.percent:.2f}",
            amount=shown_units(event.amount),
            removed=shown_units(punishment_loss * event.amount),
        )
        lines.append(f"{index}. {text}")
    if trace.origin and not trace.events:
        return string.Template(templates["empty"]).substitute(name=trace.origin)
    if trace.origin:
        lines.append(string.Template(templates["no_history"]).substitute(name=trace.origin))
    return "\n".join(lines)
