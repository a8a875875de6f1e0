"""Reduced rosters: play one stand-in per prompt class of a CoopEval roster and weight its rows.

In the CoopEval mechanisms that play every seat-ordered tuple of the roster as an independent
match-up (:data:`MATCHUP_MECHANISMS`: NoMechanism, Repetition, Mediation, Contracting;
docs/protocol/tournament.md#matchups-and-call-counts, docs/protocol/mechanisms.md#mediation,
#contracting), a match-up's prompts depend on the seated agents only through their styles (the
style instruction, docs/protocol/answers.md#prompt-content part 5) and on their answers. Under the
estimate's stand-ins every model of one style answers alike (:mod:`.standin`), so the agents of
one *prompt class* (the same style; each scripted bot its own class) are interchangeable: the
cell is played with one representative per class, and each of its rows stands for

* a match-up row (seat ``i`` of the match-up with classes ``c_1 .. c_N``): the
  ``|c_1| × … × |c_N|`` match-ups of those classes, spread over the models of class ``c_i``
  (each member ``|c_1| × … × |c_N| / |c_i|`` rows);
* a design row (an agent × seat, no match-up): one row of every member of its class.

With S roster agents in K classes and N seats the cell plays K^N match-ups instead of S^N
(config/paper.yaml: 2 classes (CoT, IO) of 6 agents; 8 instead of 216 three-seat match-ups).
Decision counts stay exact and prompt characters are the played ones (prompts name no agent);
cache keys are kept only for the rows actually played (they hold the seated agents' names).
``tests/estimate/test_roster.py`` checks a reduced cell against the full one.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from coopeval.agents.registry import agent_name, agent_style, is_scripted

__all__ = ["MATCHUP_MECHANISMS", "Roster", "prompt_class", "reduce_roster"]

MATCHUP_MECHANISMS = ("NoMechanism", "Repetition", "Mediation", "Contracting")
"""CoopEval mechanisms whose match-ups are every seat-ordered tuple of the roster, each played
apart from the others (the reputations pair the whole population: not reduced)."""


def prompt_class(entry: Mapping[str, Any]) -> str:
    """The prompt class of a roster entry under stand-ins: its style for a language model; the
    entry itself (JSON) for a scripted bot, which answers as itself."""
    if is_scripted(str(entry["model"])):
        return "bot " + json.dumps(dict(entry), sort_keys=True, default=str)
    return "llm " + agent_style(entry)


def _budget(entry: Mapping[str, Any]) -> int:
    params = entry.get("params") or {}
    return int(params.get("max_tokens") or params.get("max_completion_tokens") or 0)


@dataclass(frozen=True)
class Roster:
    """A reduced roster: ``spec`` (the cell with one agent per prompt class), ``size`` (its
    representative's agent name → the agents of its class in the full roster) and ``members``
    (representative name → (model, max_tokens) → how many of its class have them)."""

    spec: dict[str, Any]
    size: dict[str, int]
    members: dict[str, dict[tuple[str, int], int]]

    def _matchup_weight(self) -> pl.Expr:
        """The full cell's match-ups a played match-up stands for (1 without one)."""
        names = pl.col("matchup_id").cast(pl.String).str.split("|")
        sizes = names.list.eval(pl.element().replace_strict(self.size, default=1, return_dtype=pl.Float64).product()).list.first()
        return pl.when(pl.col("matchup_id").is_null()).then(1.0).otherwise(sizes)

    def decision_weight(self) -> pl.Expr:
        """Per row of the reduced cell's ``decisions``: the rows of the full cell it stands for
        (a match-up row: the match-ups of its classes; a design row: its class's agents)."""
        own = pl.col("agent").cast(pl.String).replace_strict(self.size, default=1, return_dtype=pl.Float64)
        return pl.when(pl.col("matchup_id").is_null()).then(own.fill_null(1.0)).otherwise(self._matchup_weight())

    def expand_calls(self, calls: pl.DataFrame) -> pl.DataFrame:
        """The reduced cell's ``llm_calls`` rows spread over the full roster's models: per row
        and per (model, max_tokens) of its agent's class, one row with ``model`` and
        ``max_tokens`` set and a ``roster_weight`` column (the full cell's rows it stands for);
        ``cache_key`` kept only on the row of the played agent's own model and budget."""
        mapping = pl.DataFrame(
            [
                {"agent": rep, "_model": model, "_budget": budget, "_k": float(k)}
                for rep, groups in self.members.items()
                for (model, budget), k in groups.items()
            ],
            schema={"agent": pl.String(), "_model": pl.String(), "_budget": pl.Int64(), "_k": pl.Float64()},
        )
        own = pl.col("agent").cast(pl.String).replace_strict(self.size, default=1, return_dtype=pl.Float64)
        others = pl.when(pl.col("matchup_id").is_null()).then(1.0).otherwise(self._matchup_weight() / own)
        joined = calls.with_columns(pl.col("agent").cast(pl.String), others.alias("_others")).join(
            mapping, on="agent", how="left"
        )
        played = (pl.col("_model") == pl.col("model")) & (pl.col("_budget") == pl.col("max_tokens").fill_null(0))
        return joined.with_columns(
            pl.when(played).then(pl.col("cache_key")).otherwise(None).alias("cache_key"),
            pl.col("_model").alias("model"),
            pl.col("_budget").alias("max_tokens"),
            (pl.col("_others") * pl.col("_k")).alias("roster_weight"),
        ).drop("_model", "_budget", "_k", "_others")


def reduce_roster(study: str, spec: Mapping[str, Any]) -> Roster | None:
    """The reduced roster of a CoopEval cell of a :data:`MATCHUP_MECHANISMS` mechanism (see the
    module docstring); None for any other cell, for a cell that plays a roster sample
    (``max_matchups`` in its spec: its sampled rosters are played as they are, so the estimate
    counts exactly the sample) or when every agent is its own class."""
    if study != "coopeval" or spec.get("mechanism") not in MATCHUP_MECHANISMS or spec.get("max_matchups") is not None:
        return None
    entries = list(spec["agents"])
    classes: dict[str, list[Mapping[str, Any]]] = {}
    for entry in entries:
        classes.setdefault(prompt_class(entry), []).append(entry)
    if len(classes) == len(entries):
        return None
    size: dict[str, int] = {}
    members: dict[str, dict[tuple[str, int], int]] = {}
    for group in classes.values():
        rep = agent_name(group[0])
        size[rep] = len(group)
        counts = members.setdefault(rep, {})
        for entry in group:
            key = (str(entry["model"]), _budget(entry))
            counts[key] = counts.get(key, 0) + 1
    reps = [group[0] for group in classes.values()]
    return Roster({**spec, "agents": [dict(e) for e in entries if any(e is r for r in reps)]}, size, members)
