"""The zero price of the embedded models in litellm's model table (keeps its cost lookup quiet)."""

from __future__ import annotations

from typing import Any

from coopeval.agents.litellm_client import import_litellm
from coopeval.agents.local.catalogue import n_ctx

__all__ = ["register_zero_cost"]


def register_zero_cost(model: str) -> None:
    """Register ``model`` (a ``local/…`` string) with litellm at zero cost per token, so
    ``litellm.completion_cost`` and the success callbacks stay quiet (imports litellm)."""
    litellm: Any = import_litellm()
    window = n_ctx()
    litellm.register_model(
        {
            model: {
                "input_cost_per_token": 0.0,
                "output_cost_per_token": 0.0,
                "cache_creation_input_token_cost": 0.0,
                "cache_read_input_token_cost": 0.0,
                "litellm_provider": "local",
                "mode": "chat",
                "max_input_tokens": window,
                "max_tokens": window,
            }
        }
    )
