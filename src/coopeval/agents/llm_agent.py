"""The litellm agent: one :class:`~coopeval.agents.protocol.Agent` for any litellm model string.

Model strings are litellm's ``provider/model`` form: ``openai/…``, ``anthropic/…``, ``gemini/…``,
``openrouter/…``, ``hosted_vllm/…``, ``ollama/…``, and the embedded ``local/smollm2-135m``
(:mod:`coopeval.agents.local`). litellm is imported lazily, on the first call
(:func:`coopeval.agents.litellm_client.import_litellm`); merely building an agent never imports it.
The provider entries that build these agents are in :mod:`coopeval.agents.litellm_provider`; the
agent's options in :mod:`coopeval.agents.options`, prices in :mod:`coopeval.agents.prices`, error
classification in :mod:`coopeval.agents.errors`.

Calls are single attempts (``num_retries=0``): retries belong to
:func:`coopeval.agents.retry.generate_with_retry`, driven by :meth:`LiteLLMAgent.classify_error`.

Provider faults the agent turns into exceptions (never into answers):

* a 200 reply without choices, or with no (or blank) content, no completion tokens and no
  reasoning →
  :class:`~coopeval.agents.protocol.EmptyReplyError` (``TRANSIENT``);
* an attempt running past ``deadline_s`` wall seconds (a server that sends headers and then
  drips bytes defeats httpx's per-read ``timeout``) →
  :class:`~coopeval.agents.protocol.AttemptDeadlineError` (``TRANSIENT``);
* HTTP 401/403 → :class:`~coopeval.agents.errors.ProviderAuthError` naming the API-key
  variable (``FATAL``).

Length: about 430 lines, one class on purpose: the call path (structured-output probe, request
arguments, the call under its deadline, the reply and its faults) reads in order and shares the
agent's resolved options; every part that stands alone is already its own module (options,
prices, error classification, format probes, structured outputs, context window).
"""

from __future__ import annotations

import asyncio
import copy
import time
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from coopeval.agents import context_window, structured
from coopeval.agents.endpoint import request_endpoint
from coopeval.agents.errors import ProviderAuthError, classify_error, exception_chain, status_code
from coopeval.agents.format_probes import (
    format_probe_request,
    probe_constraint,
    probe_max_tokens,
    warn_unconstrained,
)
from coopeval.agents.grammar import (
    COT_GRAMMAR_VERSION,
    DEFAULT_MAX_REASONING_CHARS,
    gbnf_for,
    max_tokens_for,
)
from coopeval.agents.litellm_client import api_key_variables, import_litellm
from coopeval.agents.local.catalogue import local_model_name
from coopeval.agents.local.identity import weights_key
from coopeval.agents.local.registration import register_local_provider
from coopeval.agents.options import (
    AGENT_OPTION_KEYS,
    DEFAULT_DEADLINE_S,
    TRANSPORT_KEYS,
    option_error,
)
from coopeval.agents.prices import billed_usage, cached_prompt_tokens, load_prices, warn_unpriced
from coopeval.agents.protocol import (
    AttemptDeadlineError,
    DecisionRequest,
    EmptyReplyError,
    ErrorClass,
    Reply,
    RequestRejectedError,
)
from coopeval.cache.response_cache import ResponseCache, call_key
from coopeval.core.hashing import content_hash
from coopeval.decisions.formats import AnswerFormat

