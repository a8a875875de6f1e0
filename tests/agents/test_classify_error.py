"""Transport-error classification (:func:`coopeval.agents.errors.classify_error`) is exact.

Every known error type maps to its own class (the table below, hand-written from litellm's
exception types and HTTP semantics), every litellm type the classifier names is in the table,
and the table really discriminates: broken classifiers (a constant answer, one that misses
wrapped causes, one that ignores status codes) each get at least one case wrong.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest

from coopeval.core.environment import use_offline_litellm

use_offline_litellm()
litellm = pytest.importorskip("litellm")
httpx = pytest.importorskip("httpx")

from coopeval.agents import errors  # noqa: E402
from coopeval.agents.errors import (  # noqa: E402
    FATAL_LITELLM_ERRORS,
    TRANSIENT_LITELLM_ERRORS,
    ProviderAuthError,
    classify_error,
)
from coopeval.agents.llm_agent import LiteLLMAgent  # noqa: E402
from coopeval.agents.local import (  # noqa: E402
    GrammarError,
    LocalContextWindowError,
    LocalModelMissingError,
)
from coopeval.agents.protocol import (  # noqa: E402
    AttemptDeadlineError,
    EmptyReplyError,
    ErrorClass,
    RequestRejectedError,
)

ex = litellm.exceptions
M, P = "openai/gpt-4o-mini", "openai"
RATE, TRANS, FATAL = ErrorClass.RATE_LIMIT, ErrorClass.TRANSIENT, ErrorClass.FATAL


def _response(status: int) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("POST", "https://example.invalid/v1/chat"))


class HttpError(Exception):
    """A non-litellm HTTP error carrying only a status code."""

    def __init__(self, status_code: int) -> None:
        super().__init__(status_code)
        self.status_code = status_code


def _wrapped(inner: BaseException) -> BaseException:
    """litellm's APIConnectionError with ``inner`` as its implicit context (as litellm wraps a
    CustomLLM handler's exception)."""
    outer = ex.APIConnectionError(f"wrapped: {inner}", "local", "smollm2-135m")
    outer.__context__ = inner
    return outer


CASES: list[tuple[str, BaseException, ErrorClass]] = [
    ("RateLimitError", ex.RateLimitError("slow down", P, M), RATE),
    ("Timeout", ex.Timeout("timed out", M, P), TRANS),
    ("APIConnectionError", ex.APIConnectionError("connection reset", P, M), TRANS),
    ("ServiceUnavailableError", ex.ServiceUnavailableError("503", P, M), TRANS),
    ("InternalServerError", ex.InternalServerError("500", P, M), TRANS),
    ("BadGatewayError", ex.BadGatewayError("502", P, M), TRANS),
    ("APIError-503", ex.APIError(503, "upstream", P, M), TRANS),
    ("APIError-429", ex.APIError(429, "too many", P, M), RATE),
    ("APIError-400", ex.APIError(400, "bad", P, M), FATAL),
    ("AuthenticationError", ex.AuthenticationError("bad key", P, M), FATAL),
    ("BadRequestError", ex.BadRequestError("bad request", M, P), FATAL),
    ("ContextWindowExceededError", ex.ContextWindowExceededError("too long", M, P), FATAL),
    ("ContentPolicyViolationError", ex.ContentPolicyViolationError("filtered", M, P), FATAL),
    ("NotFoundError", ex.NotFoundError("no such model", M, P), FATAL),
    ("PermissionDeniedError", ex.PermissionDeniedError("denied", P, M, response=_response(403)), FATAL),
    ("UnprocessableEntityError", ex.UnprocessableEntityError("422", M, P, response=_response(422)), FATAL),
    ("UnsupportedParamsError", ex.UnsupportedParamsError("seed not supported", P, M), FATAL),
    ("BudgetExceededError", ex.BudgetExceededError(1.0, 0.5), FATAL),
    ("ProviderAuthError", ProviderAuthError("refused"), FATAL),
    ("RequestRejectedError", RequestRejectedError("does not fit"), FATAL),
    ("EmptyReplyError", EmptyReplyError("no content"), TRANS),
    ("AttemptDeadlineError", AttemptDeadlineError("too slow"), TRANS),
    ("TimeoutError", TimeoutError("socket"), TRANS),
    ("ConnectionResetError", ConnectionResetError("reset"), TRANS),
    ("LocalModelMissingError", LocalModelMissingError("run pip install"), FATAL),
    ("wrapped GrammarError", _wrapped(GrammarError("bad grammar")), FATAL),
    ("wrapped LocalContextWindowError", _wrapped(LocalContextWindowError("4097 > 4096")), FATAL),
    ("HTTP 429", HttpError(429), RATE),
    ("HTTP 401", HttpError(401), FATAL),
    ("HTTP 404", HttpError(404), FATAL),
    ("HTTP 408", HttpError(408), TRANS),
    ("HTTP 409", HttpError(409), TRANS),
    ("HTTP 425", HttpError(425), TRANS),
    ("HTTP 502", HttpError(502), TRANS),
    ("unknown RuntimeError", RuntimeError("something unknown"), TRANS),
]


