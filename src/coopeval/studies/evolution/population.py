"""The agents of a generation and their names (docs/protocol/evolution.md#vh-generation-loop, #horibe-changes).

A :class:`Member` is one agent of a generation: its strategy text, its lineage and, once the
generation is played, its results. :class:`RunAgents` are the model roles of a run. Names are
given once, when an agent is born, and kept for life (issue 21 item 6): the name an agent writes
its strategy under is the name its co-players see. Neutral names are ``Player k`` (template
``evo_player_name``) with ``k`` drawn by a seeded permutation; V&H survivors keep theirs and
newcomers take the free numbers. ``compat.vh_generation_names`` shows the agent ids
(``{generation}_{index}``) instead.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from coopeval.agents.protocol import Agent


@dataclass
class Member:
    """One agent of a generation: its strategy, lineage and (after play) results.

    ``display`` is its name in every prompt (strategy writing and play); ``half`` ``A``/``B``
    of the docs/protocol/evolution.md#schedule schedule; ``game1``/``game2`` final resources (units); ``score`` the selection
    score; ``rank`` 1 = best; ``tiebreak`` its place in the seeded shuffle selection sorts;
    ``selection_fallback`` true for a Horibe offspring drawn uniformly because every parent's
    fitness was 0.
    """

    agent_id: str
    born: int
    strategy: str
    justification: str = ""
    parent_id: str | None = None
    parent_rank: int | None = None
    word_count: int = 0
    truncated: bool = False
    status: str = "ok"
    attempts: int = 0
    survived: bool = False
    display: str = ""
    half: str = ""
    game1: float = math.nan
    game2: float = math.nan
    score: float = math.nan
    rank: int = 0
    tiebreak: int = 0
    selection_fallback: bool = False

    def to_json(self) -> dict[str, Any]:
        """The member as a JSON-ready dict (the checkpoint's ``members.json``)."""
        return asdict(self)

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Member:
        """The member of a :meth:`to_json` dict (fields added later take their defaults)."""
        return Member(**dict(data))


@dataclass
class RunAgents:
    """The agents of one run: strategy writer, donor, matrix prober (the same model at each
    role's temperature, :mod:`coopeval.studies.evolution.agents`) and the free rider of docs/protocol/evolution.md#invasion-test."""

    strategy: Agent
    gameplay: Agent
    probe: Agent
    free_rider: Agent


def neutral_names(n: int, taken: Sequence[str], player_name: Callable[[int], str], rng: np.random.Generator) -> list[str]:
    """The ``n`` lowest-numbered names ``player_name(k)`` (k = 1, 2, …) not in ``taken``, in a
    seeded order.

    Raises
    ------
    ValueError
        ``taken`` holds a name twice (two agents of one population would share it).
    """
    if len(set(taken)) != len(taken):
        raise ValueError(f"names of a population must be unique, got {list(taken)}")
    used, free, k = set(taken), [], 0
    while len(free) < n:
        k += 1
        if (name := player_name(k)) not in used:
            free.append(name)
    return [free[int(i)] for i in rng.permutation(n)]
