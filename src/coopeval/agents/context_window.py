"""The context window a request needs, and prompts a server cut (issue 25 kind 2).

A server that cannot fit a prompt in its context window may cut the prompt and answer anyway:
Ollama keeps the last ``num_ctx`` tokens (default 2,048) and replies 200, so a long gossip
prompt loses its beginning and the answer is to a different question. Three defences:

* **State the window** where the provider takes it: ``ollama/`` and ``ollama_chat/`` requests
  carry ``num_ctx`` (Ollama's ``options.num_ctx``, through litellm's ``num_ctx`` parameter): the
  agent's ``params.num_ctx`` when configured, else :func:`needed_window` of the estimate.
* **Compare** the prompt tokens the server reports (``usage.prompt_tokens``, Ollama's
  ``prompt_eval_count``) with the client's estimate (:func:`estimate_prompt_tokens`) on every API
  provider: a reply whose prompt was evidently cut (:func:`evidently_cut`) raises
  :class:`PromptCutError`, a :class:`~coopeval.agents.protocol.RequestRejectedError`: not
  accepted, not cached, the decision fails with both numbers in its error.
* **Refuse before sending** when a configured window cannot hold the estimate
  (:func:`overflows_window`), with the same error.

The embedded ``local/`` model is exempt: it counts its prompt with its own tokenizer and refuses
a prompt that does not fit before generating (:mod:`coopeval.agents.local`); it never cuts one.

The estimate is an approximation: litellm's ``token_counter`` with its default tokenizer
(tiktoken ``cl100k_base``, bundled with litellm, so offline) over the message list, including
its per-message overhead. Other tokenizers count the same English text within a few tens of
percent (most count more), hence the tolerance of :data:`CUT_TOLERANCE` and
:data:`CUT_SLACK_TOKENS`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from coopeval.agents.litellm_client import import_litellm
from coopeval.agents.protocol import RequestRejectedError

__all__ = [
    "CUT_SLACK_TOKENS",
    "CUT_TOLERANCE",
    "DEFAULT_ANSWER_ROOM",
    "MIN_WINDOW",
    "PromptCutError",
    "check_prompt",
    "estimate_prompt_tokens",
    "evidently_cut",
    "needed_window",
    "overflows_window",
    "request_window",
    "states_window",
]

CUT_TOLERANCE = 0.2
"""A reported prompt is evidently cut when it is more than this share below the estimate
(agent option ``params.prompt_cut_tolerance`` overrides it) …"""

CUT_SLACK_TOKENS = 32
"""… and more than this many tokens below it (short prompts: the per-message overhead of the
estimate is a large share of them)."""

MIN_WINDOW = 2048
"""The smallest ``num_ctx`` sent (Ollama's own default)."""

DEFAULT_ANSWER_ROOM = 1024
"""Tokens reserved for the answer in the window when the request sets no ``max_tokens``."""

WINDOW_PROVIDERS = ("ollama/", "ollama_chat/")
"""litellm model prefixes whose requests take a context window (``num_ctx``)."""


class PromptCutError(RequestRejectedError):
    """The server cut the prompt (or a configured window cannot hold it): the decision fails with
    the reported and estimated prompt tokens and the window in the message; nothing is cached."""


def states_window(model: str) -> bool:
    """Whether requests of litellm model string ``model`` carry ``num_ctx``."""
    return model.startswith(WINDOW_PROVIDERS)


def estimate_prompt_tokens(messages: Sequence[Mapping[str, Any]]) -> int:
    """The client's estimate of the prompt tokens of ``messages`` (litellm's ``token_counter``,
    default tokenizer; see the module docstring)."""
    litellm = import_litellm()
    return int(litellm.token_counter(messages=[dict(m) for m in messages]))


def needed_window(estimate: int, max_tokens: int | None) -> int:
    """The ``num_ctx`` to send for a prompt of ``estimate`` tokens and an answer of ``max_tokens``
    (:data:`DEFAULT_ANSWER_ROOM` if None): the next power of two at or above
    ``ceil(estimate × (1 + CUT_TOLERANCE)) + max_tokens``, at least :data:`MIN_WINDOW`. Powers of
    two keep the windows of a run few (Ollama reloads a model whose ``num_ctx`` changes).

    Example: 3,000 estimated tokens and ``max_tokens = 100`` → 3,600 + 100 = 3,700 → 4,096.
    """
    need = math.ceil(estimate * (1 + CUT_TOLERANCE)) + (DEFAULT_ANSWER_ROOM if max_tokens is None else max_tokens)
    return max(MIN_WINDOW, 1 << max(0, need - 1).bit_length())


def evidently_cut(reported: int, estimate: int, window: int | None = None, tolerance: float = CUT_TOLERANCE) -> bool:
    """Whether a server that reports ``reported`` prompt tokens for a prompt estimated at
    ``estimate`` evidently cut it: ``reported`` is positive (0 = not reported), at most ``window``
    (when known) and below ``estimate × (1 − tolerance) − CUT_SLACK_TOKENS``.

    Examples (tolerance 0.2): 2,048 reported for 3,000 estimated → cut (2,048 < 2,368); 2,500 for
    3,000 → not cut; 10 for 9 → not cut.
    """
    if reported <= 0 or (window is not None and reported > window):
        return False
    return reported < estimate * (1 - tolerance) - CUT_SLACK_TOKENS


def overflows_window(estimate: int, window: int, tolerance: float = CUT_TOLERANCE) -> bool:
    """Whether a prompt estimated at ``estimate`` tokens cannot fit a configured ``window`` even
    with the tolerance in its favour (``estimate × (1 − tolerance) − CUT_SLACK_TOKENS > window``):
    the server would cut it."""
    return estimate * (1 - tolerance) - CUT_SLACK_TOKENS > window


def request_window(model: str, kwargs: Mapping[str, Any], estimate: int) -> int | None:
    """The context window of a request to ``model`` with litellm keyword arguments ``kwargs``:
    the configured ``num_ctx`` if given, else, for :func:`states_window` providers,
    :func:`needed_window` of ``estimate`` and the request's ``max_tokens``; None for providers that
    take no window and have none configured."""
    configured = kwargs.get("num_ctx")
    if configured is not None:
        return int(configured)
    if not states_window(model):
        return None
    budget = kwargs.get("max_tokens") or kwargs.get("max_completion_tokens")
    return needed_window(estimate, int(budget) if budget else None)


def check_prompt(model: str, reported: int | None, estimate: int, window: int | None, tolerance: float) -> None:
    """Raise :class:`PromptCutError` when a configured ``window`` cannot hold the prompt
    (``reported`` None: before sending) or the server's ``reported`` prompt tokens show it was
    evidently cut (:func:`evidently_cut`); return None otherwise."""
    if reported is None:
        if window is not None and overflows_window(estimate, window, tolerance):
            raise PromptCutError(cut_message(model, 0, estimate, window, before=True))
        return
    if evidently_cut(reported, estimate, window, tolerance):
        raise PromptCutError(cut_message(model, reported, estimate, window))


def cut_message(model: str, reported: int, estimate: int, window: int | None, before: bool = False) -> str:
    """The error of a cut (or, ``before``, a refused) prompt, naming both numbers and the fix."""
    where = f"num_ctx = {window}" if window is not None else "its context window"
    if before:
        return (
            f"{model}: the prompt needs about {estimate} tokens, more than the configured {where} "
            "holds: the server would cut it; not sent. Raise params.num_ctx (or drop it: the agent "
            "then sends the window each request needs)"
        )
    return (
        f"{model}: the server cut the prompt: it reports {reported} prompt tokens where about "
        f"{estimate} were sent ({where}); the reply is not accepted and not cached. Give the "
        "model a larger context window (params.num_ctx for Ollama, the server's context length "
        "for others), or raise params.prompt_cut_tolerance if its tokenizer counts far fewer tokens"
    )
