"""The litellm agent: one :class:`~coopeval.agents.protocol.Agent` for any litellm model string.

Model strings are litellm's ``provider/model`` form: ``openai/…``, ``anthropic/…``, ``gemini/…``,
``openrouter/…``, ``hosted_vllm/…``, ``ollama/…``, and the embedded ``local/smollm2-135m``
(:mod:`coopeval.agents.local`). litellm is imported lazily, on the first call, with
``LITELLM_OFFLINE_MODE`` / ``LITELLM_LOCAL_MODEL_COST_MAP`` set first (docs/protocol/engineering.md#litellm);
merely building an agent never imports it.

Calls are single attempts (``num_retries=0``): retries belong to
:func:`coopeval.agents.retry.generate_with_retry`, driven by :meth:`LiteLLMAgent.classify_error`.

Provider faults the agent turns into exceptions (never into answers):

* a 200 reply without choices, or with no (or blank) content, no completion tokens and no
  reasoning →
  :class:`~coopeval.agents.protocol.EmptyReplyError` (``TRANSIENT``);
* an attempt running past ``deadline_s`` wall seconds (a server that sends headers and then
  drips bytes defeats httpx's per-read ``timeout``) →
  :class:`~coopeval.agents.protocol.AttemptDeadlineError` (``TRANSIENT``);
* HTTP 401/403 → :class:`ProviderAuthError` naming the API-key variable (``FATAL``).
"""

from __future__ import annotations

import asyncio
import copy
import difflib
import functools
import logging
import os
import sys
import time
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from types import ModuleType
from typing import Any

from coopeval.agents import structured
from coopeval.agents.endpoint import request_endpoint
from coopeval.agents.grammar import COT_GRAMMAR_VERSION, DEFAULT_MAX_REASONING_CHARS, gbnf_for, max_tokens_for
from coopeval.agents.protocol import (
    AttemptDeadlineError,
    DecisionRequest,
    EmptyReplyError,
    ErrorClass,
    Reply,
    RequestRejectedError,
)
from coopeval.agents.registry import uses_local_llm
from coopeval.cache.response_cache import ResponseCache, call_key

__all__ = [
    "AGENT_OPTION_KEYS",
    "DEFAULT_DEADLINE_S",
    "ProviderAuthError",
    "billed_usage",
    "TRANSPORT_KEYS",
    "LiteLLMAgent",
    "PriceTable",
    "classify_error",
    "load_prices",
    "option_error",
    "provider_error",
    "required_env_vars",
]

log = logging.getLogger(__name__)


AGENT_OPTION_KEYS = frozenset(
    {"send_seed", "max_reasoning_chars", "cot_grammar", "structured_output", "grammar_field"}
)
"""Keys of ``params`` read by the agent itself and never sent to litellm.

``send_seed`` (bool, default False): pass ``request.seed`` to API models (always sent to local
ones). ``max_reasoning_chars`` (int): CoT reasoning cap of the local model's grammar (and of a
constrained remote one). ``cot_grammar`` (set by the agent, local CoT only): the version of the
CoT grammar's reasoning rule (:data:`~coopeval.agents.grammar.COT_GRAMMAR_VERSION`); in
``params``, hence in the cache key, so answers decoded under an older grammar are not replayed.
``structured_output`` (``none`` | ``json_schema`` | ``grammar`` | ``auto``, default ``none``) and
``grammar_field``: constrained decoding by the provider (:mod:`coopeval.agents.structured`)."""

TRANSPORT_KEYS = frozenset(
    {"timeout", "api_base", "api_version", "extra_headers", "cache_prompt", "deadline_s"}
)
"""Keys of ``params`` that steer the transport only (``cache_prompt``: the local model's
prompt-prefix reuse, default on; ``deadline_s``: the wall-clock deadline of one attempt, never
sent). They are kept out of :attr:`LiteLLMAgent.params`; of them only ``api_base``/``api_version``
enter the cache key, as :attr:`LiteLLMAgent.endpoint` (:mod:`coopeval.agents.endpoint`)."""

