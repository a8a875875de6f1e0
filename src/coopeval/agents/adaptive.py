"""Adaptive limit on one provider's calls in flight within a job (issue 25 kind 5).

With a configured cap above what the provider accepts, every call beyond the provider's limit is
refused (HTTP 429), waits and is sent again into the same crowd: a rate-limit storm. Each job's
:class:`~coopeval.agents.maker.DecisionMaker` therefore keeps one :class:`AdaptiveLimit` per
provider and endpoint, an additive-increase / multiplicative-decrease (AIMD) window as in TCP
congestion control (Jacobson 1988; Chiu and Jain 1989):

* a refused attempt (``RATE_LIMIT``) halves the limit (:data:`DECREASE`), at most once per
  round trip: a 429 of an attempt sent before the last decrease does not decrease it again (the
  crowd that caused it is already being thinned);
* each answered attempt raises it by ``1 / limit`` (about +1 per limit's worth of answers), up
  to the configured cap (the job's ``max_concurrency``);
* an attempt is sent only while fewer than ``floor(limit)`` attempts of that provider are in
  flight (at least one always may be).

The limit lives inside the job's semaphore and the run-wide slots
(:mod:`coopeval.agents.slots`), so it only ever lowers what they allow. Waits between attempts
(backoff, ``Retry-After``) are spent outside it. Each attempt's :class:`Ticket` tells the recorder
how many calls were in flight and what the limit was (the ``llm_calls`` columns ``in_flight``,
``in_flight_limit``, ``in_flight_cap``; the run summary's traffic table).
"""

from __future__ import annotations

import asyncio
import math
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

__all__ = ["DECREASE", "AdaptiveLimit", "Ticket"]

DECREASE = 0.5
"""Factor applied to the limit after a refused attempt (multiplicative decrease)."""


@dataclass(frozen=True)
class Ticket:
    """One attempt's place: ``in_flight`` (this provider's attempts in flight in this job when it
    was sent, itself included), ``limit`` (the whole limit then), ``epoch`` (decreases so far)."""

    in_flight: int
    limit: int
    epoch: int


class AdaptiveLimit:
    """AIMD limit on attempts in flight (see the module docstring).

    Parameters
    ----------
    cap:
        The configured cap (the limit's start and ceiling), >= 1.

    Attributes
    ----------
    limit:
        The current limit (a float in ``[1, cap]``).
    max_in_flight:
        The most attempts seen in flight at once.
    lowest_limit:
        The lowest whole limit reached.
    refused:
        Refused attempts reported through :meth:`refused_attempt`.

    Raises
    ------
    ValueError
        ``cap`` < 1.
    """

    def __init__(self, cap: int) -> None:
        if cap < 1:
            raise ValueError(f"the in-flight cap must be at least 1, not {cap}")
        self.cap = cap
        self.limit = float(cap)
        self.in_flight = 0
        self.max_in_flight = 0
        self.lowest_limit = cap
        self.refused = 0
        self._epoch = 0
        self._conditions: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Condition] = (
            weakref.WeakKeyDictionary()
        )

    def _allowed(self) -> int:
        return max(1, math.floor(self.limit))

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[Ticket]:
        """Hold one place for an attempt (waits while ``floor(limit)`` are in flight)."""
        condition = self._conditions.setdefault(asyncio.get_running_loop(), asyncio.Condition())
        async with condition:
            await condition.wait_for(lambda: self.in_flight < self._allowed())
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            ticket = Ticket(self.in_flight, self._allowed(), self._epoch)
        try:
            yield ticket
        finally:
            async with condition:
                self.in_flight -= 1
                condition.notify_all()

    def refused_attempt(self, ticket: Ticket) -> None:
        """An attempt sent with ``ticket`` was refused (429): halve the limit, once per round trip."""
        self.refused += 1
        if ticket.epoch == self._epoch:
            self.limit = max(1.0, self.limit * DECREASE)
            self._epoch += 1
            self.lowest_limit = min(self.lowest_limit, self._allowed())

    def answered_attempt(self) -> None:
        """An attempt was answered: raise the limit by ``1 / limit``, up to the cap."""
        self.limit = min(float(self.cap), self.limit + 1.0 / self.limit)