__all__ = ["LiteLLMAgent"]


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
        self.is_local = local_model_name(model) is not None
        self.uses_local_llm = self.is_local
        given = dict(params or {})
        if (problem := option_error(given)) is not None:
            raise ValueError(f"{self.name}: {problem}")
        self._transport = {k: given.pop(k) for k in list(given) if k in TRANSPORT_KEYS}
        # who answers (api_base/api_version or the provider's env base): part of the cache key
        # for the embedded model: the weights that answer (encoding and file content); resolving
        # them fails fast on a missing or unusable file, without importing llama.cpp
        self.endpoint = (
            {"weights": weights_key(str(local_model_name(model)))}
            if self.is_local
            else request_endpoint(model, self._transport)
        )
        given.setdefault("temperature", 1.0)
        self.structured_output = self._structured_choice(given)
        self._prepare_lock = asyncio.Lock()
        self._probed: set[str] = set()  # constraints probed (shared by the seat copies)
        if (self.is_local or self.structured_output != "none") and style == "CoT":
            given.setdefault("max_reasoning_chars", DEFAULT_MAX_REASONING_CHARS)
            given["cot_grammar"] = COT_GRAMMAR_VERSION
        self.params: Mapping[str, Any] = dict(sorted(given.items()))
        self._send_seed = self.is_local or bool(given.get("send_seed", False))
        self._sampling = {k: v for k, v in given.items() if k not in AGENT_OPTION_KEYS}
        self.price_known = True
        self._litellm: ModuleType | None = None

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
        self.structured_requested = "grammar" if self.is_local else str(mode)
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

    async def prepare(self, cache: ResponseCache | None = None, answer_format: AnswerFormat | None = None) -> None:
        """Probe the structured-output constraint before the first call that sends it.

        Once per agent (job start): the simple probe of the mode, which resolves ``auto`` (then
        :attr:`params` holds the chosen mode, so cache keys carry the choice). Then, given the
        decision's ``answer_format``, once per distinct constraint: the probe of that format's
        own schema or grammar (:mod:`coopeval.agents.format_probes`). Passing
        probe replies are cached in ``cache`` (replays cost nothing); failing ones are not.

        Raises
        ------
        coopeval.agents.structured.StructuredOutputError
            The server does not apply the configured constraint, or not this format's.
        """
        if not self._prepared:
            async with self._prepare_lock:  # concurrent first decisions probe once
                if not self._prepared:
                    await self._probe(cache)
        if answer_format is None or self.is_local or self.structured_output == "none":
            return
        cap = int(self.params.get("max_reasoning_chars", DEFAULT_MAX_REASONING_CHARS))
        constraint = structured.structured_output_kwargs(
            self.structured_output, answer_format, self.style, cap, self._grammar_field
        )
        if not constraint:  # nothing is sent (a free-text format under json_schema): counted per call
            if f"unconstrained:{answer_format.kind}" not in self._probed:
                self._probed.add(f"unconstrained:{answer_format.kind}")
                warn_unconstrained(self.name, answer_format)
            return
        digest = content_hash(constraint, 16)
        if digest in self._probed:
            return
        async with self._prepare_lock:
            if digest not in self._probed:
                await self._probe_format(answer_format, constraint, digest, cache)
                self._probed.add(digest)

    def structured_constraint(self, answer_format: AnswerFormat) -> tuple[str, str]:
        """``(mode, field)`` of one call of ``answer_format``, as recorded in ``llm_calls``.

        ``mode`` is the resolved ``structured_output`` (``auto`` when ``auto`` found no
        constraint the server applies), ``field`` the request field that carried the
        constraint (:func:`coopeval.agents.structured.constraint_field`; ``grammar`` for the
        embedded model, which decodes under the grammar in-process).
        """
        if self.is_local:
            return "grammar", "grammar"
        if self.structured_output == "none":
            return self.structured_requested, "none"
        return self.structured_output, structured.constraint_field(self.structured_output, answer_format, self._grammar_field)

    async def _probe_format(
        self, fmt: AnswerFormat, constraint: Mapping[str, Any], digest: str, cache: ResponseCache | None
    ) -> None:
        cap = int(self.params.get("max_reasoning_chars", DEFAULT_MAX_REASONING_CHARS))
        budget = probe_max_tokens(self.structured_output, fmt, self.style, cap, self.params.get("max_tokens"))
        messages = format_probe_request(constraint, budget)["messages"]
        probe_params = {"structured_output": self.structured_output, "constraint": digest, "max_tokens": budget}
        key = call_key(self.model, messages, probe_params, {"probe": str(fmt.kind)}, 0, self.endpoint)

        async def send(request: dict[str, Any]) -> Any:
            return await self._client().acompletion(model=self.model, num_retries=0, **self._transport_kwargs(), **request)

        what = f"agent {self.name}: the {self.structured_output} constraint"
        await probe_constraint(send, key, cache, fmt, constraint, budget, what)

    async def _probe(self, cache: ResponseCache | None) -> None:
        litellm = self._client()

        async def send(mode: str) -> str:
            request = structured.probe_request(mode, self._grammar_field)
            probe_params = {"structured_output": mode, "grammar_field": self._grammar_field}
            key = call_key(self.model, request["messages"], probe_params, {"probe": mode}, 0, self.endpoint)
            cached = cache.get(key) if cache is not None else None
            if cached is not None:
                return Reply.from_json(cached).text
            response = await litellm.acompletion(model=self.model, num_retries=0, **self._transport_kwargs(), **request)
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

    def _transport_kwargs(self) -> dict[str, Any]:
        """The transport options litellm takes (``deadline_s`` is ours)."""
        return {k: v for k, v in self._transport.items() if k != "deadline_s"}

    def __repr__(self) -> str:
        return f"LiteLLMAgent({self.model!r}, style={self.style!r}, params={dict(self.params)!r})"

    def _client(self) -> ModuleType:
        if self._litellm is None:
            litellm = import_litellm()
            if self.is_local:
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

    def call_kwargs(self, request: DecisionRequest, prompt_estimate: int | None = None) -> dict[str, Any]:
        """The keyword arguments :meth:`generate` passes to ``litellm.acompletion``; with
        ``prompt_estimate`` (tokens), ``ollama/`` and ``ollama_chat/`` requests carry the window
        they need as ``num_ctx`` (:mod:`coopeval.agents.context_window`)."""
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
        if prompt_estimate is not None and context_window.states_window(self.model):
            kwargs["num_ctx"] = context_window.request_window(self.model, kwargs, prompt_estimate)
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
        coopeval.agents.context_window.PromptCutError
            The server's reported prompt tokens show it cut the prompt, or a configured
            ``num_ctx`` cannot hold it (not sent) (:mod:`coopeval.agents.context_window`).
        RequestRejectedError
            The prompt does not fit the model's context window with its answer budget
            (litellm's ``ContextWindowExceededError``, or the embedded model's
            :class:`~coopeval.agents.local.LocalContextWindowError`, unwrapped from litellm's
            wrapper so the decision loop sees it).
        Exception
            litellm's other transport exceptions, unchanged (see :meth:`classify_error`).
        """
        litellm = self._client()
        # the embedded model counts its own prompt and refuses one that does not fit: never cut
        estimate = None if self.is_local else context_window.estimate_prompt_tokens(request.messages)
        kwargs = self.call_kwargs(request, estimate)
        window = None if estimate is None else context_window.request_window(self.model, kwargs, estimate)
        tolerance = float(self.params.get("prompt_cut_tolerance", context_window.CUT_TOLERANCE))
        if estimate is not None:
            context_window.check_prompt(self.model, None, estimate, window, tolerance)
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
                (e for e in exception_chain(exc) if isinstance(e, RequestRejectedError)), None
            )
            if rejected is not None:
                raise rejected from None
            if isinstance(exc, litellm.exceptions.ContextWindowExceededError):
                raise RequestRejectedError(f"{self.model}: the prompt does not fit: {exc}") from exc
            if status_code(exc) in (401, 403):
                keys = " or ".join(api_key_variables(self.model)) or "the provider's API key"
                raise ProviderAuthError(
                    f"{self.model}: the provider refused the credentials (HTTP {status_code(exc)}); "
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
        if estimate is not None:  # a prompt the server cut: PromptCutError, never an answer
            context_window.check_prompt(self.model, prompt_tokens, estimate, window, tolerance)
        prices = load_prices()
        if not prices.known(self.model) and self.price_known:
            self.price_known = False
            warn_unpriced(self.model)  # once per model and process, not per seat
        return Reply(
            text=text,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=latency,
            cost_usd=prices.cost_usd(self.model, prompt_tokens, billed_output),
            model_resolved=self._model_resolved(response),
            response_id=str(getattr(response, "id", "") or ""),
            finish_reason=str(getattr(choice, "finish_reason", "") or ""),
            max_tokens=int(kwargs.get("max_tokens") or kwargs.get("max_completion_tokens") or 0),
            reasoning_tokens=reasoning_tokens,
            reasoning=reasoning,
            cached_prompt_tokens=cached_prompt_tokens(usage),
        )

    def _model_resolved(self, response: Any) -> str:
        """Who answered: the provider's model name; for the embedded model its weights (file,
        encoding and sha256 prefix, carried in ``system_fingerprint``)."""
        if self.is_local:
            fingerprint = str(getattr(response, "system_fingerprint", "") or "")
            if fingerprint:
                return fingerprint
        return str(getattr(response, "model", "") or "")

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """See :func:`classify_error`."""
        return classify_error(exc)
