"""Issue 45: an in-process model's calls reach it in an order fixed by the program, not by timing.

The stand-in runtime below answers like the embedded one with prompt reuse: each text depends on
the request it served just before. Its callers reach it from worker threads after a random delay
(the jitter of litellm's executor step and of thread scheduling), and a job's match-ups ask
concurrently. Under :func:`coopeval.agents.turn.local_turn` two jobs with different jitter see the
same sequence and get the same texts; without it (every call under the job's concurrency cap)
the sequence follows the jitter.
"""

from __future__ import annotations

import asyncio
import json
import random
import threading
import time
from typing import Any

import pytest

from coopeval.agents import turn as turn_module
from coopeval.agents.maker import DecisionMaker
from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.agents.turn import OrderedTurn, local_turn
from coopeval.cache.response_cache import ResponseCache
from coopeval.decisions.formats import ActionDistribution

FORMAT = ActionDistribution(("A0", "A1"))
BODY = 'Choose; answer {"A0": <INT>, "A1": <INT>}'


class HistoryRuntime:
    """One slot serving one request at a time; the answer depends on the previous request."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.served: list[str] = []

    def chat(self, prompt: str) -> str:
        with self.lock:
            previous = self.served[-1] if self.served else ""
            self.served.append(prompt)
            share = (len(previous) * 7 + len(self.served)) % 101
            return json.dumps({"A0": share, "A1": 100 - share})


class Killed(BaseException):
    """The job's process killed (not an error the decision loop handles)."""


class ThreadedModel:
    """An agent taking the ``local_llm`` path: its call leaves for the runtime on a worker thread
    after a jitter drawn from ``rng``."""

    cacheable = True
    uses_local_llm = True
    is_local = True

    def __init__(self, runtime: HistoryRuntime, rng: random.Random, killed_after: int | None = None) -> None:
        self.runtime, self.rng, self.killed_after = runtime, rng, killed_after
        self.model, self.style, self.name = "local/stand-in", "IO", "local/stand-in(IO)"
        self.params: dict[str, Any] = {}
        self.endpoint: dict[str, Any] = {}

    async def generate(self, request: DecisionRequest) -> Reply:
        delay = self.rng.uniform(0, 0.004)

        def call() -> str:
            time.sleep(delay)
            if self.killed_after is not None and len(self.runtime.served) >= self.killed_after:
                raise Killed
            return self.runtime.chat(request.messages[-1]["content"])

        return Reply(text=await asyncio.to_thread(call), model_resolved=self.model)

    def classify_error(self, exc: BaseException) -> ErrorClass:
        return ErrorClass.FATAL


@pytest.fixture(autouse=True)
def _fresh_process_state():
    turn_module._UNREPLAYED.clear()
    yield
    turn_module._UNREPLAYED.clear()


def _play(jitter_seed: int, cache: ResponseCache | None = None, killed_after: int | None = None) -> tuple[list[str], list[str]]:
    """Six match-ups of four rounds each, asking concurrently (a new process: a new runtime, and
    nothing remembered from an earlier one): what the runtime served, and the texts."""
    turn_module._UNREPLAYED.clear()
    runtime = HistoryRuntime()
    agent = ThreadedModel(runtime, random.Random(jitter_seed), killed_after)
    maker = DecisionMaker(cache, {}, max_concurrency=8)

    async def matchup(m: int) -> list[str]:
        texts = []
        for r in range(4):
            seats = await asyncio.gather(
                *(maker.decide(agent, f"{BODY} match {m} round {r} seat {s} " + "x" * (m * r + s), FORMAT, {"m": m, "r": r, "s": s})
                  for s in range(2))
            )
            texts += [o.response for o in seats]
        return texts

    async def job() -> list[str]:
        return [t for texts in await asyncio.gather(*(matchup(m) for m in range(6))) for t in texts]

    try:
        texts = asyncio.run(job())
    except Killed:
        texts = []
    return runtime.served, texts


def test_the_runtime_sees_one_sequence_whatever_the_jitter():
    served_a, texts_a = _play(1)
    served_b, texts_b = _play(2)
    assert len(served_a) == 48
    assert served_a == served_b
    assert texts_a == texts_b


def test_a_killed_and_resumed_job_gets_the_uninterrupted_texts_and_a_rerun_sends_nothing(tmp_path):
    served, texts = _play(1)
    cache = ResponseCache(tmp_path / "cache")
    killed_served, _ = _play(2, cache, killed_after=17)
    assert killed_served == served[:17]
    resumed_served, resumed_texts = _play(3, cache)
    # the 17 answers read from the cache are sent again first, in order: the runtime's sequence
    # and every later text are the uninterrupted run's
    assert resumed_served == served
    assert resumed_texts == texts
    rerun_served, rerun_texts = _play(4, cache)
    assert rerun_served == [] and rerun_texts == texts
    cache.close()


def test_the_turn_goes_to_the_first_who_asked_once_every_coroutine_waits():
    order: list[str] = []

    async def ask(turn: OrderedTurn, name: str, hold_s: float) -> None:
        async with turn.hold():
            order.append(f"{name}+")
            await asyncio.sleep(hold_s)
            order.append(f"{name}-")

    async def job() -> int:
        turn = OrderedTurn()
        await asyncio.gather(ask(turn, "a", 0.01), ask(turn, "b", 0.0), ask(turn, "c", 0.005))
        return turn.grants

    assert asyncio.run(job()) == 3
    assert order == ["a+", "a-", "b+", "b-", "c+", "c-"]  # one holder at a time, in the order asked


def test_a_cancelled_waiter_leaves_the_line_and_a_failing_holder_gives_the_turn_back():
    order: list[str] = []

    async def job() -> None:
        turn = local_turn()
        assert local_turn() is turn  # one turn per event loop

        async def fail() -> None:
            async with turn.hold():
                order.append("fail")
                raise ValueError("runtime error")

        async def wait_forever() -> None:
            async with turn.hold():
                order.append("never")

        async def later() -> None:
            async with turn.hold():
                order.append("later")

        failing = asyncio.ensure_future(fail())
        waiting = asyncio.ensure_future(wait_forever())
        waiting_later = asyncio.ensure_future(later())
        await asyncio.sleep(0)
        waiting.cancel()
        with pytest.raises(ValueError):
            await failing
        await waiting_later
        assert waiting.cancelled()

    asyncio.run(job())
    assert order == ["fail", "later"]
