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
import importlib.metadata
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from coopeval.core.environment import LITELLM_OFFLINE, use_offline_litellm

__all__ = [
    "KEY_CHOICES",
    "api_key_variables",
    "import_litellm",
    "key_table_file",
    "litellm_key_table",
    "read_key_table_here",
    "routing_error",
    "use_key_table",
]

KEY_CHOICES: dict[str, tuple[str, ...]] = {"gemini": ("GEMINI_API_KEY",)}
"""Providers for which litellm accepts any one of several key variables: the one we require."""

_KEY_TABLE_LOOP = """
table = {}
for p in sorted(str(getattr(p, "value", p)) for p in litellm.provider_list):
    try:
        table[p] = litellm.validate_environment(model=p + "/model")["missing_keys"]
    except Exception:
        table[p] = []
"""
_KEY_TABLE_SCRIPT = "import json, litellm\n" + _KEY_TABLE_LOOP + "print(json.dumps(table))\n"

UNREACHABLE_PROXY = "http://127.0.0.1:9"
"""A proxy address nothing listens on (port 9, discard): while the key table is read, every HTTP
request fails at once instead of reaching a server."""

KEY_TABLE_ENVIRONMENT: dict[str, str] = {
    **LITELLM_OFFLINE,
    **dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"), UNREACHABLE_PROXY),
}
"""The whole environment the key-table loop runs in: litellm offline and no network. Asking
``validate_environment`` about a provider that logs in itself (``github_copilot``, ``chatgpt``)
starts a device-code log-in with the provider's server; on a networked machine that waited for a
user for minutes. Behind the unreachable proxy it fails at once and the provider gets no key
variables (as when its check raises)."""

_PRESET_KEY_TABLE: dict[str, tuple[str, ...]] = {}
"""The table another process of the same command read (:func:`use_key_table`)."""


def import_litellm() -> ModuleType:
    """litellm, imported in offline mode, with its debug banners off."""
    use_offline_litellm()
    import litellm

    litellm.suppress_debug_info = True  # no "Provider List"/"Give Feedback" lines on stdout
    return litellm


def key_table_file() -> Path | None:
    """Where the key table of the installed litellm is kept between processes:
    ``$COOPEVAL_KEY_TABLE_DIR`` (default ``$XDG_CACHE_HOME/coopeval``, else ``~/.cache/coopeval``)
    / ``litellm-key-table-<litellm version>.json``; None when litellm is not installed.

    The table depends only on the installed litellm (it is read with an empty environment), so
    one file per litellm version serves every job of every run: without it each play job started
    a child Python importing litellm (~2-3 s of CPU a job; docs/measurements.md).
    """
    try:
        version = importlib.metadata.version("litellm")
    except importlib.metadata.PackageNotFoundError:
        return None
    base = os.environ.get("COOPEVAL_KEY_TABLE_DIR") or str(
        Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "coopeval"
    )
    return Path(base) / f"litellm-key-table-{version}.json"


def _read_saved_table() -> dict[str, list[str]] | None:
    path = key_table_file()
    if path is None or not path.is_file():
        return None
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None  # torn or foreign file: read the table again (and overwrite it)
    valid = isinstance(raw, dict) and all(isinstance(v, list) and all(isinstance(n, str) for n in v) for v in raw.values())
    return raw if valid and raw else None


def _save_table(raw: dict[str, list[str]]) -> None:
    """Write the raw table atomically (a temporary file renamed); a folder that cannot be
    written only costs the next process another read."""
    path = key_table_file()
    if path is None:
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(raw, handle)
        os.replace(tmp, path)
    except OSError:
        return


@functools.lru_cache(maxsize=1)
def litellm_key_table() -> dict[str, tuple[str, ...]]:
    """litellm provider → the API-key variables it needs (see the module docstring).

    Read once per installed litellm version: from :func:`key_table_file` when an earlier process
    saved it, else in a child Python (about 2-3 s: it imports litellm) with an environment
    holding only :data:`KEY_TABLE_ENVIRONMENT` (litellm offline, no network), then saved there.

    Raises
    ------
    RuntimeError
        The child process failed (its stderr is in the message).
    """
    if _PRESET_KEY_TABLE:
        return dict(_PRESET_KEY_TABLE)
    if (saved := _read_saved_table()) is not None:
        return _key_table(saved)
    done = subprocess.run(
        [sys.executable, "-c", _KEY_TABLE_SCRIPT],
        env={**KEY_TABLE_ENVIRONMENT, "PYTHONPATH": ":".join(p for p in sys.path if p)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"could not read litellm's API-key table: {done.stderr.strip()[-2000:]}")
    raw = json.loads(done.stdout.strip().splitlines()[-1])
    _save_table(raw)
    return _key_table(raw)


def _key_table(raw: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    table: dict[str, tuple[str, ...]] = {}
    for provider, names in raw.items():
        keys = tuple(n for n in names if not n.endswith(("_API_BASE", "_BASE_URL")))
        table[provider] = KEY_CHOICES.get(provider, keys)
    return table


def read_key_table_here() -> dict[str, tuple[str, ...]]:
    """:func:`litellm_key_table`'s table read in this process, which imports litellm: the same
    loop, with ``os.environ`` holding only :data:`KEY_TABLE_ENVIRONMENT` while it runs (restored
    after) and litellm's log lines off. For a throwaway child process that imports litellm
    anyway (``coopeval estimate``'s facts worker): it saves the child Python of
    :func:`litellm_key_table`. Hand the result to :func:`use_key_table`."""
    import logging

    litellm = import_litellm()
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(KEY_TABLE_ENVIRONMENT)
    logging.disable(logging.CRITICAL)  # e.g. github_copilot's failed log-in attempts
    scope: dict[str, Any] = {"litellm": litellm}
    try:
        exec(_KEY_TABLE_LOOP, scope)  # the loop of _KEY_TABLE_SCRIPT
    finally:
        logging.disable(logging.NOTSET)
        os.environ.clear()
        os.environ.update(saved)
    _save_table(scope["table"])
    return _key_table(scope["table"])


def use_key_table(table: dict[str, tuple[str, ...]]) -> None:
    """Make :func:`litellm_key_table` return ``table`` (read by :func:`read_key_table_here` in
    another process) instead of reading it, unless it has read it already."""
    _PRESET_KEY_TABLE.update(table)


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
