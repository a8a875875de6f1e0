"""What a person sees beside the prompt: where the question comes from and what its keys mean.

A model reads everything from the prompt; a person playing several match-ups at once (both seats
of the self-play match-up, each seat against a bot) also needs, at a glance, which match-up, seat,
opponents and round a question is from, the points so far, and the names behind the answer's
keys (``A0`` → ``Cooperate``, ``C1`` → the contract's terms). All of it comes from the decision's
``position`` and the structured ``state`` the mechanism gives scripted bots
(:class:`coopeval.agents.protocol.DecisionRequest`); nothing here reaches the parser or the cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["seat_context"]

DESIGN_NOUNS = {"contract_design": "contract proposal", "mediator_design": "mediator proposal"}
"""What a design decision (position ``kind``) is called in the question's header."""


def _where(position: Mapping[str, Any], state: Mapping[str, Any], own: str) -> str | None:
    parts: list[str] = []
    if position.get("game") and position.get("mechanism"):
        parts.append(f"{state.get('game_title') or position['game']} under {position['mechanism']}")
    agents, seat, players = position.get("agents"), position.get("seat"), state.get("n_players")
    if isinstance(agents, list) and len(agents) == 1 and isinstance(seat, int) and isinstance(players, int) and 0 <= seat < players and players > 1:
        # a design (Mediation, Contracting): asked once per seat, before any match-up, and used in each
        noun = DESIGN_NOUNS.get(str(position.get("kind")), "proposal")
        parts.append(f"your {noun} for seat {seat + 1} of {players}, used in every match-up where you sit in seat {seat + 1}")
    elif isinstance(agents, list) and agents and isinstance(seat, int) and 0 <= seat < len(agents):
        others = [f"seat {i + 1}: {name}{' (you)' if name == own else ''}" for i, name in enumerate(agents) if i != seat]
        parts.append(f"you are seat {seat + 1} of {len(agents)}" + (f", against {'; '.join(others)}" if others else ""))
    round_ = position.get("round")
    if isinstance(round_, int):
        parts.append(f"round {round_}" if round_ > 0 else "before play")
    return " · ".join(parts) or None


def seat_context(position: Mapping[str, Any], state: Mapping[str, Any], own: str) -> dict[str, Any]:
    """The question's context for a person's front end.

    Parameters
    ----------
    position:
        The decision's position (``game``, ``mechanism``, ``agents`` in seat order, 0-based
        ``seat``, ``round``; other keys are ignored).
    state:
        The scripted bots' state: ``game_title``, ``action_labels`` (action names in token order), ``n_actions``,
        ``points_so_far`` (the seat's base-game points in the rounds played), ``option_texts``
        (an answer key → the terms it decides on: a vote's options, the contract to sign),
        ``field_hints`` (an answer key → one line saying what its value means), ``n_players``
        (a design's position names only the designer: the header says which seat it is for).
    own:
        The person's agent name (``human/you(IO)``), marked "(you)" among the opponents.

    Returns
    -------
    dict
        ``{"where": one line or None, "labels": {answer key: what it means}, "hints": {answer key:
        what its value means}, "points": float or None}`` (JSON-serialisable; keys absent from the
        state are left out of ``labels`` and ``hints``).
    """
    labels: dict[str, str] = {}
    names = state.get("action_labels")
    if isinstance(names, list):
        labels.update({f"A{i}": str(name) for i, name in enumerate(names)})
    texts = state.get("option_texts")
    if isinstance(texts, Mapping):
        labels.update({str(key): str(text) for key, text in texts.items()})
    hints = state.get("field_hints")
    points = state.get("points_so_far")
    return {
        "where": _where(position, state, own),
        "labels": labels,
        "hints": {str(key): str(text) for key, text in hints.items()} if isinstance(hints, Mapping) else {},
        "points": float(points) if isinstance(points, int | float) and not isinstance(points, bool) else None,
    }
