"""Errors of the local provider; all are ``FATAL`` for the retry loop (retrying cannot fix them)."""

from __future__ import annotations

from coopeval.agents.protocol import RequestRejectedError

__all__ = [
    "GrammarError",
    "LocalContextWindowError",
    "LocalModelFileError",
    "LocalModelMissingError",
    "LocalProviderError",
]


class LocalProviderError(Exception):
    """An error of the local provider that retrying cannot fix (classified ``FATAL``).

    litellm wraps exceptions raised inside a custom handler in ``litellm.APIConnectionError``;
    the original stays reachable through ``__context__``, which
    :func:`coopeval.agents.errors.classify_error` inspects.
    """


class LocalModelMissingError(LocalProviderError, RuntimeError):
    """The weights of a ``local/`` model are not installed (or the model name is unknown)."""


class GrammarError(LocalProviderError, ValueError):
    """llama.cpp rejected a GBNF grammar."""


class LocalContextWindowError(LocalProviderError, RequestRejectedError, ValueError):
    """Prompt plus ``max_tokens`` exceed the local model's context window (the decision fails,
    the job goes on: :class:`~coopeval.agents.protocol.RequestRejectedError`)."""


class LocalModelFileError(LocalProviderError, RuntimeError):
    """A model file that cannot be served: missing, not GGUF, too large for the memory, or an
    encoding that cannot be made. The message names the file and the fix."""
