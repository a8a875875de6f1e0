"""Our own transport-retry loop (docs/protocol/engineering.md#litellm): litellm is always called with
``num_retries=0`` and the agent classifies each exception.

* ``RATE_LIMIT``: wait what the server asks for (:func:`retry_after_seconds`: a ``retry_after``
  attribute, or a ``retry-after-ms`` / ``Retry-After`` header in seconds or as an HTTP date, looked
  up on every exception of the chain and in every place litellm keeps the headers) plus a jitter
  drawn like the backoff below, so clients told the same time do not return at once; never
  sooner than asked. A requested wait above :attr:`RetryPolicy.max_retry_after_s` is not waited
  and not cut short: :class:`~coopeval.agents.protocol.ProviderRateLimitedError` stops the call
  with the requested wait. Without a hint, the backoff alone; many attempts.
* ``TRANSIENT``: exponential backoff with full jitter; few attempts.
* ``FATAL``: re-raised at once.

Transport errors are never turned into answers: when the attempts run out, the last exception
propagates unchanged. Answer *validity* is not this module's business (re-asks live in the
decision loop).
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any

from tenacity import AsyncRetrying, RetryCallState, wait_random_exponential

from coopeval.agents.adaptive import AdaptiveLimit
from coopeval.agents.errors import exception_chain
from coopeval.agents.protocol import (
    Agent,
    DecisionRequest,
    ErrorClass,
    ProviderRateLimitedError,
    Reply,
)

__all__ = ["CallTally", "RetryPolicy", "generate_with_retry", "retry_after_seconds"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    """Attempts and waits of :func:`generate_with_retry` (the keyword arguments, bundled so a
    :class:`~coopeval.agents.maker.DecisionMaker` can carry one; tests use tiny waits).

    ``max_retry_after_s`` is the longest wait a provider may ask for (``Retry-After``) that is
    waited; a longer one stops the call with
    :class:`~coopeval.agents.protocol.ProviderRateLimitedError` (never retried early).
    """

    max_attempts_transient: int = 4
    max_attempts_rate_limit: int = 10
    max_wait_s: float = 60.0
    initial_wait_s: float = 1.0
    max_retry_after_s: float = 120.0


@dataclass
class CallTally:
    """What one call's transport did (filled by :func:`generate_with_retry`; the ``llm_calls``
    columns of its row): ``rate_limited`` attempts refused with 429, ``retries`` failed attempts
    of any class, ``in_flight`` the most attempts of its provider in flight when one of them was
    sent (itself included) and ``limit`` the adaptive limit then (0 without a limit)."""

    rate_limited: int = 0
    retries: int = 0
    in_flight: int = 0
    limit: int = 0


async def generate_with_retry(
    agent: Agent,
    request: DecisionRequest,
    policy: RetryPolicy | None = None,
    *,
    max_attempts_transient: int | None = None,
    max_attempts_rate_limit: int | None = None,
    max_wait_s: float | None = None,
    initial_wait_s: float | None = None,
    limit: AdaptiveLimit | None = None,
    tally: CallTally | None = None,
) -> Reply:
    """Call ``agent.generate(request)``, retrying transport errors by class.

    Parameters
    ----------
    agent, request:
        The agent and its request.
    policy:
        Defaults of the four settings below (:class:`RetryPolicy` if None); a keyword given
        here overrides its field.
    max_attempts_transient:
        Attempts that may fail with a ``TRANSIENT`` error (first call included); the call gives
        up at that many such failures, however many rate limits came between them.
    max_attempts_rate_limit:
        Attempts that may fail with ``RATE_LIMIT``, counted the same way. At most
        ``max_attempts_transient + max_attempts_rate_limit - 1`` attempts in all.
    max_wait_s:
        Cap on any backoff wait, seconds (never shortens a server's requested wait).
    initial_wait_s:
        Backoff scale, seconds: the wait before attempt ``n + 1`` is uniform in
        ``[0, min(max_wait_s, initial_wait_s * 2 ** (n - 1))]`` (full jitter, tenacity's
        ``wait_random_exponential``). After a rate limit with a server hint ``h`` the wait is
        ``max(h, min(max_wait_s, h + that jitter))``: never less than ``h``.

    The policy's ``max_retry_after_s`` bounds ``h``: a longer requested wait raises
    :class:`~coopeval.agents.protocol.ProviderRateLimitedError` at once.
    limit:
        The provider's adaptive in-flight limit (:mod:`coopeval.agents.adaptive`): each attempt
        holds one of its places (waits are spent outside it) and reports a 429 or an answer.
    tally:
        Filled with the call's refused attempts, retries and in-flight counts.

    Returns
    -------
    Reply
        The first successful reply.

    Raises
    ------
    ProviderRateLimitedError
        A rate limit whose requested wait exceeds ``max_retry_after_s`` (chained to the
        provider's exception; its attributes hold the requested wait and the maximum).
    BaseException
        A ``FATAL`` exception at once; otherwise the last exception once the attempts of its class
        are exhausted. ``asyncio.CancelledError`` and other non-``Exception`` errors are never
        retried.
    """
    base = policy or RetryPolicy()
    if max_attempts_transient is None:
        max_attempts_transient = base.max_attempts_transient
    if max_attempts_rate_limit is None:
        max_attempts_rate_limit = base.max_attempts_rate_limit
    if max_wait_s is None:
        max_wait_s = base.max_wait_s
    if initial_wait_s is None:
        initial_wait_s = base.initial_wait_s
    backoff = wait_random_exponential(multiplier=initial_wait_s, max=max_wait_s)

    max_hint_s = base.max_retry_after_s

    def classify(exc: BaseException | None) -> ErrorClass:
        if exc is None or not isinstance(exc, Exception) or isinstance(exc, ProviderRateLimitedError):
            return ErrorClass.FATAL
        return agent.classify_error(exc)

    def should_retry(state: RetryCallState) -> bool:
        outcome = state.outcome
        if outcome is None or not outcome.failed:
            return False
        return classify(outcome.exception()) is not ErrorClass.FATAL

    failed_as: dict[int, ErrorClass] = {}  # attempt number -> class of its error

    def should_stop(state: RetryCallState) -> bool:
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None and outcome.failed else None
        cls = classify(exc)
        failed_as[state.attempt_number] = cls
        # each class has its own budget: rate limits before a 500 do not use up the 500's attempts
        limit = max_attempts_rate_limit if cls is ErrorClass.RATE_LIMIT else max_attempts_transient
        return cls is ErrorClass.FATAL or sum(c is cls for c in failed_as.values()) >= limit

    def wait(state: RetryCallState) -> float:
        outcome = state.outcome
        exc = outcome.exception() if outcome is not None and outcome.failed else None
        jitter = float(backoff(state))
        if exc is not None and classify(exc) is ErrorClass.RATE_LIMIT:
            hinted = retry_after_seconds(exc)
            if hinted is not None:
                hinted = max(hinted, 0.0)
                return max(hinted, min(max_wait_s, hinted + jitter))
        return jitter

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
    counts = tally if tally is not None else CallTally()

    async def send() -> Reply:
        if limit is None:
            return await agent.generate(request)
        async with limit.slot() as ticket:
            counts.in_flight = max(counts.in_flight, ticket.in_flight)
            counts.limit = ticket.limit
            try:
                reply = await agent.generate(request)
            except Exception as exc:
                if classify(exc) is ErrorClass.RATE_LIMIT:
                    limit.refused_attempt(ticket)
                raise
            limit.answered_attempt()
            return reply

    async def attempt_once() -> Reply:
        try:
            return await send()
        except Exception as exc:
            counts.retries += 1
            if classify(exc) is ErrorClass.RATE_LIMIT:
                counts.rate_limited += 1
                hinted = retry_after_seconds(exc)
                if hinted is not None and hinted > max_hint_s:
                    raise ProviderRateLimitedError(
                        f"{agent.name}: the provider refused the call (rate limit) and asked to wait "
                        f"{hinted:g} s, more than the {max_hint_s:g} s the retry policy waits "
                        "(RetryPolicy.max_retry_after_s); not retried early: the decision stops here, "
                        "rerun later (answers so far are cached)",
                        requested_wait_s=hinted,
                        max_wait_s=max_hint_s,
                    ) from exc
            raise

    async for attempt in retrying:
        with attempt:
            return await attempt_once()
    raise AssertionError("unreachable: tenacity either returns or re-raises")  # pragma: no cover


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's requested wait in seconds, if the exception carries one.

    Every exception of the chain (:func:`~coopeval.agents.errors.exception_chain`: litellm wraps
    the provider's error) is searched, outermost first, for a ``retry_after`` attribute (seconds)
    and for ``retry-after-ms`` / ``Retry-After`` headers in each place litellm keeps them:
    ``litellm_response_headers`` (where its ``hosted_vllm/``, ``ollama/`` and ``ollama_chat/``
    paths put them, leaving ``response.headers`` empty), ``headers``, ``response.headers``.
    ``Retry-After`` is either delay-seconds or an HTTP date (RFC 9110 §10.2.3); a date gives the
    seconds from now until then, 0 for a date in the past. Unparsable values are ignored.
    """
    for link in exception_chain(exc):
        value: Any = getattr(link, "retry_after", None)
        if value is not None:
            try:
                return float(value)
            except (TypeError, ValueError):
                pass
        for headers in _header_sources(link):
            hinted = _hint_of(headers)
            if hinted is not None:
                return hinted
    return None


def _header_sources(exc: BaseException) -> list[Any]:
    """The header mappings ``exc`` carries (litellm's copy, its own, its response's)."""
    found: list[Any] = []
    for attr in ("litellm_response_headers", "headers", "response"):
        try:
            value = getattr(exc, attr, None)
            if attr == "response":
                value = getattr(value, "headers", None)
        except Exception:  # e.g. httpx's .request/.response properties raise when unset
            continue
        if value:
            found.append(value)
    return found


def _hint_of(headers: Any) -> float | None:
    """Seconds of the ``retry-after-ms`` or ``Retry-After`` header in ``headers``, or None."""
    try:
        lowered = {str(k).lower(): v for k, v in dict(headers).items()}
        if lowered.get("retry-after-ms") is not None:
            return float(lowered["retry-after-ms"]) / 1000.0
        if lowered.get("retry-after") is not None:
            return _retry_after_value(str(lowered["retry-after"]))
    except (TypeError, ValueError, AttributeError):
        return None
    return None


def _retry_after_value(value: str) -> float:
    """Seconds of a ``Retry-After`` value: delay-seconds or an HTTP date (ValueError if neither)."""
    text = value.strip()
    try:
        return float(text)
    except ValueError:
        pass
    when = parsedate_to_datetime(text)  # ValueError/TypeError for a bad date
    return max(0.0, when.timestamp() - time.time())
