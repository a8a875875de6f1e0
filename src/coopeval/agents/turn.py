"""One embedded-model call at a time, in an order fixed by the program: :func:`local_turn`.

Why: the embedded runtime (:mod:`coopeval.agents.local`) reuses the longest cached prompt prefix,
and with reuse a seeded request's text can depend on the requests before it (a reused prefix
changes how the remaining tokens are batched, which moves logits in their last bits;
docs/providers.md#reproducible-texts). A job's match-ups run concurrently under ``asyncio``;
if their requests reached the runtime in the order their coroutines happened to get there
(worker threads, litellm's executor step), the sequence, and so the texts, would depend on
timing. The runtime has one slot and serves one request at a time anyway, so fixing the order
costs nothing but a few turns of the event loop per call.

How: a call takes :func:`local_turn` before it leaves for the runtime and gives it back when its
reply is in. The turn is handed on only when the event loop is *quiescent*, when no callback is
ready to run: every other coroutine of the job has then reached its next wait (for the turn, or
for nothing at all because it finished). The coroutines waiting for the turn at that moment, and
the order in which they asked, follow from the program, its config and its seed alone, so the
turn goes to the one that asked first. The only outside event the choice waits for is the reply
of the call holding the turn.

After a kill. A resumed job reads the calls answered before the kill from the response cache,
so its runtime would start from another state than the uninterrupted run's at the first call it
must answer. A call answered from the cache still takes its turn (its place in the sequence is
kept) and is remembered in :func:`unreplayed_hits`; before the runtime answers its next call, the
decision loop sends the remembered ones again in order and discards their texts
(:class:`coopeval.agents.maker.DecisionMaker`), so the runtime passes through the states of the
uninterrupted run. A job whose every call is in the cache (a finished cell replayed, a rerun)
sends nothing; a resumed one recomputes, once, what its runtime had computed before the kill.

What the guarantee does not cover: a coroutine waiting on something outside the program while
the turn is handed on (a remote API call, a person's answer) may reach the turn earlier or later
from run to run, so a cell that plays the embedded model against a remote model or a person has
a fixed order only as far as those answers arrive the same way (docs/providers.md#reproducible-texts).
The quiescence test reads the ready queue of ``asyncio``'s own event loop (CPython's
``BaseEventLoop._ready``); on a loop without one (e.g. uvloop) the turn goes first-come,
first-served, one call at a time.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

__all__ = ["OrderedTurn", "local_turn", "unreplayed_hits"]


class OrderedTurn:
    """A turn held by one coroutine at a time, handed on at quiescence in the order asked.

    Use ``async with turn.hold(): ...``. Cancelling a waiter withdraws it; cancelling or raising
    inside the block gives the turn back.
    """

    def __init__(self) -> None:
        self._waiters: deque[asyncio.Future[None]] = deque()
        self._held = False
        self._handing_on = False
        self.grants = 0
        """Turns granted so far (for tests and progress lines)."""

    @asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Wait for the turn, hold it for the block, give it back at its end."""
        loop = asyncio.get_running_loop()
        granted: asyncio.Future[None] = loop.create_future()
        self._waiters.append(granted)
        self._hand_on_later(loop)
        try:
            await granted
        except asyncio.CancelledError:
            if granted.done() and not granted.cancelled():
                self._give_back(loop)  # granted as it was cancelled: pass it on
            elif granted in self._waiters:
                self._waiters.remove(granted)
            raise
        try:
            yield
        finally:
            self._give_back(loop)

    def _give_back(self, loop: asyncio.AbstractEventLoop) -> None:
        self._held = False
        self._hand_on_later(loop)

    def _hand_on_later(self, loop: asyncio.AbstractEventLoop) -> None:
        if not self._held and not self._handing_on and self._waiters:
            self._handing_on = True
            loop.call_soon(self._hand_on_when_quiescent, loop)

    def _hand_on_when_quiescent(self, loop: asyncio.AbstractEventLoop) -> None:
        ready = getattr(loop, "_ready", None)
        if ready:  # callbacks still to run: let every coroutine reach its next wait first
            loop.call_soon(self._hand_on_when_quiescent, loop)
            return
        self._handing_on = False
        while self._waiters and not self._held:
            granted = self._waiters.popleft()
            if not granted.done():
                self._held = True
                self.grants += 1
                granted.set_result(None)


_TURNS: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, OrderedTurn] = weakref.WeakKeyDictionary()


def local_turn() -> OrderedTurn:
    """The one :class:`OrderedTurn` of the running event loop, shared by every in-process model
    call of the job (one turn per loop: two turns polling one loop would wait on each other).

    Raises
    ------
    RuntimeError
        Called outside a running event loop.
    """
    loop = asyncio.get_running_loop()
    turn = _TURNS.get(loop)
    if turn is None:
        turn = _TURNS[loop] = OrderedTurn()
    return turn


_UNREPLAYED: dict[str, list[Any]] = {}


def unreplayed_hits(model: str) -> list[Any]:
    """The calls of in-process ``model`` this process answered from the response cache since its
    runtime last answered one, in their order (process-wide: a runtime lives as long as its
    process, across event loops). The decision loop appends and empties it."""
    return _UNREPLAYED.setdefault(model, [])