def mismatches(classifier: Callable[[BaseException], ErrorClass]) -> list[str]:
    """The cases ``classifier`` gets wrong, as ``name: got X, want Y``."""
    wrong = []
    for name, exc, want in CASES:
        got = classifier(exc)
        if got is not want:
            wrong.append(f"{name}: got {got}, want {want}")
    return wrong


@pytest.mark.parametrize(("name", "exc", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_error_has_its_exact_class(name: str, exc: BaseException, expected: ErrorClass) -> None:
    assert classify_error(exc) is expected
    assert LiteLLMAgent(M, "IO").classify_error(exc) is expected


def test_every_litellm_type_the_classifier_names_is_in_the_table() -> None:
    named = {"RateLimitError", *FATAL_LITELLM_ERRORS, *TRANSIENT_LITELLM_ERRORS}
    assert all(hasattr(ex, n) for n in named), "a named type is gone from litellm.exceptions"
    assert named <= {c[0] for c in CASES}


def _ignore_causes(monkeypatch: pytest.MonkeyPatch) -> Callable[[BaseException], ErrorClass]:
    monkeypatch.setattr(errors, "exception_chain", lambda exc: [exc])
    return classify_error


def _ignore_status(monkeypatch: pytest.MonkeyPatch) -> Callable[[BaseException], ErrorClass]:
    monkeypatch.setattr(errors, "status_code", lambda exc: None)
    return classify_error


BROKEN: dict[str, Callable[[pytest.MonkeyPatch], Callable[[BaseException], ErrorClass]]] = {
    "always TRANSIENT (unknown for everything)": lambda mp: lambda exc: TRANS,
    "always FATAL": lambda mp: lambda exc: FATAL,
    "always RATE_LIMIT": lambda mp: lambda exc: RATE,
    "misses causes wrapped by litellm": _ignore_causes,
    "ignores HTTP status codes": _ignore_status,
}


@pytest.mark.parametrize("broken", BROKEN, ids=list(BROKEN))
def test_a_broken_classifier_fails_the_table(broken: str, monkeypatch: pytest.MonkeyPatch) -> None:
    assert mismatches(BROKEN[broken](monkeypatch)), f"the table does not catch a classifier that {broken}"


def test_the_real_classifier_passes_the_table() -> None:
    assert mismatches(classify_error) == []


def test_agent_call_kwargs_and_params() -> None:
    from coopeval.agents.protocol import DecisionRequest
    from coopeval.decisions.formats import ActionDistribution

    fmt = ActionDistribution(("A0", "A1"))
    req = DecisionRequest(({"role": "user", "content": "hi"},), fmt, seed=42)
    api = LiteLLMAgent(
        "openrouter/openai/gpt-5.2", "CoT", {"reasoning_effort": "low", "timeout": 30}, "GPT-5.2"
    )
    assert api.name == "GPT-5.2(CoT)" and api.cacheable and not api.uses_local_llm
    assert dict(api.params) == {
        "reasoning_effort": "low",
        "temperature": 1.0,
    }  # no timeout in the key
    kw = api.call_kwargs(req)
    assert (
        kw["num_retries"] == 0 and kw["timeout"] == 30 and "seed" not in kw and "grammar" not in kw
    )
    seeded = LiteLLMAgent("openai/gpt-4o", "IO", {"send_seed": True})
    kw = seeded.call_kwargs(req)
    assert kw["seed"] == 42 and "send_seed" not in kw
    with pytest.raises(ValueError):
        LiteLLMAgent(M, "ReAct")


def test_api_call_errors_propagate_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """A model without a key fails with litellm's own exception (no network: bad api_base)."""
    from coopeval.agents.protocol import DecisionRequest
    from coopeval.decisions.formats import Signature

    agent = LiteLLMAgent(
        "openai/gpt-4o-mini", "IO", {"api_base": "http://127.0.0.1:9/v1", "timeout": 2}
    )
    req = DecisionRequest(({"role": "user", "content": "hi"},), Signature())
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    with pytest.raises(Exception) as info:
        asyncio.run(agent.generate(req))
    assert agent.classify_error(info.value) is ErrorClass.TRANSIENT
