"""One agent instance per seat (issue 13 kind 9).

A config entry names a *kind* of player; every seat that kind takes in a game is a separate
player. The engine therefore never lets two seats share one agent object: each study builds
its roster's agents once (the *templates*) and gives every seat — each seat of each match-up
(CoopEval), each population member (gossip), each donor of a generation (evolution) — its own
instance from :func:`seat_agent` before that seat's first decision. Whatever state an agent
keeps in itself (a counter, a memory of earlier rounds) then belongs to that seat alone, as if
each seat ran in its own process, and does not depend on the order seats are scheduled in.

An agent class decides how it is copied by defining ``for_seat() -> Agent`` (e.g. to share a
read-only client or a test call counter); otherwise the template is deep-copied. Templates are
never asked a question by the engine.
"""

from __future__ import annotations

import copy

from coopeval.agents.protocol import Agent


def seat_agent(template: Agent) -> Agent:
    """A fresh instance of ``template`` for one seat: ``template.for_seat()`` if the class
    defines it, else ``copy.deepcopy(template)``. The copy has the same ``name``, ``model``,
    ``style`` and ``params`` (so cache keys and records are unchanged) and no shared mutable
    state with the template or other seats.

    Raises
    ------
    TypeError
        If the template can be neither spawned nor deep-copied (message names the agent and the fix).
    """
    spawn = getattr(template, "for_seat", None)
    if callable(spawn):
        fresh: Agent = spawn()
        return fresh
    try:
        return copy.deepcopy(template)
    except TypeError as exc:
        raise TypeError(
            f"agent {getattr(template, 'name', template)!r} cannot be copied for a seat ({exc}); "
            "define for_seat() on its class returning a fresh instance"
        ) from None
