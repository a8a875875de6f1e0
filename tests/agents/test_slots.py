"""The run-wide cap on provider calls: lock-file slots shared by separate maker instances."""

from __future__ import annotations

import asyncio

import pytest

from coopeval.agents.slots import ProviderSlots, slots_from_env


def test_two_holders_of_the_same_folder_never_exceed_the_cap(tmp_path):
    first, second = ProviderSlots(tmp_path, 2), ProviderSlots(tmp_path, 2)  # like two jobs
    in_flight, peak = 0, 0

    async def call(slots):
        nonlocal in_flight, peak
        async with slots.slot():
            in_flight += 1
            peak = max(peak, in_flight)
            await asyncio.sleep(0.02)
            in_flight -= 1

    async def main():
        await asyncio.gather(*(call(first if k % 2 else second) for k in range(8)))

    asyncio.run(main())
    assert peak == 2
    first.close()
    second.close()


def test_env_parsing(tmp_path, monkeypatch):
    monkeypatch.delenv("COOPEVAL_PROVIDER_SLOTS", raising=False)
    assert slots_from_env() is None
    monkeypatch.setenv("COOPEVAL_PROVIDER_SLOTS_DIR", str(tmp_path / "slots"))
    monkeypatch.setenv("COOPEVAL_PROVIDER_SLOTS", "3")
    slots = slots_from_env()
    assert slots is not None and slots.n == 3 and len(list((tmp_path / "slots").iterdir())) == 3
    slots.close()
    monkeypatch.setenv("COOPEVAL_PROVIDER_SLOTS", "many")
    with pytest.raises(ValueError, match="COOPEVAL_PROVIDER_SLOTS='many'"):
        slots_from_env()


def test_only_the_first_waiter_of_a_process_polls(tmp_path, monkeypatch):
    holder, waiting = ProviderSlots(tmp_path, 2), ProviderSlots(tmp_path, 2)
    attempts = 0
    original = waiting._try

    def counted(i):
        nonlocal attempts
        attempts += 1
        return original(i)

    monkeypatch.setattr(waiting, "_try", counted)

    async def main():
        release = asyncio.Event()

        async def hold():
            async with holder.slot():
                await release.wait()

        holders = [asyncio.create_task(hold()) for _ in range(2)]  # another job holds both slots
        await asyncio.sleep(0.01)
        waiters = [asyncio.create_task(_enter(waiting)) for _ in range(50)]
        await asyncio.sleep(0.2)
        assert not any(w.done() for w in waiters)  # the cap holds
        release.set()
        await asyncio.gather(*holders, *waiters)

    asyncio.run(main())
    # 0.2 s of waiting = at most ~25 scans of 2 slots by the one polling waiter (every waiter
    # polling would be 50 times as many), then 50 entries of 1-2 tries each
    assert attempts < 300
    holder.close()
    waiting.close()


async def _enter(slots):
    async with slots.slot():
        await asyncio.sleep(0)
