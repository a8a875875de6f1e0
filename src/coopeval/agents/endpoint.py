"""Which server answers a model call: the endpoint part of the response-cache key.

Two self-hosted servers behind one model string (``hosted_vllm/llama`` on two hosts) give
different answers, so the endpoint is part of the cache key (issue 13, kind 7). The endpoint is
``api_base`` and ``api_version`` from the agent's params, or, when ``api_base`` is not given,
the environment variable litellm reads for the provider (``<PROVIDER>_API_BASE``; for
``openai/`` also ``OPENAI_BASE_URL`` and ``OPENAI_API_BASE``). Credentials (``api_key``,
headers) are never part of it: ``extra_headers`` are left out because they usually carry
tokens. A model whose answer depends on a header should get its own model label or params.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

__all__ = ["ENDPOINT_KEYS", "base_url_variables", "request_endpoint"]

ENDPOINT_KEYS = ("api_base", "api_version")
"""Transport params that choose who answers (and so enter the cache key)."""

_ENV_BASES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_BASE_URL", "OPENAI_API_BASE"),
    "ollama_chat": ("OLLAMA_API_BASE",),
}


def base_url_variables(model: str) -> tuple[str, ...]:
    """The environment variables litellm reads for the server of ``model`` when ``api_base`` is
    not given, first set one wins: ``<PROVIDER>_API_BASE`` (``-`` as ``_``), for ``openai/``
    ``OPENAI_BASE_URL`` then ``OPENAI_API_BASE``; ``()`` for a string without a provider."""
    if "/" not in model:
        return ()
    provider = model.split("/", 1)[0]
    return _ENV_BASES.get(provider, (f"{provider.upper().replace('-', '_')}_API_BASE",))


def request_endpoint(model: str, transport: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The endpoint settings of calls to ``model`` (empty when none is set).

    Parameters
    ----------
    model:
        litellm model string, ``provider/name``.
    transport:
        The agent's transport params (``api_base``, ``api_version``, ``timeout``, ...).
    environ:
        Environment to read (default ``os.environ``).

    Returns
    -------
    dict
        ``{"api_base": ..., "api_version": ...}`` with only the keys that are set; ``{}`` for the
        provider's default endpoint, so such calls keep their earlier cache keys.
    """
    env = os.environ if environ is None else environ
    endpoint = {k: transport[k] for k in ENDPOINT_KEYS if transport.get(k) not in (None, "")}
    if "api_base" not in endpoint:
        for name in base_url_variables(model):
            if env.get(name):
                endpoint["api_base"] = env[name]
                break
    return endpoint
