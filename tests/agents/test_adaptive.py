"""The AIMD in-flight limit (coopeval.agents.adaptive), hand-computed."""

from __future__ import annotations

import asyncio

import pytest

from coopeval.agents.adaptive import AdaptiveLimit


def test_halves_once_per_round_trip_and_grows_by_one_over_the_limit() -> None:
    limit = AdaptiveLimit(8)

    async def run() -> None:
        async with limit.slot() as first, limit.slot() as second:
            assert (first.in_flight, second.in_flight, first.limit) == (1, 2, 8)
            limit.refused_attempt(first)  # 8 → 4
            limit.refused_attempt(second)  # sent before the halving: no second halving
            assert limit.limit == 4.0 and limit.refused == 2
            async with limit.slot() as third:
                assert (third.in_flight, third.limit) == (3, 4)
                limit.refused_attempt(third)  # sent after it: 4 → 2
        assert limit.limit == 2.0 and limit.lowest_limit == 2
        limit.answered_attempt()  # 2 + 1/2
        limit.answered_attempt()  # 2.5 + 1/2.5 = 2.9
        assert limit.limit == pytest.approx(2.9)
        for _ in range(100):
            limit.answered_attempt()
        assert limit.limit == 8.0  # never above the cap
        assert limit.max_in_flight == 3

    asyncio.run(run())


def test_waits_while_the_limit_is_full_and_never_goes_below_one() -> None:
    limit = AdaptiveLimit(2)
    order: list[str] = []

    async def hold(name: str, seconds: float) -> None:
        async with limit.slot() as ticket:
            order.append(f"{name}+{ticket.in_flight}")
            if name == "a":
                limit.refused_attempt(ticket)  # 2 → 1: b waits for a to finish
            await asyncio.sleep(seconds)
            order.append(f"{name}-")

    async def run() -> None:
        first = asyncio.create_task(hold("a", 0.05))
        await asyncio.sleep(0.01)
        await asyncio.gather(first, hold("b", 0.0))

    asyncio.run(run())
    assert order == ["a+1", "a-", "b+1", "b-"]
    ticket_epoch = limit._epoch
    for _ in range(5):
        async def refuse() -> None:
            async with limit.slot() as ticket:
                limit.refused_attempt(ticket)

        asyncio.run(refuse())
    assert limit.limit == 1.0 and limit._epoch == ticket_epoch + 5
    with pytest.raises(ValueError, match="at least 1"):
        AdaptiveLimit(0)
