"""What litellm knows about a model string: its client, its providers and their API-key variables.

litellm is imported only by the functions here (never at module import), after
:func:`coopeval.core.environment.use_offline_litellm` has put it in offline mode.

API-key variables come from litellm's own table, :func:`litellm.validate_environment`, read once
per process in a child process with an empty environment (so the answer names the variables a
provider reads whether or not they are set, and this process's environment is never touched).
Two kinds of names it reports are left out: base URLs (``*_API_BASE``, ``*_BASE_URL``, e.g.
``ollama``'s ``OLLAMA_API_BASE``, which has a local default; they are base-URL variables,
:func:`coopeval.agents.endpoint.base_url_variables`), and the second of two alternatives:
litellm accepts either ``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` for ``gemini/`` and we require
``GEMINI_API_KEY`` (:data:`KEY_CHOICES`).
"""

from __future__ import annotations

import difflib
import functools
import json
import subprocess
import sys
from types import ModuleType

from coopeval.core.environment import LITELLM_OFFLINE, use_offline_litellm

__all__ = ["KEY_CHOICES", "api_key_variables", "import_litellm", "litellm_key_table", "routing_error"]

KEY_CHOICES: dict[str, tuple[str, ...]] = {"gemini": ("GEMINI_API_KEY",)}
"""Providers for which litellm accepts any one of several key variables: the one we require."""

_KEY_TABLE_SCRIPT = """
import json, litellm
table = {}
for p in sorted(str(getattr(p, "value", p)) for p in litellm.provider_list):
    try:
        table[p] = litellm.validate_environment(model=p + "/model")["missing_keys"]
    except Exception:
        table[p] = []
print(json.dumps(table))
"""


def import_litellm() -> ModuleType:
    """litellm, imported in offline mode, with its debug banners off."""
    use_offline_litellm()
    import litellm

    litellm.suppress_debug_info = True  # no "Provider List"/"Give Feedback" lines on stdout
    return litellm


@functools.lru_cache(maxsize=1)
def litellm_key_table() -> dict[str, tuple[str, ...]]:
    """litellm provider → the API-key variables it needs (see the module docstring).

    Computed once per process in a child Python (about 2-3 s: it imports litellm) with an
    environment holding only litellm's offline settings.

    Raises
    ------
    RuntimeError
        The child process failed (its stderr is in the message).
    """
    done = subprocess.run(
        [sys.executable, "-c", _KEY_TABLE_SCRIPT],
        env={**LITELLM_OFFLINE, "PYTHONPATH": ":".join(p for p in sys.path if p)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"could not read litellm's API-key table: {done.stderr.strip()[-2000:]}")
    raw: dict[str, list[str]] = json.loads(done.stdout.strip().splitlines()[-1])
    table: dict[str, tuple[str, ...]] = {}
    for provider, names in raw.items():
        keys = tuple(n for n in names if not n.endswith(("_API_BASE", "_BASE_URL")))
        table[provider] = KEY_CHOICES.get(provider, keys)
    return table


def api_key_variables(model: str) -> tuple[str, ...]:
    """Environment variables holding the API key(s) of litellm model string ``model``.

    ``openai/…`` → ``("OPENAI_API_KEY",)``, ``openrouter/…`` → ``("OPENROUTER_API_KEY",)``,
    ``gemini/…`` → ``("GEMINI_API_KEY",)``, ``cohere/…`` → ``("COHERE_API_KEY",)``;
    ``ollama/``, ``hosted_vllm/`` and providers litellm does not know → ``()``.
    """
    provider = model.split("/", 1)[0]
    return litellm_key_table().get(provider, ())


def routing_error(model: str) -> str | None:
    """Why litellm cannot route ``model`` (e.g. a misspelt provider prefix such as
    ``openaii/gpt-4o``), naming the closest known providers; ``None`` if it can.

    Imports litellm (1-4 s), so the workflow asks once per run, in its main process before the
    first job starts, not while it builds the DAG.
    """
    litellm = import_litellm()
    try:
        litellm.get_llm_provider(model)
    except litellm.BadRequestError:  # "LLM Provider NOT provided"
        prefix = model.split("/", 1)[0]
        known = sorted(str(getattr(p, "value", p)) for p in litellm.provider_list)
        close = difflib.get_close_matches(prefix, known, n=3) or ["openai", "anthropic", "gemini", "openrouter"]
        return f"litellm knows no provider {prefix!r} in {model!r}; did you mean {' or '.join(close)}? (see litellm's provider list)"
    return None
