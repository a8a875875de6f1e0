"""Mechanism registry: type name → class (spec §4), resolved lazily so that importing the
registry stays cheap and each mechanism lives in its own module."""

from __future__ import annotations

import importlib

from coopeval.studies.coopeval.mechanisms.base import Mechanism

MECHANISMS: dict[str, str] = {
    "NoMechanism": "coopeval.studies.coopeval.mechanisms.repetition:NoMechanism",
    "Repetition": "coopeval.studies.coopeval.mechanisms.repetition:Repetition",
    "ReputationFirstOrder": "coopeval.studies.coopeval.mechanisms.reputation:ReputationFirstOrder",
    "Reputation": "coopeval.studies.coopeval.mechanisms.reputation:Reputation",
    "Mediation": "coopeval.studies.coopeval.mechanisms.mediation:Mediation",
    "Contracting": "coopeval.studies.coopeval.mechanisms.contracting:Contracting",
}
"""Type name → ``module:Class``, in the paper's row order."""


def mechanism_class(name: str) -> type[Mechanism]:
    """The class of a mechanism type name.

    Raises
    ------
    KeyError
        Naming the known mechanisms, if ``name`` is unknown.
    """
    if name not in MECHANISMS:
        raise KeyError(f"unknown mechanism {name!r}; known mechanisms: {', '.join(MECHANISMS)}")
    module, cls = MECHANISMS[name].split(":")
    result: type[Mechanism] = getattr(importlib.import_module(module), cls)
    return result


def get_mechanism(name: str) -> Mechanism:
    """Instantiate a mechanism by type name (see :func:`mechanism_class`)."""
    return mechanism_class(name)()
