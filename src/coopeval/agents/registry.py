"""The provider registry: which kind of agent a config's ``model`` string names.

Every question the workflow and the config validation ask about a model — is it a scripted
bot, does it run the embedded llama.cpp model, which API-key variables does it need, is the
name valid, how is its agent built — is answered here, from one table of providers:

========== ==================================================== ==========================
prefix     provider                                             agent class
========== ==================================================== ==========================
``bot/``   scripted strategy bots (:mod:`coopeval.agents.bots`)  :class:`~.bots.Bot`
``local/`` the embedded model through llama.cpp behind litellm   :class:`~.llm_agent.LiteLLMAgent`
``mock/``  the deterministic mock model shipped for tests       :class:`~.mock.MockLLM`
anything   litellm (``openai/``, ``anthropic/``, ``openrouter/``, :class:`~.llm_agent.LiteLLMAgent`
           ``hosted_vllm/``, ``ollama/`` …)
========== ==================================================== ==========================

Nothing outside this module tests a model string's prefix. litellm and llama.cpp are not
imported by this module.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from coopeval.agents.protocol import Agent


@dataclass(frozen=True)
class Provider:
    """One kind of agent.

    Attributes
    ----------
    prefix:
        The model-string prefix that selects it (``""`` for the litellm fallback).
    scripted:
        Answers from structured state, not from the prompt: no CoT/IO style, never judged,
        never cached.
    uses_local_llm:
        Runs the embedded model in the job's process (takes the ``local_llm`` resource).
    known_models:
        The model names after the prefix it accepts, or ``None`` for any name.
    """

    prefix: str
    scripted: bool
    uses_local_llm: bool
    known_models: Callable[[], tuple[str, ...]] | None

    def matches(self, model: str) -> bool:
        """Whether ``model`` belongs to this provider."""
        return model.startswith(self.prefix)


def _bot_names() -> tuple[str, ...]:
    from coopeval.agents.bots import BOTS

    return tuple(BOTS)


def _local_names() -> tuple[str, ...]:
    from coopeval.agents.local import LOCAL_MODELS

    return tuple(LOCAL_MODELS)


BOT = Provider(prefix="bot/", scripted=True, uses_local_llm=False, known_models=_bot_names)
LOCAL = Provider(prefix="local/", scripted=False, uses_local_llm=True, known_models=_local_names)
MOCK = Provider(prefix="mock/", scripted=False, uses_local_llm=False, known_models=None)
LITELLM = Provider(prefix="", scripted=False, uses_local_llm=False, known_models=None)
PROVIDERS: tuple[Provider, ...] = (BOT, LOCAL, MOCK, LITELLM)
"""In lookup order; the litellm fallback matches every string and comes last."""


def provider_for(model: str) -> Provider:
    """The provider of a model string (the litellm fallback if no prefix matches)."""
    return next(p for p in PROVIDERS if p.matches(model))


def is_scripted(model: str) -> bool:
    """Whether ``model`` is a scripted bot (``bot/…``)."""
    return provider_for(model).scripted


def scripted_name(model: str) -> str | None:
    """The bot name of a scripted model string (``bot/tit-for-tat`` → ``tit-for-tat``), or
    ``None`` for any other provider. A study with bots of its own looks their names up with it."""
    provider = provider_for(model)
    return model.removeprefix(provider.prefix) if provider.scripted else None


def uses_local_llm(model: str) -> bool:
    """Whether ``model`` runs the embedded llama.cpp model in the job's process."""
    return provider_for(model).uses_local_llm


def required_env(model: str) -> list[str]:
    """Environment variables holding the API key(s) ``model`` needs (empty for bots, the
    embedded model, the mock and keyless providers such as ``ollama/``)."""
    if provider_for(model) is not LITELLM:
        return []
    from coopeval.agents.llm_agent import required_env_vars

    return required_env_vars(model)


def model_error(model: str) -> str | None:
    """Why ``model`` is not a usable model string, or ``None`` if it is.

    Unknown bots and unknown embedded models list the known ones; a string without a provider
    prefix gets an example of a valid one.
    """
    provider = provider_for(model)
    if provider.known_models is not None:
        name = model.removeprefix(provider.prefix)
        known = provider.known_models()
        if name not in known:
            listed = ", ".join(provider.prefix + k for k in known)
            if provider is BOT:
                return f"unknown bot {model!r}; known bots: {listed}"
            return f"unknown embedded model {model!r}; known: {listed}"
        return None
    if provider is LITELLM and "/" not in model:
        return (
            f"{model!r} is not a litellm model string; write provider/model, "
            "e.g. openrouter/openai/gpt-4o or local/smollm2-135m"
        )
    return None


def entry_error(model: str, params: Mapping[str, Any] | None) -> str | None:
    """Why a config entry's model string or agent options are unusable, as a message relative to
    the entry (``model: …`` from :func:`model_error`, or ``params.<key> …`` from
    :func:`coopeval.agents.llm_agent.option_error`, which litellm and embedded models read; bots
    and the mock read none), or ``None``. Callers prefix the entry's path, e.g. ``agents[2].``."""
    if (problem := model_error(model)) is not None:
        return f"model: {problem}"
    if provider_for(model) not in (LOCAL, LITELLM):
        return None
    from coopeval.agents.llm_agent import option_error

    return option_error(params or {})


def routing_error(model: str) -> str | None:
    """Why litellm cannot route ``model`` (an unknown provider prefix), or ``None``; only
    litellm model strings are asked (:func:`coopeval.agents.llm_agent.provider_error`, which
    imports litellm: call it once per run, not per job)."""
    if provider_for(model) is not LITELLM:
        return None
    from coopeval.agents.llm_agent import provider_error

    return provider_error(model)


def agent_name(spec: Mapping[str, Any]) -> str:
    """The display id of a config entry: ``bot/<label or name>`` or ``<label or model>(<style>)``."""
    model = str(spec["model"])
    if is_scripted(model):
        return f"{BOT.prefix}{spec['label']}" if spec.get("label") else model
    return f"{spec.get('label') or model}({spec.get('style', 'IO')})"


def agent_style(spec: Mapping[str, Any]) -> str:
    """The style a config entry plays with: ``"scripted"`` for bots, else ``CoT``/``IO``."""
    return "scripted" if is_scripted(str(spec["model"])) else str(spec.get("style", "IO"))


def make_agent(spec: Mapping[str, Any]) -> Agent:
    """Instantiate the agent of one config entry.

    ``spec`` has ``model`` (``bot/<name>``, ``mock/<name>`` or a litellm model string such as
    ``local/smollm2-135m`` or ``openrouter/openai/gpt-5.2``), ``style`` (``CoT`` | ``IO``),
    optional ``label`` and ``params`` (sampling parameters). litellm is imported only for
    litellm agents, when they are built.

    Raises
    ------
    KeyError
        For an unknown bot.
    """
    model = str(spec["model"])
    provider = provider_for(model)
    if provider is BOT:
        from coopeval.agents.bots import make_bot

        bot = make_bot(model)
        if spec.get("label"):  # a second copy of the same strategy needs its own name
            bot.name = bot.model = agent_name(spec)
        return bot
    if provider is MOCK:
        from coopeval.agents.mock import MockLLM

        return MockLLM(model=model, style=str(spec.get("style", "IO")), params=dict(spec.get("params") or {}))
    from coopeval.agents.llm_agent import LiteLLMAgent

    return LiteLLMAgent(
        model=model,
        style=str(spec.get("style", "IO")),
        params=dict(spec.get("params") or {}),
        label=spec.get("label"),
    )
