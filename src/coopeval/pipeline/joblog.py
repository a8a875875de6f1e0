"""Job logging for Snakemake scripts: stderr goes to the rule's log file and the console."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from typing import IO, Any

from coopeval.core.environment import use_offline_litellm


class _Tee:
    def __init__(self, *streams: IO[str]) -> None:
        self.streams = streams

    def write(self, text: str) -> int:
        for stream in self.streams:
            stream.write(text)
            stream.flush()
        return len(text)

    def flush(self) -> None:
        for stream in self.streams:
            stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.streams[0], name)


def log_to(path: str) -> None:
    """Tee stderr (progress lines, warnings, tracebacks) into ``path`` and put litellm in offline
    mode (:func:`coopeval.core.environment.use_offline_litellm`): every workflow script's entry
    point."""
    use_offline_litellm()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    handle = open(path, "w", buffering=1, encoding="utf-8")  # noqa: SIM115 - lives for the job
    sys.stderr = _Tee(handle, sys.__stderr__)  # type: ignore[assignment]


def start_job(log_path: str, config: Mapping[str, Any]) -> None:
    """Every workflow script's entry point: :func:`log_to` ``log_path``, then import the
    config's ``plugins`` (:func:`coopeval.pipeline.plugins.load_plugins`), so plugin games,
    mechanisms, providers and studies are registered in the job's own process.

    Raises
    ------
    coopeval.core.errors.ConfigError
        A plugin module that cannot be imported, naming it.
    """
    log_to(log_path)
    from coopeval.pipeline.plugins import load_plugins

    load_plugins(config)
