"""Pinned model prices (``coopeval/data/prices.yaml``) and the billed token counts of a reply."""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from importlib.resources import files
from pathlib import Path
from typing import Any

from coopeval.core.environment import env_value

__all__ = ["PriceTable", "billed_usage", "load_prices", "warn_unpriced"]

log = logging.getLogger(__name__)

_DEFAULT_PRICES = Path(str(files("coopeval").joinpath("data/prices.yaml")))

_UNPRICED_WARNED: set[str] = set()
"""Models this process has already warned about missing from the price table."""


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

    chosen = Path(path or env_value("COOPEVAL_PRICES") or _DEFAULT_PRICES)
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


def cached_prompt_tokens(usage: Any) -> int:
    """Prompt tokens a provider read from its prompt cache (``usage.prompt_tokens_details.
    cached_tokens``, as OpenAI and llama.cpp's server report it; 0 when absent)."""
    details = getattr(usage, "prompt_tokens_details", None)
    if isinstance(details, dict):
        return int(details.get("cached_tokens") or 0)
    return int(getattr(details, "cached_tokens", 0) or 0)


def warn_unpriced(model: str) -> None:
    """Log once per model and process that ``model`` has no pinned price (its cost is 0)."""
    if model not in _UNPRICED_WARNED:
        _UNPRICED_WARNED.add(model)
        log.warning("no pinned price for %s; its cost is reported as 0", model)
