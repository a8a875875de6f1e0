"""Errors shared by every layer, and the lookup in a registry that names the known entries."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeVar

_V = TypeVar("_V")


class ConfigError(ValueError):
    """A config value is unknown, ill-typed or inconsistent; the message names the field and the fix."""


class CliError(Exception):
    """Bad input on the ``coopeval`` command line: reported as one line on stderr (naming the
    field and the fix) with exit code 2."""


class ComputationError(Exception):
    """A valid ``coopeval`` command-line input whose evaluation failed: exit code 1."""


def registry_entry(registry: Mapping[str, _V], name: str, what: str, plural: str, known: Iterable[str] | None = None) -> _V:
    """``registry[name]``, the entry of a registry (games, mechanisms, studies, bots…).

    Raises
    ------
    KeyError
        ``unknown <what> '<name>'; known <plural>: a, b, …`` for a name not in ``registry``,
        listing ``known`` (default: the registry's keys, in order).
    """
    if name not in registry:
        listed = ", ".join(registry if known is None else known)
        raise KeyError(f"unknown {what} {name!r}; known {plural}: {listed}")
    return registry[name]
