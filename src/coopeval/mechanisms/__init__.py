"""Mechanism registry: type name → class (spec §4)."""

from __future__ import annotations

from coopeval.mechanisms.base import Mechanism
from coopeval.mechanisms.repetition import NoMechanism, Repetition

MECHANISMS: dict[str, type[Mechanism]] = {
    "NoMechanism": NoMechanism,
    "Repetition": Repetition,
}


def get_mechanism(name: str) -> Mechanism:
    """Instantiate a mechanism by type name.

    Raises
    ------
    KeyError
        Naming the known mechanisms, if ``name`` is unknown.
    """
    if name not in MECHANISMS:
        raise KeyError(f"unknown mechanism {name!r}; known mechanisms: {', '.join(MECHANISMS)}")
    return MECHANISMS[name]()
