"""The agent protocol: every player (LLM or scripted bot) answers through it.

docs/protocol/engineering.md#litellm: an agent is ``async generate(request) -> Reply`` plus
``classify_error(exc)``; the framework owns retries, caching and parsing.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from coopeval.decisions.formats import AnswerFormat

Message = Mapping[str, str]
"""A chat message ``{"role": "user" | "system" | "assistant", "content": str}``."""


class ErrorClass(StrEnum):
    """How the retry loop treats a transport exception."""

    RATE_LIMIT = "rate_limit"  # wait for Retry-After or back off; many attempts
    TRANSIENT = "transient"  # timeout / 5xx / connection: back off; few attempts
    FATAL = "fatal"  # auth, bad request, context window: record, never retry


class EmptyReplyError(Exception):
    """The provider answered 200 with no content, no completion tokens and no error object.

    A transient provider fault (classified ``TRANSIENT``): retried with backoff, never cached,
    never counted as a validation attempt.
    """


class RequestRejectedError(Exception):
    """The model cannot take this request as sent (e.g. prompt plus ``max_tokens`` exceed its
    context window): retrying or re-asking cannot help. Classified ``FATAL``; the decision loop
    records the decision as failed with this message, caches nothing and goes on."""


class ProviderRateLimitedError(Exception):
    """The provider refused a call (HTTP 429) and asked for a longer wait than the retry policy
    honours (:attr:`coopeval.agents.retry.RetryPolicy.max_retry_after_s`). Classified ``FATAL``:
    the call is never retried before the requested time; the decision stops and the job with it
    (a rerun resumes from the response cache).

    Attributes
    ----------
    requested_wait_s:
        The wait the provider asked for, seconds (``Retry-After``/``retry-after-ms``).
    max_wait_s:
        The longest wait the policy honours, seconds.
    """

    def __init__(self, message: str, requested_wait_s: float, max_wait_s: float) -> None:
        super().__init__(message)
        self.requested_wait_s = requested_wait_s
        self.max_wait_s = max_wait_s


class AttemptDeadlineError(TimeoutError):
    """One attempt ran past its wall-clock deadline (``deadline_s``); classified ``TRANSIENT``."""


@dataclass(frozen=True)
class DecisionRequest:
    """One call to an agent.

    Attributes
    ----------
    messages:
        The full rendered, single-turn message list (LLM agents read this).
    answer_format:
        The output contract; the embedded model compiles it into a grammar.
    state:
        Structured game state for scripted bots (JSON-serialisable): ``game`` (key),
        ``seat`` (0-based), ``n_players``, ``n_actions``, ``cooperative_action``,
        ``baseline_action`` (action indices), ``history`` (list of past rounds of this
        matchup, oldest first, each a list of action indices in seat order), ``attempt``,
        plus mechanism-specific fields. Never part of the cache key (it is implied by the
        messages and the position).
    position:
        The decision's position in the game (cache key and RNG stream component).
    seed:
        A sampling seed derived from the position, passed to providers that accept one
        (best effort; the response cache, not the seed, is the reproducibility mechanism).
    """

    messages: tuple[Message, ...]
    answer_format: AnswerFormat
    state: Mapping[str, Any] = field(default_factory=dict)
    position: Mapping[str, Any] = field(default_factory=dict)
    seed: int | None = None


@dataclass(frozen=True)
class Reply:
    """What an agent returned for one request.

    ``text`` is the raw answer (validated later by the parser). Token counts are integers,
    ``latency_s`` seconds, ``cost_usd`` US dollars from the pinned price table (prompt, completion
    and any reasoning tokens billed outside the completion count).

    ``finish_reason`` is the provider's (``"stop"``, ``"length"``, …; ``""`` if none was given),
    ``max_tokens`` the completion budget the call was sent with (0 if none), ``reasoning_tokens``
    the provider's reasoning-token count (whether or not included in ``completion_tokens``) and
    ``reasoning`` the provider's separate reasoning text (``reasoning_content``), recorded but
    never used as the answer. ``cached_prompt_tokens`` are the prompt tokens the provider took
    from its prompt cache instead of evaluating them (``usage.prompt_tokens_details.
    cached_tokens``; 0 if not reported). Replies cached before these fields existed read back
    with the defaults.
    """

    text: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cost_usd: float = 0.0
    model_resolved: str = ""
    response_id: str = ""
    finish_reason: str = ""
    max_tokens: int = 0
    reasoning_tokens: int = 0
    reasoning: str = ""
    cached_prompt_tokens: int = 0

    @property
    def truncated(self) -> bool:
        """Whether the answer was cut off by the token budget: ``finish_reason`` is
        ``"length"`` (or Anthropic's raw ``"max_tokens"``), or, when the provider gave no
        finish reason, the completion used the whole ``max_tokens``."""
        if self.finish_reason:
            return self.finish_reason in ("length", "max_tokens")
        return self.max_tokens > 0 and self.completion_tokens >= self.max_tokens

    def to_json(self) -> dict[str, Any]:
        """JSON-serialisable form for the response cache."""
        return {
            "text": self.text,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "latency_s": self.latency_s,
            "cost_usd": self.cost_usd,
            "model_resolved": self.model_resolved,
            "response_id": self.response_id,
            "finish_reason": self.finish_reason,
            "max_tokens": self.max_tokens,
            "reasoning_tokens": self.reasoning_tokens,
            "reasoning": self.reasoning,
            "cached_prompt_tokens": self.cached_prompt_tokens,
        }

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Reply:
        """Inverse of :meth:`to_json`."""
        return Reply(**{k: data[k] for k in Reply.__dataclass_fields__ if k in data})


@runtime_checkable
class Agent(Protocol):
    """A player. ``name`` is the display id ``model(style)``, e.g. ``local/smollm2-135m(IO)``.

    ``model`` is the model id used in cache keys and ``params`` the sampling parameters
    actually sent (also part of the cache key). ``style`` is ``"CoT"`` or ``"IO"``.
    ``uses_local_llm`` tells the workflow to take the ``local_llm`` resource.

    An agent may keep state: every seat plays with its own instance
    (:func:`coopeval.agents.seats.seat_agent`; optional ``for_seat()`` to customise the copy).
    """

    name: str
    model: str
    style: str
    params: Mapping[str, Any]
    cacheable: bool

    async def generate(self, request: DecisionRequest) -> Reply:
        """Answer one request. Raises transport exceptions unchanged."""
        ...

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """Classify a transport exception for the retry loop."""
        ...
