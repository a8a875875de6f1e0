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
