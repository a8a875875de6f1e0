"""Prompt tokens of an embedded ``local/`` model counted with the model's own chat template and
tokenizer, for the pre-run estimate (:mod:`coopeval.estimate.tokens`).

Each model gets one small :class:`~coopeval.agents.local.model.LocalRuntime` of its source file
as installed (the tokenizer and template are the file's metadata, which the re-encoding of
:mod:`.encoding` copies unchanged), with a 512-token window, one thread and no prompt cache: it
is loaded to count, never to evaluate. Loading SmolLM2-135M takes about 0.3 s; a count about
3 ms. Where the prebuilt runtime cannot run (a CPU without AVX2, the wheel missing),
:func:`local_prompt_tokens` returns ``None`` and the estimate falls back to litellm's counter.
"""

from __future__ import annotations

import atexit
import threading
from pathlib import Path
from typing import Any

from coopeval.agents.local.catalogue import local_model_name, resolve_local_model
from coopeval.agents.local.errors import LocalModelFileError
from coopeval.agents.local.model import LocalRuntime, check_cpu

__all__ = ["TOKENIZER_LABEL", "can_count", "local_prompt_tokens"]

TOKENIZER_LABEL = "llama.cpp (the GGUF file's own)"
"""How the estimate names this counter in its ``tokenizer`` column."""

_COUNTERS: dict[str, LocalRuntime | None] = {}
_LOCK = threading.Lock()


def _counter(model: str) -> LocalRuntime | None:
    """The counting runtime of ``model`` (loaded once per process), ``None`` where llama.cpp
    cannot run here."""
    with _LOCK:
        if model not in _COUNTERS:
            name = local_model_name(model)
            if name is None:
                raise ValueError(
                    f"{model!r} is not an embedded model (local/<name> or local/file:<path>)"
                )
            path, _ = resolve_local_model(name)
            _COUNTERS[model] = _load(path)
        return _COUNTERS[model]


def _load(path: Path) -> LocalRuntime | None:
    """A counting runtime of ``path``, ``None`` on a CPU without AVX2 or without the wheel."""
    try:
        check_cpu()
    except LocalModelFileError:
        return None
    try:
        return LocalRuntime(path, n_ctx=512, n_threads=1, cache_mib=0, gpu_layers=0)
    except ImportError:
        return None


def can_count(model: str) -> bool:
    """Whether :func:`local_prompt_tokens` counts ``model`` here (llama.cpp runs on this CPU)."""
    return _counter(model) is not None


def local_prompt_tokens(model: str, messages: list[dict[str, Any]]) -> int | None:
    """Tokens the embedded ``model`` (``local/<name>`` or ``local/file:<path>``) would evaluate
    for the chat ``messages`` (:meth:`LocalRuntime.prompt_tokens`), or ``None`` where the
    runtime cannot run on this machine.

    Raises
    ------
    LocalModelMissingError, LocalModelFileError
        The model's weights are not installed, or its file is not a usable GGUF file.
    ValueError
        ``model`` is not a ``local/`` model.
    """
    counter = _counter(model)
    return None if counter is None else counter.prompt_tokens(messages)


@atexit.register
def _close() -> None:
    with _LOCK:
        for runtime in _COUNTERS.values():
            if runtime is not None:
                runtime.close()
        _COUNTERS.clear()
