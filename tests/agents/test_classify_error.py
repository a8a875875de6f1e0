"""Transport-error classification of :class:`LiteLLMAgent` (docs/protocol/engineering.md#litellm)."""

from __future__ import annotations

import asyncio
import os

import pytest

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
litellm = pytest.importorskip("litellm")
httpx = pytest.importorskip("httpx")

from coopeval.agents.llm_agent import LiteLLMAgent, classify_error, required_env_vars  # noqa: E402
from coopeval.agents.local import GrammarError, LocalModelMissingError  # noqa: E402
from coopeval.agents.protocol import ErrorClass  # noqa: E402

ex = litellm.exceptions
M, P = "openai/gpt-4o-mini", "openai"


def _response(status: int) -> httpx.Response:
    return httpx.Response(status, request=httpx.Request("POST", "https://example.invalid/v1/chat"))


CASES = [
    (ex.RateLimitError("slow down", P, M), ErrorClass.RATE_LIMIT),
    (ex.Timeout("timed out", M, P), ErrorClass.TRANSIENT),
    (ex.APIConnectionError("connection reset", P, M), ErrorClass.TRANSIENT),
    (ex.ServiceUnavailableError("503", P, M), ErrorClass.TRANSIENT),
    (ex.InternalServerError("500", P, M), ErrorClass.TRANSIENT),
    (ex.BadGatewayError("502", P, M), ErrorClass.TRANSIENT),
    (ex.APIError(503, "upstream", P, M), ErrorClass.TRANSIENT),
    (ex.APIError(429, "too many", P, M), ErrorClass.RATE_LIMIT),
    (ex.APIError(400, "bad", P, M), ErrorClass.FATAL),
    (ex.AuthenticationError("bad key", P, M), ErrorClass.FATAL),
    (ex.BadRequestError("bad request", M, P), ErrorClass.FATAL),
    (ex.ContextWindowExceededError("too long", M, P), ErrorClass.FATAL),
    (ex.ContentPolicyViolationError("filtered", M, P), ErrorClass.FATAL),
    (ex.NotFoundError("no such model", M, P), ErrorClass.FATAL),
    (ex.PermissionDeniedError("denied", P, M, response=_response(403)), ErrorClass.FATAL),
    (ex.UnprocessableEntityError("422", M, P, response=_response(422)), ErrorClass.FATAL),
    (ex.UnsupportedParamsError("seed not supported", P, M), ErrorClass.FATAL),
    (TimeoutError("socket"), ErrorClass.TRANSIENT),
    (ConnectionResetError("reset"), ErrorClass.TRANSIENT),
    (RuntimeError("something unknown"), ErrorClass.TRANSIENT),
    (LocalModelMissingError("run pip install"), ErrorClass.FATAL),
]


@pytest.mark.parametrize(("exc", "expected"), CASES, ids=lambda v: type(v).__name__)
def test_classification(exc: BaseException, expected: ErrorClass) -> None:
    assert classify_error(exc) is expected
    assert LiteLLMAgent(M, "IO").classify_error(exc) is expected


def test_wrapped_local_errors_are_fatal() -> None:
    # litellm wraps exceptions raised inside a CustomLLM handler in APIConnectionError
    wrapped = ex.APIConnectionError(
        "llama.cpp could not parse the GBNF grammar", "local", "smollm2-135m"
    )
    try:
        try:
            raise GrammarError("bad grammar")
        except GrammarError:
            raise wrapped  # noqa: B904 - the implicit __context__ is what litellm leaves behind
    except ex.APIConnectionError as caught:
        assert classify_error(caught) is ErrorClass.FATAL


def test_status_code_fallback_without_litellm_types() -> None:
    class HttpError(Exception):
        def __init__(self, status_code: int) -> None:
            super().__init__(status_code)
            self.status_code = status_code

    assert classify_error(HttpError(429)) is ErrorClass.RATE_LIMIT
    assert classify_error(HttpError(502)) is ErrorClass.TRANSIENT
    assert classify_error(HttpError(401)) is ErrorClass.FATAL
    assert classify_error(HttpError(408)) is ErrorClass.TRANSIENT


def test_required_env_vars() -> None:
    assert required_env_vars("openai/gpt-4o") == ["OPENAI_API_KEY"]
    assert required_env_vars("anthropic/claude-sonnet-4.5") == ["ANTHROPIC_API_KEY"]
    assert required_env_vars("gemini/gemini-3-flash-preview") == ["GEMINI_API_KEY"]
    assert required_env_vars("openrouter/qwen/qwen3-30b-a3b-instruct-2507") == [
        "OPENROUTER_API_KEY"
    ]
    for keyless in ("local/smollm2-135m", "ollama/llama3", "hosted_vllm/my-model"):
        assert required_env_vars(keyless) == []
    assert required_env_vars("gpt-4o") == ["OPENAI_API_KEY"]
    assert required_env_vars("someprovider/x") == []


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
