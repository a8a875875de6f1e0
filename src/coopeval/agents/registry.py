"""Build agents from config entries: scripted bots or any litellm model string."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coopeval.agents.protocol import Agent


def agent_name(spec: Mapping[str, Any]) -> str:
    """The display id of a config entry: ``bot/<label or name>`` or ``<label or model>(<style>)``."""
    model = str(spec["model"])
    if model.startswith("bot/"):
        return f"bot/{spec['label']}" if spec.get("label") else model
    return f"{spec.get('label') or model}({spec.get('style', 'IO')})"


def make_agent(spec: Mapping[str, Any]) -> Agent:
    """Instantiate the agent of one config entry.

    ``spec`` has ``model`` (``bot/<name>`` or a litellm model string such as
    ``local/smollm2-135m`` or ``openrouter/openai/gpt-5.2``), ``style`` (``CoT`` | ``IO``),
    optional ``label`` and ``params`` (sampling parameters). litellm is imported only here,
    and only for non-bot agents.

    Raises
    ------
    KeyError
        For an unknown bot.
    """
    model = str(spec["model"])
    if model.startswith("bot/"):
        from coopeval.agents.bots import make_bot

        bot = make_bot(model)
        if spec.get("label"):  # a second copy of the same strategy needs its own name
            bot.name = bot.model = agent_name(spec)
        return bot
    from coopeval.agents.llm_agent import LiteLLMAgent

    return LiteLLMAgent(
        model=model,
        style=str(spec.get("style", "IO")),
        params=dict(spec.get("params") or {}),
        label=spec.get("label"),
    )
