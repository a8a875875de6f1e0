"""The provider registry: which provider a config's ``model`` string names, and the questions
the workflow and the config checks ask about a model, answered by that provider's entry
(:class:`~coopeval.agents.provider.Provider`):

========== ==================================================== ==========================
prefix     provider (entry)                                     agent class
========== ==================================================== ==========================
``bot/``   scripted strategy bots (:data:`.bots.BOT`)            :class:`~.bots.Bot`
``local/`` the embedded model, llama.cpp behind litellm          :class:`~.llm_agent.LiteLLMAgent`
           (:data:`.litellm_provider.LOCAL`)
``mock/``  the deterministic mock model (:data:`.mock.MOCK`)     :class:`~.mock.MockLLM`
``human/`` a person (``coopeval play-human``)                    :class:`~.human.HumanAgent`
           (:data:`.human.HUMAN`)
anything   litellm (``openai/``, ``anthropic/``, ``openrouter/``, :class:`~.llm_agent.LiteLLMAgent`
           ``hosted_vllm/``, ``ollama/`` …; :data:`.litellm_provider.LITELLM`)
========== ==================================================== ==========================

Adding a provider: define its :class:`~coopeval.agents.provider.Provider` entry beside its agent
and list it in :data:`PROVIDERS` (before the litellm fallback), or call
:func:`register_provider` from a plugin. Nothing outside the entries tests a model string's
prefix. Importing this module imports neither litellm nor llama.cpp.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from coopeval.agents.bots import BOT
from coopeval.agents.human import HUMAN
from coopeval.agents.litellm_provider import LITELLM, LOCAL
from coopeval.agents.mock import MOCK
from coopeval.agents.protocol import Agent, ErrorClass
from coopeval.agents.provider import Provider

__all__ = [
    "BOT",
    "HUMAN",
    "LITELLM",
    "LOCAL",
    "MOCK",
    "PROVIDERS",
    "Provider",
    "agent_name",
    "agent_style",
    "base_url_env",
    "classify_error",
    "entry_error",
    "is_llm",
    "is_scripted",
    "make_agent",
    "missing_key_error",
    "model_error",
    "provider_for",
    "register_provider",
    "required_env",
    "routing_error",
    "scripted_name",
    "standing_in",
    "uses_local_llm",
]


PROVIDERS: tuple[Provider, ...] = (BOT, LOCAL, MOCK, HUMAN, LITELLM)
"""In lookup order; the litellm fallback matches every string and comes last."""


def register_provider(entry: Provider) -> None:
    """Add a provider entry (a plugin's), looked up before the built-in ones.

    Raises
    ------
    ValueError
        Its prefix is empty (only the litellm fallback matches every string) or already taken.
    """
    global PROVIDERS
    if not entry.prefix:
        raise ValueError(f"provider {entry.name!r}: give it a model-string prefix such as 'myapi/'")
    taken = next((p for p in PROVIDERS if p.prefix and p.prefix == entry.prefix), None)
    if taken is not None:
        raise ValueError(f"provider {entry.name!r}: prefix {entry.prefix!r} is already provider {taken.name!r}'s")
    PROVIDERS = (entry, *PROVIDERS)


def provider_for(model: str) -> Provider:
    """The provider of a model string (the litellm fallback if no prefix matches)."""
    return next(p for p in PROVIDERS if p.matches(model))


def is_scripted(model: str) -> bool:
    """Whether ``model`` is a scripted bot (``bot/…``)."""
    return provider_for(model).scripted


def is_llm(model: str) -> bool:
    """Whether ``model`` is a language model (an LLM agent of the tables' LLM Average): neither a
    scripted bot (``bot/…``) nor a person (``human/…``, provider kind ``person``)."""
    provider = provider_for(model)
    return not provider.scripted and provider.model_kind != "person"


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
    embedded model, the mock and keyless providers such as ``ollama/``); for litellm models from
    litellm's own table (:func:`coopeval.agents.litellm_client.api_key_variables`)."""
    return list(provider_for(model).key_variables(model))


def missing_key_error(models: Iterable[str], environ: Mapping[str, str] | None = None) -> str | None:
    """Why a job that calls ``models`` cannot start: the API-key variables they need
    (:func:`required_env`) that are unset or empty in ``environ`` (default ``os.environ``),
    each with the models that need it; ``None`` when every key is there.

    Checked by each job that calls a provider, before its first call (play and judge jobs), so
    a dry run, ``coopeval estimate`` and runs of keyless models need no key.
    """
    env = os.environ if environ is None else environ
    missing: dict[str, list[str]] = {}
    for model in sorted(set(models)):
        for name in required_env(model):
            if not env.get(name):
                missing.setdefault(name, []).append(model)
    if not missing:
        return None
    needs = "; ".join(f"{name} (for {', '.join(ms)})" for name, ms in sorted(missing.items()))
    return f"API key not set: {needs}; export it in the environment and rerun (no model was called)"


def base_url_env(model: str) -> list[str]:
    """Environment variables naming the server of ``model`` when ``params.api_base`` is not
    given (first set one wins)."""
    return list(provider_for(model).base_url_variables(model))


def model_error(model: str) -> str | None:
    """Why ``model`` is not a usable model string, or ``None`` if it is.

    Unknown bots and unknown embedded models list the known ones; a string without a provider
    prefix gets an example of a valid one.
    """
    return provider_for(model).name_error(model)


def entry_error(model: str, params: Mapping[str, Any] | None) -> str | None:
    """Why a config entry's model string or agent options are unusable, as a message relative to
    the entry (``model: …`` from :func:`model_error`, or ``params.<key> …`` from the provider's
    option check, :func:`coopeval.agents.options.option_error` for litellm and embedded models;
    bots and the mock read none), or ``None``. Callers prefix the entry's path, e.g.
    ``agents[2].``."""
    if (problem := model_error(model)) is not None:
        return f"model: {problem}"
    return provider_for(model).option_error(params or {})


def routing_error(model: str) -> str | None:
    """Why the provider's transport cannot route ``model`` (an unknown litellm provider prefix),
    or ``None``; only litellm model strings are asked (imports litellm: call it once per run, not
    per job)."""
    return provider_for(model).routing_error(model)


def classify_error(model: str, exc: BaseException) -> ErrorClass:
    """The retry class of a transport exception raised by ``model``'s provider."""
    return provider_for(model).classify_error(exc)


def agent_name(spec: Mapping[str, Any]) -> str:
    """The display id of a config entry: ``bot/<label or name>`` or ``<label or model>(<style>)``."""
    model = str(spec["model"])
    if is_scripted(model):
        return f"{BOT.prefix}{spec['label']}" if spec.get("label") else model
    return f"{spec.get('label') or model}({spec.get('style', 'IO')})"


def agent_style(spec: Mapping[str, Any]) -> str:
    """The style a config entry plays with: ``"scripted"`` for bots, else ``CoT``/``IO``."""
    return "scripted" if is_scripted(str(spec["model"])) else str(spec.get("style", "IO"))


@contextlib.contextmanager
def standing_in(factory: Callable[[Mapping[str, Any]], Agent]) -> Iterator[None]:
    """While active, :func:`make_agent` builds every non-scripted model's agent with
    ``factory`` (config entry → agent) instead of its provider's; scripted bots and every other
    question about a model string (:func:`provider_for`, keys, prices) are unchanged.

    ``coopeval estimate`` plays each cell with recording stand-ins this way
    (:mod:`coopeval.estimate`), through the studies' own play code. Not thread-safe: one
    process, one simulation at a time.
    """
    global _STAND_IN
    previous, _STAND_IN = _STAND_IN, factory
    try:
        yield
    finally:
        _STAND_IN = previous


_STAND_IN: Callable[[Mapping[str, Any]], Agent] | None = None
"""The factory of :func:`standing_in`, while one is active."""


def make_agent(spec: Mapping[str, Any]) -> Agent:
    """Instantiate the agent of one config entry with its provider's factory.

    ``spec`` has ``model`` (``bot/<name>``, ``mock/<name>`` or a litellm model string such as
    ``local/smollm2-135m`` or ``openrouter/openai/gpt-5.2``), ``style`` (``CoT`` | ``IO``),
    optional ``label`` and ``params`` (sampling parameters). litellm is imported only for
    litellm agents, when they first call.

    Raises
    ------
    KeyError
        For an unknown bot.
    ValueError
        Invalid options of an LLM agent.
    """
    provider = provider_for(str(spec["model"]))
    if _STAND_IN is not None and not provider.scripted:
        return _STAND_IN(spec)
    return provider.factory(spec)
