"""The transport-retry loop: transient errors retried, fatal ones not, answers never invented."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from email.utils import formatdate
from typing import Any, ClassVar

import pytest

from coopeval.agents.protocol import DecisionRequest, ErrorClass, ProviderRateLimitedError, Reply
from coopeval.agents.retry import RetryPolicy, generate_with_retry, retry_after_seconds
from coopeval.decisions.formats import ActionDistribution


class Transient(Exception):
    pass


class Fatal(Exception):
    pass


class RateLimited(Exception):
    def __init__(self, retry_after: float | None = None) -> None:
        super().__init__("429")
        self.retry_after = retry_after


class FakeAgent:
    """Raises the scripted exceptions in order, then answers."""

    name = "fake(IO)"
    model = "fake"
    style = "IO"
    params: Mapping[str, Any] = {}
    cacheable = True

    def __init__(self, failures: list[BaseException]) -> None:
        self.failures = list(failures)
        self.calls = 0
        self.call_times: list[float] = []

    async def generate(self, request: DecisionRequest) -> Reply:
        self.calls += 1
        self.call_times.append(time.perf_counter())
        if self.failures:
            raise self.failures.pop(0)
        return Reply(text='{"A0": 50, "A1": 50}')

    def classify_error(self, exc: BaseException) -> ErrorClass:
        if isinstance(exc, RateLimited):
            return ErrorClass.RATE_LIMIT
        if isinstance(exc, Fatal):
            return ErrorClass.FATAL
        return ErrorClass.TRANSIENT


REQ = DecisionRequest(({"role": "user", "content": "play"},), ActionDistribution(("A0", "A1")))
FAST = {"initial_wait_s": 0.001, "max_wait_s": 0.01}


def run(agent: FakeAgent, **kw: Any) -> Reply:
    return asyncio.run(generate_with_retry(agent, REQ, **{**FAST, **kw}))


def test_transient_twice_then_success() -> None:
    agent = FakeAgent([Transient("503"), Transient("timeout")])
    reply = run(agent)
    assert reply.text == '{"A0": 50, "A1": 50}'
    assert agent.calls == 3


def test_fatal_is_not_retried() -> None:
    agent = FakeAgent([Fatal("401")])
    with pytest.raises(Fatal):
        run(agent)
    assert agent.calls == 1


def test_transient_attempts_are_bounded_and_the_error_propagates() -> None:
    agent = FakeAgent([Transient(str(i)) for i in range(10)])
    with pytest.raises(Transient, match=r"^3$"):
        run(agent, max_attempts_transient=4)
    assert agent.calls == 4


def test_rate_limit_gets_more_attempts() -> None:
    agent = FakeAgent([RateLimited() for _ in range(6)])
    assert run(agent, max_attempts_transient=2, max_attempts_rate_limit=10).text
    assert agent.calls == 7
    agent = FakeAgent([RateLimited() for _ in range(20)])
    with pytest.raises(RateLimited):
        run(agent, max_attempts_rate_limit=5)
    assert agent.calls == 5


def test_each_class_has_its_own_budget() -> None:
    """Three 429s and then a 500 (seen at scale under a 6.5 % fault rate): the 500 is the first
    transient failure, not the fourth attempt of a 4-attempt budget."""
    agent = FakeAgent([RateLimited(), RateLimited(), RateLimited(), Transient("500"), RateLimited(), Transient("504")])
    assert run(agent, max_attempts_transient=4, max_attempts_rate_limit=10).text
    assert agent.calls == 7
    agent = FakeAgent([Transient("a"), RateLimited(), Transient("b"), RateLimited(), Transient("c")])
    with pytest.raises(Transient, match=r"^c$"):
        run(agent, max_attempts_transient=3, max_attempts_rate_limit=10)
    assert agent.calls == 5  # the third transient failure ends it


def test_retry_after_is_honoured_and_a_longer_one_stops_the_call() -> None:
    agent = FakeAgent([RateLimited(retry_after=0.05)])
    run(agent, initial_wait_s=0.0, max_wait_s=1.0)
    assert agent.call_times[1] - agent.call_times[0] >= 0.045
    # a hint above the backoff cap max_wait_s is still waited in full (never retried early)
    agent = FakeAgent([RateLimited(retry_after=0.2)])
    run(agent, max_wait_s=0.02)
    assert agent.call_times[1] - agent.call_times[0] >= 0.2
    # above max_retry_after_s: no second call, the requested wait is in the error
    agent = FakeAgent([RateLimited(retry_after=30.0)])
    policy = RetryPolicy(initial_wait_s=0.001, max_wait_s=0.02, max_retry_after_s=10.0)
    with pytest.raises(ProviderRateLimitedError) as info:
        asyncio.run(generate_with_retry(agent, REQ, policy))
    assert agent.calls == 1
    assert (info.value.requested_wait_s, info.value.max_wait_s) == (30.0, 10.0)
    assert isinstance(info.value.__cause__, RateLimited)


def test_retry_after_is_found_anywhere_in_the_chain() -> None:
    # litellm's hosted_vllm/ollama paths: the outer error carries litellm_response_headers, its
    # response has no headers; the wrapped provider error holds them as well.
    class Empty:
        headers: ClassVar[dict[str, str]] = {}

    class Outer(Exception):
        response = Empty()
        headers = None

        def __init__(self, litellm_headers: dict[str, str] | None) -> None:
            super().__init__("429")
            self.litellm_response_headers = litellm_headers

    class Inner(Exception):
        def __init__(self) -> None:
            super().__init__("inner")
            self.headers = {"Retry-After": "4"}

    assert retry_after_seconds(Outer({"retry-after": "3"})) == 3.0
    wrapped = Outer(None)
    wrapped.__cause__ = Inner()
    assert retry_after_seconds(wrapped) == 4.0
    assert retry_after_seconds(Outer(None)) is None


def test_cancellation_is_not_retried() -> None:
    agent = FakeAgent([asyncio.CancelledError()])
    with pytest.raises(asyncio.CancelledError):
        run(agent)
    assert agent.calls == 1


def test_retry_after_sources() -> None:
    class WithHeaders(Exception):
        def __init__(self, headers: dict[str, str]) -> None:
            super().__init__("429")
            self.headers = headers

    class Response:
        headers: ClassVar[dict[str, str]] = {"Retry-After": "7"}

    class WithResponse(Exception):
        response = Response()

    assert retry_after_seconds(RateLimited(2.5)) == 2.5
    assert retry_after_seconds(WithHeaders({"retry-after-ms": "1500"})) == 1.5
    assert retry_after_seconds(WithResponse()) == 7.0
    # An HTTP date (RFC 9110 §10.2.3): in the past → 0 s; 90 s ahead → 90 s (± clock tick).
    assert retry_after_seconds(WithHeaders({"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"})) == 0.0
    ahead = formatdate(time.time() + 90, usegmt=True)
    hinted = retry_after_seconds(WithHeaders({"Retry-After": ahead}))
    assert hinted is not None and 88.0 <= hinted <= 90.0
    assert retry_after_seconds(WithHeaders({"Retry-After": "soon"})) is None
    assert retry_after_seconds(Transient()) is None


def test_retry_after_gets_jitter_on_top_and_the_policy_object_applies() -> None:
    # Hint 0.05 s plus a jitter uniform in [0, 0.2 s], capped at 1 s: waits spread over
    # [0.05, 0.25] instead of all clients returning at 0.05 s.
    gaps = []
    for _ in range(8):
        agent = FakeAgent([RateLimited(retry_after=0.05)])
        policy = RetryPolicy(initial_wait_s=0.2, max_wait_s=1.0)
        asyncio.run(generate_with_retry(agent, REQ, policy))
        gaps.append(agent.call_times[1] - agent.call_times[0])
    assert min(gaps) >= 0.045
    assert max(gaps) <= 0.35
    assert max(gaps) - min(gaps) > 0.005  # jittered, not all equal
    # The policy's attempt limit is used when no keyword overrides it.
    agent = FakeAgent([Transient(str(i)) for i in range(5)])
    with pytest.raises(Transient, match=r"^1$"):
        asyncio.run(generate_with_retry(agent, REQ, RetryPolicy(max_attempts_transient=2, initial_wait_s=0.001)))
    assert agent.calls == 2
