"""What a model provider is: one entry that carries every fact and behaviour of the provider.

A provider (in the spirit of inspect_ai's ``@modelapi`` registry) is selected by the prefix of a
config entry's ``model`` string and answers every question the workflow asks about such a
model: is it scripted, does it run the embedded model in the job's process, which model names
exist, are its options valid, which environment variables hold its API key and its base URL,
can the transport route it, how is its agent built, and how are its transport errors classified
for the retry loop (``RATE_LIMIT`` waits and retries many times, ``TRANSIENT`` backs off and
retries a few times, ``FATAL`` stops: :mod:`coopeval.agents.retry`).

The entries themselves live beside their agents (:data:`coopeval.agents.bots.BOT`,
:data:`coopeval.agents.mock.MOCK`, :data:`coopeval.agents.litellm_provider.LOCAL` and
:data:`~coopeval.agents.litellm_provider.LITELLM`); :mod:`coopeval.agents.registry` lists them in
lookup order. This module imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from coopeval.agents.protocol import Agent, ErrorClass

__all__ = ["Provider", "always_fatal", "no_error", "no_variables"]


def no_error(_: Any) -> str | None:
    """The check of a provider that accepts anything: never a problem."""
    return None


def no_variables(_: str) -> tuple[str, ...]:
    """The variables of a provider that reads none."""
    return ()


def always_fatal(_: BaseException) -> ErrorClass:
    """Classification for agents with no transport (scripted bots, the mock): anything raised
    is a bug, so it is never retried."""
    return ErrorClass.FATAL


@dataclass(frozen=True)
class Provider:
    """One kind of agent, selected by a model-string prefix.

    Attributes
    ----------
    name:
        Short name (``bot``, ``local``, ``mock``, ``litellm``).
    prefix:
        The model-string prefix that selects it (``""`` for the litellm fallback, which matches
        every string and so comes last in :data:`coopeval.agents.registry.PROVIDERS`).
    factory:
        Config entry (``model``, ``style``, optional ``label`` and ``params``) → agent.
    scripted:
        Answers from structured state, not from the prompt: no CoT/IO style, never judged,
        never cached.
    uses_local_llm:
        Runs the embedded model in the job's process (takes the ``local_llm`` resource).
    model_kind:
        What its models are called in messages (``bot``, ``embedded model``).
    known_label:
        How the list of known models is introduced in that message (``known bots``).
    known_models:
        The model names after the prefix it accepts, or ``None`` for any name.
    model_error:
        Extra check of a model string that passed ``known_models`` (``None`` if fine).
    option_error:
        Why a config entry's ``params`` are invalid (``params.<key> …; <fix>``), or ``None``.
    key_variables:
        Model string → environment variables holding its API key (checked by each job before its
        first call, :func:`coopeval.agents.registry.missing_key_error`); empty for keyless providers.
    base_url_variables:
        Model string → environment variables naming its server when ``params.api_base`` is not
        given, first set one wins (part of the response-cache key,
        :mod:`coopeval.agents.endpoint`).
    routing_error:
        Why the transport cannot route the model string (checked once per run), or ``None``.
    classify_error:
        Transport exception → :class:`~coopeval.agents.protocol.ErrorClass` (the retry rules).
    """

    name: str
    prefix: str
    factory: Callable[[Mapping[str, Any]], Agent]
    scripted: bool = False
    uses_local_llm: bool = False
    model_kind: str = "model"
    known_label: str = "known"
    known_models: Callable[[], tuple[str, ...]] | None = None
    model_error: Callable[[str], str | None] = no_error
    option_error: Callable[[Mapping[str, Any]], str | None] = no_error
    key_variables: Callable[[str], tuple[str, ...]] = no_variables
    base_url_variables: Callable[[str], tuple[str, ...]] = no_variables
    routing_error: Callable[[str], str | None] = no_error
    classify_error: Callable[[BaseException], ErrorClass] = always_fatal

    def matches(self, model: str) -> bool:
        """Whether ``model`` belongs to this provider."""
        return model.startswith(self.prefix)

    def name_error(self, model: str) -> str | None:
        """Why ``model`` names no model of this provider (listing the known ones), or ``None``."""
        if self.known_models is not None:
            known = self.known_models()
            if model.removeprefix(self.prefix) not in known:
                listed = ", ".join(self.prefix + k for k in known)
                return f"unknown {self.model_kind} {model!r}; {self.known_label}: {listed}"
        return self.model_error(model)
