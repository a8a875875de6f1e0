"""Our own transport-retry loop (engineering rules §5): litellm is always called with
``num_retries=0`` and the agent classifies each exception.

* ``RATE_LIMIT``: honour the exception's ``retry_after`` (seconds) or a ``Retry-After`` response
  header, else exponential backoff with full jitter; many attempts.
* ``TRANSIENT``: exponential backoff with full jitter; few attempts.
* ``FATAL``: re-raised at once.

Transport errors are never turned into answers: when the attempts run out, the last exception
propagates unchanged. Answer *validity* is not this module's business (re-asks live in the
decision loop).
"""

from __future__ import annotations

import logging
import random
from typing import Any

from tenacity import AsyncRetrying, RetryCallState

from coopeval.agents.protocol import Agent, DecisionRequest, ErrorClass, Reply

__all__ = ["generate_with_retry", "retry_after_seconds"]

log = logging.getLogger(__name__)


async def generate_with_retry(
    agent: Agent,
    request: DecisionRequest,
    *,
    max_attempts_transient: int = 4,
    max_attempts_rate_limit: int = 10,
    max_wait_s: float = 60.0,
    initial_wait_s: float = 1.0,
) -> Reply:
    """Call ``agent.generate(request)``, retrying transport errors by class.

    Parameters
    ----------
    agent, request:
        The agent and its request.
    max_attempts_transient:
        Total attempts (first call included) when the latest error is ``TRANSIENT``.
    max_attempts_rate_limit:
        Total attempts when the latest error is ``RATE_LIMIT``.
    max_wait_s:
        Cap on any single wait, seconds (also caps a server's ``retry_after``).
    initial_wait_s:
        Backoff scale, seconds: the wait before attempt ``n + 1`` is uniform in
        ``[0, min(max_wait_s, initial_wait_s * 2 ** (n - 1))]`` (full jitter).

    Returns
    -------
    Reply
        The first successful reply.

    Raises
    ------
    BaseException
        A ``FATAL`` exception at once; otherwise the last exception once the attempts of its class
        are exhausted. ``asyncio.CancelledError`` and other non-``Exception`` errors are never
        retried.
    """

    def classify(exc: BaseException | None) -> ErrorClass:
        if exc is None or not isinstance(exc, Exception):
            return ErrorClass.FATAL
        return agent.classify_error(exc)

    def should_retry(state: RetryCallState) -> bool:
        outcome = state.outcome
        if outcome is None or not outcome.failed:
            return False
        return classify(outcome.exception()) is not ErrorClass.FATAL

    def should_stop(state: RetryCallState) -> bool:
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None and outcome.failed else None
        cls = classify(exc)
        limit = max_attempts_rate_limit if cls is ErrorClass.RATE_LIMIT else max_attempts_transient
        return cls is ErrorClass.FATAL or state.attempt_number >= limit

    def wait(state: RetryCallState) -> float:
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None and outcome.failed else None
        backoff = random.uniform(
            0.0, min(max_wait_s, initial_wait_s * 2 ** (state.attempt_number - 1))
        )
        if exc is not None and classify(exc) is ErrorClass.RATE_LIMIT:
            hinted = retry_after_seconds(exc)
            if hinted is not None:
                return min(max_wait_s, max(hinted, 0.0))
        return backoff

    def before_sleep(state: RetryCallState) -> None:
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None else None
        log.warning(
            "%s: attempt %d failed (%s: %s); retrying in %.2f s",
            agent.name,
            state.attempt_number,
            classify(exc).value,
            type(exc).__name__,
            state.upcoming_sleep,
        )

    retrying = AsyncRetrying(
        retry=should_retry, stop=should_stop, wait=wait, before_sleep=before_sleep, reraise=True
    )
    async for attempt in retrying:
        with attempt:
            return await agent.generate(request)
    raise AssertionError("unreachable: tenacity either returns or re-raises")  # pragma: no cover


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's requested wait in seconds, if the exception carries one.

    Looks at a ``retry_after`` attribute (number of seconds), then at the ``retry-after-ms`` /
    ``Retry-After`` headers of the exception (``exc.headers``) or of its ``response``. HTTP-date
    values and unparsable numbers are ignored.
    """
    value: Any = getattr(exc, "retry_after", None)
    if value is not None:
        try:
            return float(value)
        except (TypeError, ValueError):
            return None
    for headers in (
        getattr(exc, "headers", None),
        getattr(getattr(exc, "response", None), "headers", None),
    ):
        if not headers:
            continue
        try:
            lowered = {str(k).lower(): v for k, v in dict(headers).items()}
            if lowered.get("retry-after-ms") is not None:
                return float(lowered["retry-after-ms"]) / 1000.0
            if lowered.get("retry-after") is not None:
                return float(lowered["retry-after"])
        except (TypeError, ValueError, AttributeError):
            continue
    return None
