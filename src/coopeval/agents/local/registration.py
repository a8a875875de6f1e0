"""Registration of provider ``local`` with litellm, and the statistics of the latest call.

Importing this module imports neither litellm nor llama.cpp; :func:`register_local_provider`
does, on first use of a ``local/`` model.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any

from coopeval.agents.litellm_client import import_litellm
from coopeval.agents.local.catalogue import LOCAL_MODELS, LOCAL_PREFIX
from coopeval.agents.local.prices import register_zero_cost

if TYPE_CHECKING:
    from coopeval.agents.local.provider import LocalLlamaCpp

__all__ = ["last_call_stats", "register_local_provider"]

_register_lock = threading.Lock()
_handler: LocalLlamaCpp | None = None


def register_local_provider() -> None:
    """Register provider ``local`` with litellm (idempotent; imports litellm and llama.cpp).

    Appends the handler to ``litellm.custom_provider_map`` (keeping other entries) and registers
    every packaged ``local/`` model with zero cost (a ``local/file:`` model on first use), so ``litellm.completion_cost`` and the success
    callbacks stay quiet. litellm is imported in offline mode
    (:func:`coopeval.agents.litellm_client.import_litellm`).
    """
    global _handler
    with _register_lock:
        litellm: Any = import_litellm()  # custom_provider_map is set at run time

        from coopeval.agents.local.provider import LocalLlamaCpp

        if _handler is None:
            _handler = LocalLlamaCpp()
        entries = list(getattr(litellm, "custom_provider_map", None) or [])
        if not any(e.get("provider") == "local" for e in entries):
            entries.append({"provider": "local", "custom_handler": _handler})
            litellm.custom_provider_map = entries
            for name in LOCAL_MODELS:
                register_zero_cost(f"{LOCAL_PREFIX}{name}")


def last_call_stats() -> dict[str, float]:
    """Statistics of the latest local call in this process (empty before the first call).

    ``wall_s``: seconds inside llama.cpp; ``cached_prompt_tokens``: prompt tokens taken from the
    KV or prompt cache instead of being evaluated; ``evaluated_prompt_tokens``; ``prompt_ms`` and
    ``decode_ms``: llama.cpp's own timings of prompt evaluation and decoding.
    """
    return dict(_handler.last_stats) if _handler is not None else {}
