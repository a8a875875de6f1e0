"""The two providers whose agents are :class:`~coopeval.agents.llm_agent.LiteLLMAgent`:

* :data:`LOCAL` — ``local/<name>``, the embedded llama.cpp model run in the job's process
  (:mod:`coopeval.agents.local`), no API key, no base URL;
* :data:`LITELLM` — every other ``provider/model`` string litellm routes (``openai/``,
  ``anthropic/``, ``gemini/``, ``openrouter/``, ``hosted_vllm/``, ``ollama/`` …): API-key
  variables from litellm's own table (:func:`~coopeval.agents.litellm_client.api_key_variables`),
  base-URL variables from :func:`~coopeval.agents.endpoint.base_url_variables`.

Both read the agent options of :mod:`coopeval.agents.options` and classify transport errors with
:func:`coopeval.agents.errors.classify_error`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coopeval.agents.endpoint import base_url_variables
from coopeval.agents.errors import classify_error
from coopeval.agents.litellm_client import api_key_variables, routing_error
from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.local.catalogue import LOCAL_PREFIX
from coopeval.agents.local.encoding import local_serving_error
from coopeval.agents.options import option_error
from coopeval.agents.provider import Provider

__all__ = ["LITELLM", "LOCAL"]


def make_litellm_agent(spec: Mapping[str, Any]) -> LiteLLMAgent:
    """The agent of a config entry (``model``, ``style`` (default ``IO``), ``params``, ``label``).

    Raises
    ------
    ValueError
        Invalid options (:func:`~coopeval.agents.options.option_error`) or style.
    coopeval.agents.local.LocalModelMissingError
        A ``local/`` model whose weights are not installed.
    """
    return LiteLLMAgent(
        model=str(spec["model"]),
        style=str(spec.get("style", "IO")),
        params=dict(spec.get("params") or {}),
        label=spec.get("label"),
    )


def _litellm_model_error(model: str) -> str | None:
    if "/" not in model:
        return (
            f"{model!r} is not a litellm model string; write provider/model, "
            "e.g. openrouter/openai/gpt-4o or local/smollm2-135m"
        )
    return None


LOCAL = Provider(
    name="local",
    prefix=LOCAL_PREFIX,
    factory=make_litellm_agent,
    uses_local_llm=True,
    model_kind="embedded model",
    model_error=local_serving_error,
    option_error=option_error,
    classify_error=classify_error,
)
"""The embedded models (``local/smollm2-135m``, or any GGUF file as ``local/file:<path>``),
through litellm's custom-provider hook."""

LITELLM = Provider(
    name="litellm",
    prefix="",
    factory=make_litellm_agent,
    model_error=_litellm_model_error,
    option_error=option_error,
    key_variables=api_key_variables,
    base_url_variables=base_url_variables,
    routing_error=routing_error,
    classify_error=classify_error,
)
"""Any model string litellm routes; the fallback that matches every string (listed last)."""
