"""The round loop of one gossip run: :mod:`.loop` (state, decisions and the one round skeleton),
:mod:`.prompting` (the prompts) and one module per testbed (its part of a round, named after the
testbed's key, e.g. :mod:`.donation`)."""

from __future__ import annotations

from importlib import import_module

from coopeval.studies.gossip.rounds.loop import (
    Round,
    RunLoop,
    RunRecords,
    TestbedRounds,
    play_rounds,
)
from coopeval.studies.gossip.rounds.prompting import stated_numbers

__all__ = ["Round", "RunLoop", "RunRecords", "TestbedRounds", "play_rounds", "play_run", "rounds_for", "stated_numbers"]


def rounds_for(testbed: str) -> TestbedRounds:
    """The round part of ``testbed``: ``ROUNDS`` of the module of this package named after it.

    Raises
    ------
    ModuleNotFoundError
        If no module of this package is named ``testbed``.
    """
    return import_module(f"{__name__}.{testbed}").ROUNDS  # type: ignore[no-any-return]


async def play_run(loop: RunLoop) -> RunRecords:
    """Every round of ``loop`` with its testbed's part (:func:`rounds_for`)."""
    return await play_rounds(loop, rounds_for(loop.key))
