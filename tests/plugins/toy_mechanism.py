"""A toy mechanism defined outside ``src/``: the proof that a plugin adds a mechanism with no
edit to any other file (the mechanism recipe in CONTRIBUTING.md).

Importing the module registers the mechanism with
:func:`coopeval.studies.coopeval.mechanisms.catalog.register_mechanism`; its entry names the
class below as ``toy_mechanism:ToyRounds`` (imported when a cell plays). A config lists the
module under ``plugins`` and ``ToyRounds`` under ``mechanisms`` (see
``tests/workflow/test_plugins.py``).

The mechanism: every seat-ordered matchup (self-play included, as NoMechanism) plays
``num_rounds`` rounds (default 2) with no mechanism section and no history shown; the score is
undiscounted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coopeval.studies.coopeval.mechanisms.base import CellContext
from coopeval.studies.coopeval.mechanisms.catalog import MechanismInfo, register_mechanism
from coopeval.studies.coopeval.mechanisms.repetition import RepeatedPlay


@dataclass(frozen=True)
class ToyRoundsParams:
    """The toy's one parameter."""

    num_rounds: int = field(default=2, metadata={"description": "Rounds of every matchup.", "minimum": 1})


class ToyRounds(RepeatedPlay):
    """``num_rounds`` blind rounds per matchup (discount 1)."""

    def num_rounds(self, ctx: CellContext) -> int:
        """The cell's ``num_rounds``."""
        return int(self.params(ctx).num_rounds)


register_mechanism(MechanismInfo("ToyRounds", "Toy rounds", ToyRoundsParams, "toy_mechanism:ToyRounds", "toy_rounds"))
