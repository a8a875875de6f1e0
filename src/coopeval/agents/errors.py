"""Classification of transport errors for the retry loop (:mod:`coopeval.agents.retry`).

The class of an exception decides what the loop does: ``RATE_LIMIT`` waits (the server's hint)
and retries many times, ``TRANSIENT`` backs off and retries a few times, ``FATAL`` stops at once.
litellm is never imported here: its exception types are looked up only when litellm is loaded.
"""

from __future__ import annotations

import sys

from coopeval.agents.local.errors import LocalProviderError
from coopeval.agents.protocol import (
    EmptyReplyError,
    ErrorClass,
    ProviderRateLimitedError,
    RequestRejectedError,
)

__all__ = [
    "FATAL_LITELLM_ERRORS",
    "TRANSIENT_LITELLM_ERRORS",
    "ProviderAuthError",
    "classify_error",
    "exception_chain",
    "status_code",
]

FATAL_LITELLM_ERRORS: tuple[str, ...] = (
    "AuthenticationError",
    "PermissionDeniedError",
    "BadRequestError",
    "NotFoundError",
    "UnprocessableEntityError",
    "BudgetExceededError",
    "UnsupportedParamsError",
)
"""litellm exception types (names in ``litellm.exceptions``, subclasses included) that are ``FATAL``."""

TRANSIENT_LITELLM_ERRORS: tuple[str, ...] = (
    "Timeout",
    "APIConnectionError",
    "ServiceUnavailableError",
    "InternalServerError",
    "BadGatewayError",
)
"""litellm exception types that are ``TRANSIENT``."""


class ProviderAuthError(RuntimeError):
    """The provider refused the credentials (HTTP 401/403); ``FATAL``, never retried.

    The message names the model, the status and the environment variable(s) holding its key.
    """


def classify_error(exc: BaseException) -> ErrorClass:
    """Classify a transport exception for the retry loop.

    * litellm ``RateLimitError`` or HTTP 429 → ``RATE_LIMIT``;
    * ``AuthenticationError``, ``PermissionDeniedError``, ``BadRequestError`` (including
      ``ContextWindowExceededError`` and ``ContentPolicyViolationError``), ``NotFoundError``,
      ``UnprocessableEntityError``, ``BudgetExceededError``, ``UnsupportedParamsError``, other
      HTTP 4xx, and the local provider's own errors (missing weights, invalid grammar, context
      window; found through the exception chain, since litellm wraps them) → ``FATAL``;
    * :class:`ProviderAuthError`, :class:`~coopeval.agents.protocol.RequestRejectedError`,
      :class:`~coopeval.agents.protocol.ProviderRateLimitedError` → ``FATAL``;
    * ``Timeout``, ``APIConnectionError``, ``ServiceUnavailableError``, ``InternalServerError``,
      ``BadGatewayError``, HTTP 5xx/408, builtin ``TimeoutError``/``ConnectionError``
      (:class:`~coopeval.agents.protocol.AttemptDeadlineError` included),
      :class:`~coopeval.agents.protocol.EmptyReplyError` → ``TRANSIENT``;
    * anything else → ``TRANSIENT`` (a few retries, then the error propagates).
    """
    if isinstance(exc, ProviderAuthError | RequestRejectedError | ProviderRateLimitedError):
        return ErrorClass.FATAL
    if isinstance(exc, EmptyReplyError | TimeoutError):
        return ErrorClass.TRANSIENT
    chain = exception_chain(exc)
    if any(isinstance(e, LocalProviderError) for e in chain):
        return ErrorClass.FATAL
    litellm = sys.modules.get("litellm")
    if litellm is not None:
        ex = litellm.exceptions
        if isinstance(exc, ex.RateLimitError):
            return ErrorClass.RATE_LIMIT
        fatal = tuple(getattr(ex, name) for name in FATAL_LITELLM_ERRORS if hasattr(ex, name))
        if isinstance(exc, fatal):
            return ErrorClass.FATAL
        transient = tuple(getattr(ex, name) for name in TRANSIENT_LITELLM_ERRORS if hasattr(ex, name))
        if isinstance(exc, transient):
            return ErrorClass.TRANSIENT
    status = status_code(exc)
    if status is not None:
        if status == 429:
            return ErrorClass.RATE_LIMIT
        if status in (408, 409, 425) or status >= 500:
            return ErrorClass.TRANSIENT
        if 400 <= status < 500:
            return ErrorClass.FATAL
    return ErrorClass.TRANSIENT


def exception_chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and its causes/contexts, outermost first (at most 16, no repeats)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 16:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def status_code(exc: BaseException) -> int | None:
    """The HTTP status of ``exc`` (``status_code``, ``status`` or ``response.status_code``), or ``None``."""
    for attr in ("status_code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None