DEFAULT_DEADLINE_S = 600.0
"""Wall-clock seconds one attempt of an API model may take unless ``params.deadline_s`` says
otherwise. The embedded model has none by default: its llama.cpp call cannot be interrupted,
so a deadline would only abandon it (set ``deadline_s`` to fail such calls anyway)."""


def option_error(params: Mapping[str, Any]) -> str | None:
    """Why the agent options in ``params`` (:data:`AGENT_OPTION_KEYS` and ``deadline_s``) are
    invalid, naming the key (``params.<key> …; <fix>``), or ``None`` if they are valid.

    The config checks call it before any model call; :class:`LiteLLMAgent` raises it as a
    ``ValueError``. Sampling parameters are the provider's business and are not checked.
    """
    try:
        structured.check_options(
            params.get("structured_output", "none"), params.get("grammar_field", structured.DEFAULT_GRAMMAR_FIELD)
        )
    except ValueError as exc:
        return str(exc)
    cap = params.get("max_reasoning_chars")
    if cap is not None and (isinstance(cap, bool) or not isinstance(cap, int) or cap < 0):
        return f"params.max_reasoning_chars is {cap!r}; use a whole number of characters >= 0 (default {DEFAULT_MAX_REASONING_CHARS})"
    deadline = params.get("deadline_s")
    if deadline is not None and (isinstance(deadline, bool) or not isinstance(deadline, int | float) or deadline <= 0):
        return f"params.deadline_s is {deadline!r}; use a positive number of seconds (default {DEFAULT_DEADLINE_S:g})"
    if not isinstance(params.get("send_seed", False), bool):
        return f"params.send_seed is {params['send_seed']!r}; use true or false"
    return None


_PROVIDER_KEYS: dict[str, list[str]] = {
    "openai": ["OPENAI_API_KEY"],
    "anthropic": ["ANTHROPIC_API_KEY"],
    "gemini": ["GEMINI_API_KEY"],
    "openrouter": ["OPENROUTER_API_KEY"],
    "mistral": ["MISTRAL_API_KEY"],
    "groq": ["GROQ_API_KEY"],
    "deepseek": ["DEEPSEEK_API_KEY"],
    "xai": ["XAI_API_KEY"],
    "together_ai": ["TOGETHERAI_API_KEY"],
    "local": [],
    "ollama": [],
    "ollama_chat": [],
    "hosted_vllm": [],
}

_DEFAULT_PRICES = Path(str(files("coopeval").joinpath("data/prices.yaml")))


# --------------------------------------------------------------------------------------------
# environment and prices
# --------------------------------------------------------------------------------------------


def required_env_vars(model: str) -> list[str]:
    """Environment variables holding the API key(s) ``model`` needs (for Snakemake ``envvars:``).

    ``openai/…`` → ``["OPENAI_API_KEY"]``, ``anthropic/…`` → ``["ANTHROPIC_API_KEY"]``,
    ``gemini/…`` → ``["GEMINI_API_KEY"]``, ``openrouter/…`` → ``["OPENROUTER_API_KEY"]``;
    ``local/``, ``ollama/`` and ``hosted_vllm/`` need none. A bare name without provider prefix
    is resolved like litellm does for the common families (``gpt-``/``o1``… → OpenAI,
    ``claude`` → Anthropic, ``gemini`` → Gemini). Unknown providers → ``[]``.
    """
    provider, sep, rest = model.partition("/")
    if sep and provider in _PROVIDER_KEYS:
        return list(_PROVIDER_KEYS[provider])
    name = model.lower()
    if not sep or not rest:
        if name.startswith(("gpt-", "o1", "o3", "o4", "chatgpt")):
            return ["OPENAI_API_KEY"]
        if name.startswith("claude"):
            return ["ANTHROPIC_API_KEY"]
        if name.startswith("gemini"):
            return ["GEMINI_API_KEY"]
    return []


