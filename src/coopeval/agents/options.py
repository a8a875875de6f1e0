"""The options of an LLM agent's ``params`` that the agent reads itself or gives to the
transport, and their check (:func:`option_error`, run by the config checks before any call)."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from coopeval.agents import structured
from coopeval.agents.grammar import DEFAULT_MAX_REASONING_CHARS

__all__ = ["AGENT_OPTION_KEYS", "DEFAULT_DEADLINE_S", "SAMPLING_KEYS", "TRANSPORT_KEYS", "option_error"]


AGENT_OPTION_KEYS = frozenset(
    {"send_seed", "max_reasoning_chars", "cot_grammar", "structured_output", "grammar_field", "prompt_cut_tolerance"}
)
"""Keys of ``params`` read by the agent itself and never sent to litellm.

``send_seed`` (bool, default False): pass ``request.seed`` to API models (always sent to local
ones). ``max_reasoning_chars`` (int): CoT reasoning cap of the local model's grammar (and of a
constrained remote one). ``cot_grammar`` (set by the agent, local CoT only): the version of the
CoT grammar's reasoning rule (:data:`~coopeval.agents.grammar.COT_GRAMMAR_VERSION`); in
``params``, hence in the cache key, so answers decoded under an older grammar are not replayed.
``structured_output`` (``none`` | ``json_schema`` | ``grammar`` | ``auto``, default ``none``) and
``grammar_field``: constrained decoding by the provider (:mod:`coopeval.agents.structured`).
``prompt_cut_tolerance`` (number in [0, 1), default 0.2): how far below the client's estimate
the server's reported prompt tokens may fall before the prompt counts as cut
(:mod:`coopeval.agents.context_window`)."""

TRANSPORT_KEYS = frozenset(
    {"timeout", "api_base", "api_version", "extra_headers", "cache_prompt", "deadline_s"}
)
"""Keys of ``params`` that steer the transport only (``cache_prompt``: the local model's
prompt-prefix reuse, default on; ``deadline_s``: the wall-clock deadline of one attempt, never
sent). They are kept out of :attr:`LiteLLMAgent.params`; of them only ``api_base``/``api_version``
enter the cache key, as :attr:`LiteLLMAgent.endpoint` (:mod:`coopeval.agents.endpoint`)."""

SAMPLING_KEYS = frozenset(
    {
        "temperature", "top_p", "top_k", "min_p", "max_tokens", "max_completion_tokens", "seed", "stop",
        "frequency_penalty", "presence_penalty", "repetition_penalty", "reasoning_effort", "extra_body",
        "num_ctx", "logit_bias", "thinking",
    }
)
"""Common sampling parameters sent to the provider. Other keys are sent as given (providers have
their own); a key that is one typo away from one of these or of the agent's own keys is refused
(``max_tokns``, ``temprature``), because the provider would ignore it silently."""

_TYPO_CUTOFF = 0.85  # difflib ratio: catches one-letter slips, spares real keys like top_a or max_new_tokens

DEFAULT_DEADLINE_S = 600.0
"""Wall-clock seconds one attempt of an API model may take unless ``params.deadline_s`` says
otherwise. The embedded model has none by default: its llama.cpp call cannot be interrupted,
so a deadline would only abandon it (set ``deadline_s`` to fail such calls anyway)."""


def option_error(params: Mapping[str, Any]) -> str | None:
    """Why the agent options in ``params`` (:data:`AGENT_OPTION_KEYS`, ``deadline_s`` and the
    sampling bounds below) are invalid, naming the key (``params.<key> …; <fix>``), or ``None`` if they are valid.

    The config checks call it before any model call; :class:`LiteLLMAgent` raises it as a
    ``ValueError``. Sampling parameters are the provider's business and are not checked, except
    those this project reads itself: ``max_tokens``/``max_completion_tokens`` (whole numbers >= 1)
    and ``temperature`` (a number >= 0).
    """
    known = AGENT_OPTION_KEYS | TRANSPORT_KEYS | SAMPLING_KEYS
    for key in params:
        if key not in known and (close := difflib.get_close_matches(key, sorted(known), n=1, cutoff=_TYPO_CUTOFF)):
            return f"params.{key} is not a parameter this project or a provider knows; did you mean params.{close[0]}?"
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
    tolerance = params.get("prompt_cut_tolerance")
    if tolerance is not None and (
        isinstance(tolerance, bool) or not isinstance(tolerance, int | float) or not 0 <= tolerance < 1
    ):
        return f"params.prompt_cut_tolerance is {tolerance!r}; use a number in [0, 1) (default 0.2)"
    for key in ("max_tokens", "max_completion_tokens"):  # read by the estimate and the context-window check too
        bound = params.get(key)
        if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int) or bound < 1):
            return f"params.{key} is {bound!r}; use a whole number of tokens >= 1 (leave it out for the provider's own limit)"
    temperature = params.get("temperature")
    if temperature is not None and (isinstance(temperature, bool) or not isinstance(temperature, int | float) or temperature < 0):
        return f"params.temperature is {temperature!r}; use a number >= 0 (e.g. 1)"
    window = params.get("num_ctx")
    if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window < 1):
        return f"params.num_ctx is {window!r}; use a whole number of tokens (the model's context window)"
    if not isinstance(params.get("send_seed", False), bool):
        return f"params.send_seed is {params['send_seed']!r}; use true or false"
    return None
