"""Mechanism classes by type name (docs/protocol/mechanisms.md), resolved lazily from the registry
(:mod:`.catalog`, which names each mechanism's implementing class), so that importing the
registry stays cheap and each mechanism lives in its own module."""

from __future__ import annotations

import importlib

from coopeval.studies.coopeval.mechanisms.base import Mechanism
from coopeval.studies.coopeval.mechanisms.catalog import mechanism_info


def mechanism_class(name: str) -> type[Mechanism]:
    """The class of a mechanism type name (its catalog entry's ``implementation``).

    Raises
    ------
    KeyError
        Naming the known mechanisms, if ``name`` is unknown.
    """
    module, cls = mechanism_info(name).implementation.split(":")
    result: type[Mechanism] = getattr(importlib.import_module(module), cls)
    return result


def get_mechanism(name: str) -> Mechanism:
    """Instantiate a mechanism by type name (see :func:`mechanism_class`); the instance
    carries its catalog entry (``.info``, ``.name``).

    Raises
    ------
    KeyError
        Naming the known mechanisms, if ``name`` is unknown.
    """
    return mechanism_class(name)(mechanism_info(name))
