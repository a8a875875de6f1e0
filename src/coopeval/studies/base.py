"""The ``Study`` contract: what the generic workflow needs from each study (architecture.md).

A study (CoopEval, gossip, evolution) declares its part of the config schema, enumerates its
cells (the units Snakemake hashes), plays one cell through the shared decision loop and returns
the records of the tables it declared in :data:`coopeval.core.schemas.SCHEMAS`. The generic
``play`` and ``store`` rules work from this contract only; a study adds one rules file for its
own downstream stages (metrics, figures, tables) and a target named after it.

Studies never import each other (checked by import-linter); they import the engine below them
(core, games, decisions, cache, agents, evaluation) and this module.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import polars as pl

from coopeval.agents.maker import CallStats, DecisionMaker
from coopeval.core.journal import Journal
from coopeval.core.prompts import PromptLibrary


@dataclass(frozen=True)
class PlayInputs:
    """Everything a study's :meth:`Study.play` may use besides the cell spec.

    ``maker`` is the one decision loop (ask → validate → re-ask → cache → record); ``prompts`` the
    study's prompt templates; ``journal`` the per-cell attempt journal (or ``None`` in tests).
    """

    maker: DecisionMaker
    prompts: PromptLibrary
    journal: Journal | None = None


class Study(Protocol):
    """One study of the benchmark.

    Attributes
    ----------
    name:
        Config section, Snakemake target and ``results/play/<name>/`` folder, e.g. ``"gossip"``.
    play_tables:
        Names of the tables :meth:`play` returns, each registered in ``coopeval.core.schemas``.
    """

    name: str
    play_tables: tuple[str, ...]

    def cells(self, config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Cell specs of a validated config; each has ``cell_id`` (12 hex chars) and ``path``
        (the cell's folder below ``results/<stage>/``, ending in the cell id)."""
        ...

    def play(self, spec: Mapping[str, Any], inputs: PlayInputs) -> dict[str, pl.DataFrame]:
        """Play one cell; return one frame per name in :attr:`play_tables`."""
        ...

    def label(self, spec: Mapping[str, Any]) -> str:
        """Short progress label of a cell, e.g. ``"Repetition/prisoners_dilemma/r1"``."""
        ...


__all__ = ["CallStats", "PlayInputs", "Study"]