class PriceTable:
    """Pinned prices (US dollars per million tokens) read from ``coopeval/data/prices.yaml``."""

    def __init__(self, models: Mapping[str, Mapping[str, Any]]) -> None:
        self._models = {str(k): dict(v) for k, v in models.items()}

    def known(self, model: str) -> bool:
        """Whether ``model`` has an entry."""
        return model in self._models

    def cost_usd(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        """Cost of one call in US dollars; ``0.0`` for unknown models (check :meth:`known`).

        ``completion_tokens`` are all billed output tokens, reasoning included (see
        :func:`billed_usage`)."""
        entry = self._models.get(model)
        if entry is None:
            return 0.0
        per_in = float(entry.get("input_usd_per_mtok", 0.0))
        per_out = float(entry.get("output_usd_per_mtok", 0.0))
        return (prompt_tokens * per_in + completion_tokens * per_out) / 1_000_000


@functools.lru_cache(maxsize=8)
def load_prices(path: str | None = None) -> PriceTable:
    """Load the price table from ``path``, ``$COOPEVAL_PRICES`` or the repository's
    ``coopeval/data/prices.yaml``. A missing file gives an empty table (every model unknown)."""
    import yaml

    chosen = Path(path or os.environ.get("COOPEVAL_PRICES") or _DEFAULT_PRICES)
    if not chosen.is_file():
        log.warning("price table %s not found; every cost is reported as 0", chosen)
        return PriceTable({})
    data = yaml.safe_load(chosen.read_text(encoding="utf-8")) or {}
    return PriceTable(data.get("models") or {})


def billed_usage(usage: Any) -> tuple[int, int, int]:
    """``(prompt_tokens, billed_output_tokens, reasoning_tokens)`` of a litellm ``Usage``.

    Reasoning tokens are read from ``completion_tokens_details.reasoning_tokens`` (or a
    top-level ``reasoning_tokens``). OpenAI counts them inside ``completion_tokens``; some
    providers report them outside it. They are taken to be outside, and added to the billed
    output, when ``total_tokens >= prompt + completion + reasoning`` or when they exceed
    ``completion_tokens`` (they cannot then be part of it). Example: prompt 100, completion 20,
    reasoning 1,000, total 1,120 → ``(100, 1020, 1000)``; with OpenAI's total 1,120 for prompt
    100, completion 1,020 (reasoning 1,000 inside) → ``(100, 1020, 1000)`` too.
    """
    prompt = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion = int(getattr(usage, "completion_tokens", 0) or 0)
    details = getattr(usage, "completion_tokens_details", None)
    reasoning = int(
        getattr(details, "reasoning_tokens", 0) or getattr(usage, "reasoning_tokens", 0) or 0
    )
    total = int(getattr(usage, "total_tokens", 0) or 0)
    outside = reasoning > 0 and (total >= prompt + completion + reasoning or reasoning > completion)
    return prompt, completion + (reasoning if outside else 0), reasoning


# --------------------------------------------------------------------------------------------
# error classification
# --------------------------------------------------------------------------------------------


class ProviderAuthError(RuntimeError):
    """The provider refused the credentials (HTTP 401/403); ``FATAL``, never retried.

    The message names the model, the status and the environment variable(s) holding its key.
    """


def classify_error(exc: BaseException) -> ErrorClass:
    """Classify a transport exception for the retry loop (docs/protocol/engineering.md#litellm).

    * litellm ``RateLimitError`` or HTTP 429 → ``RATE_LIMIT``;
    * ``AuthenticationError``, ``PermissionDeniedError``, ``BadRequestError`` (including
      ``ContextWindowExceededError`` and ``ContentPolicyViolationError``), ``NotFoundError``,
      ``UnprocessableEntityError``, ``BudgetExceededError``, ``UnsupportedParamsError``, other
      HTTP 4xx, and the local provider's own errors (missing weights, invalid grammar, context
      window; found through the exception chain, since litellm wraps them) → ``FATAL``;
    * :class:`ProviderAuthError`, :class:`~coopeval.agents.protocol.RequestRejectedError` →
      ``FATAL``;
    * ``Timeout``, ``APIConnectionError``, ``ServiceUnavailableError``, ``InternalServerError``,
      ``BadGatewayError``, HTTP 5xx/408, builtin ``TimeoutError``/``ConnectionError``
      (:class:`~coopeval.agents.protocol.AttemptDeadlineError` included),
      :class:`~coopeval.agents.protocol.EmptyReplyError` → ``TRANSIENT``;
    * anything else → ``TRANSIENT`` (a few retries, then the error propagates).
    """
    from coopeval.agents.local import LocalProviderError

    if isinstance(exc, ProviderAuthError | RequestRejectedError):
        return ErrorClass.FATAL
    if isinstance(exc, EmptyReplyError | TimeoutError):
        return ErrorClass.TRANSIENT
    chain = _exception_chain(exc)
    if any(isinstance(e, LocalProviderError) for e in chain):
        return ErrorClass.FATAL
    litellm = sys.modules.get("litellm")
    if litellm is not None:
        ex = litellm.exceptions
        if isinstance(exc, ex.RateLimitError):
            return ErrorClass.RATE_LIMIT
        fatal = tuple(
            getattr(ex, name)
            for name in (
                "AuthenticationError",
                "PermissionDeniedError",
                "BadRequestError",
                "NotFoundError",
                "UnprocessableEntityError",
                "BudgetExceededError",
                "UnsupportedParamsError",
            )
            if hasattr(ex, name)
        )
        if isinstance(exc, fatal):
            return ErrorClass.FATAL
        transient = tuple(
            getattr(ex, name)
            for name in (
                "Timeout",
                "APIConnectionError",
                "ServiceUnavailableError",
                "InternalServerError",
                "BadGatewayError",
            )
            if hasattr(ex, name)
        )
        if isinstance(exc, transient):
            return ErrorClass.TRANSIENT
    status = _status_code(exc)
    if status is not None:
        if status == 429:
            return ErrorClass.RATE_LIMIT
        if status in (408, 409, 425) or status >= 500:
            return ErrorClass.TRANSIENT
        if 400 <= status < 500:
            return ErrorClass.FATAL
    return ErrorClass.TRANSIENT


def _exception_chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 16:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _status_code(exc: BaseException) -> int | None:
    for attr in ("status_code", "status"):
        value = getattr(exc, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    response = getattr(exc, "response", None)
    value = getattr(response, "status_code", None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# --------------------------------------------------------------------------------------------
# the agent
# --------------------------------------------------------------------------------------------


_UNPRICED_WARNED: set[str] = set()
"""Models this process has already warned about missing from the price table."""


def _import_litellm() -> ModuleType:
    os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.suppress_debug_info = True  # no "Provider List"/"Give Feedback" lines on stdout
    return litellm


def provider_error(model: str) -> str | None:
    """Why litellm cannot route ``model`` (e.g. a misspelt provider prefix such as
    ``openaii/gpt-4o``), naming the closest known providers; ``None`` if it can.

    Imports litellm (1-4 s), so the workflow asks once per run, in its main process before the
    first job starts, not while it builds the DAG.
    """
    litellm = _import_litellm()
    try:
        litellm.get_llm_provider(model)
    except litellm.BadRequestError:  # "LLM Provider NOT provided"
        prefix = model.split("/", 1)[0]
        known = sorted(str(getattr(p, "value", p)) for p in litellm.provider_list)
        close = difflib.get_close_matches(prefix, known, n=3) or [p for p in _PROVIDER_KEYS if p != "local"]
        return f"litellm knows no provider {prefix!r} in {model!r}; did you mean {' or '.join(close)}? (see litellm's provider list)"
    return None


class LiteLLMAgent:
    """An LLM player reached through ``litellm.acompletion``.

    Parameters
    ----------
    model:
        A litellm model string, e.g. ``"openrouter/openai/gpt-5.2"`` or ``"local/smollm2-135m"``.
    style:
        ``"CoT"`` or ``"IO"``. The prompt instruction is rendered elsewhere; here the style only
        selects the local model's grammar and token budget.
    params:
        Sampling parameters sent with every call (``temperature`` defaults to 1.0; e.g.
        ``max_tokens``, ``top_p``, ``reasoning_effort``), plus the agent options of
        :data:`AGENT_OPTION_KEYS` and the transport options of :data:`TRANSPORT_KEYS`.
        For ``local/`` models, ``max_tokens`` defaults to the grammar's bound
        (:func:`~coopeval.agents.grammar.max_tokens_for`) so an answer is never cut short.
    label:
        Human label; ``name`` is ``f"{label or model}({style})"``.

    Attributes
    ----------
    params:
        Everything that determines the answer (sampling parameters and agent options; no
        transport options). Part of the response-cache key.
    price_known:
        False once a call was priced for a model missing from ``coopeval/data/prices.yaml`` (its
        cost is then reported as 0).

    Raises
    ------
    ValueError
        Unknown style; ``params.deadline_s`` not a positive number.
    coopeval.agents.local.LocalModelMissingError
        A ``local/`` model whose weights are not installed.
    """

    cacheable: bool = True

    def __init__(
        self,
        model: str,
        style: str = "CoT",
        params: Mapping[str, Any] | None = None,
        label: str | None = None,
    ) -> None:
        if style not in ("CoT", "IO"):
            raise ValueError(f"style must be 'CoT' or 'IO', not {style!r}")
        self.model = model
        self.style = style
        self.label = label
        self.name = f"{label or model}({style})"
        self.is_local = uses_local_llm(model)
        self.uses_local_llm = self.is_local
        given = dict(params or {})
        if (problem := option_error(given)) is not None:
            raise ValueError(f"{self.name}: {problem}")
        self._transport = {k: given.pop(k) for k in list(given) if k in TRANSPORT_KEYS}
        # who answers (api_base/api_version or the provider's env base): part of the cache key
        self.endpoint = {} if self.is_local else request_endpoint(model, self._transport)
        given.setdefault("temperature", 1.0)
        self.structured_output = self._structured_choice(given)
        self._prepare_lock = asyncio.Lock()
        if (self.is_local or self.structured_output != "none") and style == "CoT":
            given.setdefault("max_reasoning_chars", DEFAULT_MAX_REASONING_CHARS)
            given["cot_grammar"] = COT_GRAMMAR_VERSION
        self.params: Mapping[str, Any] = dict(sorted(given.items()))
        self._send_seed = self.is_local or bool(given.get("send_seed", False))
        self._sampling = {k: v for k, v in given.items() if k not in AGENT_OPTION_KEYS}
        self.price_known = True
        self._litellm: ModuleType | None = None
        if self.is_local:
            from coopeval.agents.local import local_model_path

            local_model_path(model.split("/", 1)[1])  # fail fast, without importing llama.cpp

    def for_seat(self) -> LiteLLMAgent:
        """A copy for one seat (:func:`coopeval.agents.seats.seat_agent`): the agent keeps no
        per-conversation state, so a shallow copy sharing the imported client suffices."""
        return copy.copy(self)

    def _structured_choice(self, given: dict[str, Any]) -> str:
        """Validate and normalise ``structured_output``/``grammar_field`` in ``given`` (in place).

        ``none`` leaves no trace in the params (cache keys as before the option existed); the
        embedded model always decodes under its grammar in-process (recorded as ``grammar``).
        """
        mode = given.get("structured_output", "none")
        self._grammar_field = given.get("grammar_field", structured.DEFAULT_GRAMMAR_FIELD)
        structured.check_options(mode, self._grammar_field)
        self._prepared = mode == "none" or self.is_local
        if mode == "none" or self.is_local:
            given.pop("structured_output", None)
            given.pop("grammar_field", None)
            return "grammar" if self.is_local else "none"
        if mode == "grammar":
            given["grammar_field"] = self._grammar_field  # the field changes the request
        else:
            given.pop("grammar_field", None)
        return str(mode)

    async def prepare(self, cache: ResponseCache | None = None) -> None:
        """Probe the structured-output constraint once, before the first decision (job start).

        Resolves ``auto`` (then :attr:`params` holds the chosen mode, so cache keys carry the
        choice). A passing probe reply is cached in ``cache`` (replays cost nothing); a failing
        one is not.

        Raises
        ------
        coopeval.agents.structured.StructuredOutputError
            The server does not apply the configured constraint.
        """
        if self._prepared:
            return
        async with self._prepare_lock:  # concurrent first decisions probe once
            if not self._prepared:
                await self._probe(cache)

    async def _probe(self, cache: ResponseCache | None) -> None:
        litellm = self._client()

        async def send(mode: str) -> str:
            request = structured.probe_request(mode, self._grammar_field)
            probe_params = {"structured_output": mode, "grammar_field": self._grammar_field}
            key = call_key(self.model, request["messages"], probe_params, {"probe": mode}, 0, self.endpoint)
            cached = cache.get(key) if cache is not None else None
            if cached is not None:
                return Reply.from_json(cached).text
            response = await litellm.acompletion(model=self.model, num_retries=0, **self._transport, **request)
            text = getattr(response.choices[0].message, "content", None) or ""
            if cache is not None and structured.probe_passed(text):
                cache.set(key, Reply(text=text).to_json())
            return text

        try:
            supports = bool(litellm.supports_response_schema(model=self.model))
        except Exception:  # litellm raises for models missing from its capability data
            supports = False
        chosen = await structured.resolve_mode(self.structured_output, send, supports, self.name)
        if chosen != self.structured_output:
            params = {k: v for k, v in self.params.items() if k not in ("structured_output", "grammar_field")}
            if chosen != "none":
                params["structured_output"] = chosen
            if chosen == "grammar":
                params["grammar_field"] = self._grammar_field
            self.params = dict(sorted(params.items()))
            self.structured_output = chosen
        self._prepared = True

    def __repr__(self) -> str:
        return f"LiteLLMAgent({self.model!r}, style={self.style!r}, params={dict(self.params)!r})"

    def _client(self) -> ModuleType:
        if self._litellm is None:
            litellm = _import_litellm()
            if self.is_local:
                from coopeval.agents.local import register_local_provider

                register_local_provider()
            self._litellm = litellm
        return self._litellm

    @property
    def deadline_s(self) -> float | None:
        """Wall-clock seconds one attempt may take (``params.deadline_s``; default
        :data:`DEFAULT_DEADLINE_S` for API models, none for the embedded model)."""
        given = self._transport.get("deadline_s")
        if given is None:
            return None if self.is_local else DEFAULT_DEADLINE_S
        return float(given)

    def call_kwargs(self, request: DecisionRequest) -> dict[str, Any]:
        """The keyword arguments :meth:`generate` passes to ``litellm.acompletion``."""
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in request.messages],
            "num_retries": 0,
            **self._sampling,
            **{k: v for k, v in self._transport.items() if k != "deadline_s"},
        }
        if self.is_local:
            cap = int(self.params.get("max_reasoning_chars", DEFAULT_MAX_REASONING_CHARS))
            kwargs["grammar"] = gbnf_for(request.answer_format, self.style, cap)
            kwargs.setdefault("max_tokens", max_tokens_for(request.answer_format, self.style, cap))
        elif self.structured_output != "none":
            cap = int(self.params.get("max_reasoning_chars", DEFAULT_MAX_REASONING_CHARS))
            extra = structured.structured_output_kwargs(
                self.structured_output, request.answer_format, self.style, cap, self._grammar_field
            )
            if "extra_body" in extra:
                extra["extra_body"] = {**dict(kwargs.get("extra_body") or {}), **extra["extra_body"]}
            kwargs.update(extra)
            if self.structured_output == "grammar":
                kwargs.setdefault("max_tokens", max_tokens_for(request.answer_format, self.style, cap))
        if self._send_seed and request.seed is not None:
            kwargs["seed"] = int(request.seed)
        return kwargs

    async def generate(self, request: DecisionRequest) -> Reply:
        """Make one call (no retries) and return the raw answer.

        Returns
        -------
        Reply
            ``text`` is the message content (``""`` if the provider returned none, with
            completion or reasoning tokens); tokens from the provider's usage (reasoning tokens
            billed outside the completion count are added to ``cost_usd``, see
            :func:`billed_usage`); ``finish_reason``, ``max_tokens`` and the provider's separate
            ``reasoning`` text; ``latency_s`` wall seconds of the call; ``cost_usd`` from the
            pinned price table.

        Raises
        ------
        EmptyReplyError
            No choices, or no content (blank), no completion tokens and no reasoning (a
            provider fault).
        AttemptDeadlineError
            The call took longer than :attr:`deadline_s`.
        ProviderAuthError
            HTTP 401/403.
        RequestRejectedError
            The prompt does not fit the model's context window with its answer budget
            (litellm's ``ContextWindowExceededError``, or the embedded model's
            :class:`~coopeval.agents.local.LocalContextWindowError`, unwrapped from litellm's
            wrapper so the decision loop sees it).
        Exception
            litellm's other transport exceptions, unchanged (see :meth:`classify_error`).
        """
        litellm = self._client()
        kwargs = self.call_kwargs(request)
        deadline = self.deadline_s
        started = time.perf_counter()
        try:
            response = await asyncio.wait_for(litellm.acompletion(**kwargs), deadline)
        except TimeoutError as exc:
            if deadline is None or time.perf_counter() - started < deadline:
                raise  # a timeout raised by the transport itself, not our deadline
            raise AttemptDeadlineError(
                f"{self.model}: no complete reply within deadline_s = {deadline:g} s "
                "(params.deadline_s of the agent); retried as a transient timeout"
            ) from exc
        except Exception as exc:
            rejected = next(
                (e for e in _exception_chain(exc) if isinstance(e, RequestRejectedError)), None
            )
            if rejected is not None:
                raise rejected from None
            if isinstance(exc, litellm.exceptions.ContextWindowExceededError):
                raise RequestRejectedError(f"{self.model}: the prompt does not fit: {exc}") from exc
            if _status_code(exc) in (401, 403):
                keys = " or ".join(required_env_vars(self.model)) or "the provider's API key"
                raise ProviderAuthError(
                    f"{self.model}: the provider refused the credentials (HTTP {_status_code(exc)}); "
                    f"set {keys} to a valid key for this provider (not retried, nothing cached)"
                ) from exc
            raise
        latency = time.perf_counter() - started
        choices = list(getattr(response, "choices", None) or [])
        if not choices:
            raise EmptyReplyError(f"{self.model}: the provider returned a reply without choices; retried")
        choice = choices[0]
        message = choice.message
        text = getattr(message, "content", None) or ""
        reasoning = str(getattr(message, "reasoning_content", None) or "")
        if self.structured_output == "json_schema" and self.style == "CoT":
            text = structured.unwrap_reasoning(text)
        usage = getattr(response, "usage", None)
        prompt_tokens, billed_output, reasoning_tokens = billed_usage(usage)
        completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
        if not text.strip() and not reasoning and completion_tokens == 0 and reasoning_tokens == 0:
            raise EmptyReplyError(
                f"{self.model}: the provider returned an empty reply (no content, no completion "
                f"tokens, finish_reason {getattr(choice, 'finish_reason', None)!r}); retried"
            )
        prices = load_prices()
        if not prices.known(self.model) and self.price_known:
            self.price_known = False
            if self.model not in _UNPRICED_WARNED:  # once per model and process, not per seat
                _UNPRICED_WARNED.add(self.model)
                log.warning("no pinned price for %s; its cost is reported as 0", self.model)
        return Reply(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=latency,
            cost_usd=prices.cost_usd(self.model, prompt_tokens, billed_output),
            model_resolved=str(getattr(response, "model", "") or ""),
            response_id=str(getattr(response, "id", "") or ""),
            finish_reason=str(getattr(choice, "finish_reason", "") or ""),
            max_tokens=int(kwargs.get("max_tokens") or kwargs.get("max_completion_tokens") or 0),
            reasoning_tokens=reasoning_tokens,
            reasoning=reasoning,
        )

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """See :func:`classify_error`."""
        return classify_error(exc)
