"""Shrunk cells: play fewer repeated units of a cell and weight its rows so the counts stay exact.

Some cells repeat one unit of play many times with the same number of decisions and prompts of
the same shape; simulating every repetition only costs time. A study's shrinker returns a
smaller spec of the cell and, per ``llm_calls`` row of the smaller cell, the number of rows of
the full cell it stands for (:class:`Shrunk`). The simulation plays the smaller spec and
multiplies (:mod:`.simulate`); ``--every-replicate`` plays every cell in full instead.

CoopEval's repeated mechanisms (Repetition, Reputation−, Reputation+;
docs/protocol/mechanisms.md#repetition, #reputation): every round of a match-up (or of the
population game) asks the same decisions, and a prompt shows at most the last ``k =
lookup_depth`` rounds (the reputation trees too stay inside that window), so rounds ``k + 1 ..
T`` have prompts of one shape. The cell is played for ``T* = min(T, k + 1)`` rounds; the rows of
round ``T*`` count ``T − T* + 1`` times, and its critical path gains the ``T − T*`` rounds left
out.

Evolution (docs/protocol/evolution.md#vh-generation-loop, #invasion-test, #strategy-matrix):

* **generations**: generation 1 writes the first population, generation 2 the first selected
  one; every later generation asks the same decisions (the same numbers of strategies,
  donations, invasion games and matrix probes) with prompts of the same shape (stand-ins write
  strategies of one length, and a donation's trace has a fixed length). The cell is played for
  ``g* = min(G, max(2, invasion first generation, matrix first generation))`` generations; the
  rows of generation ``g*`` count ``G − g* + 1`` times.
* **invasion tests and matrices**: each test plays one population of N − 1 copies and the free
  rider, each matrix 121 probes (× samples): the same decisions whatever strategy is tested, in
  whichever generation, with prompts of the same shape. One test and one matrix are played, in
  generation ``g*`` only; their rows count ``min(per_generation, N)`` times (the analysed sample
  has at most N agents, :meth:`~coopeval.studies.evolution.analysis.RobustnessTests.analysis_sample`)
  for each of the ``G − first_generation + 1`` generations that test.

Decision counts stay exact (checked against full simulations in ``tests/estimate``); prompt
characters are exact where the shape is the same and approximate otherwise (a later
generation's names and scores differ by a few characters).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

__all__ = ["SHRINKERS", "VALIDITY_MECHANISMS", "WINDOWED_MECHANISMS", "Shrunk", "shrink", "validity_decides_counts"]


@dataclass(frozen=True)
class Shrunk:
    """A cell to play in place of a larger one: ``spec`` (the cell_id kept) and ``weight``, an
    expression over its ``llm_calls`` rows giving how many rows of the full cell each stands for."""

    spec: dict[str, Any]
    weight: pl.Expr
    extra_steps: int = 0
    """Dependent steps (rounds) of the full cell the smaller one does not play."""


WINDOWED_MECHANISMS = ("Repetition", "ReputationFirstOrder", "Reputation")
"""CoopEval mechanisms that play ``num_rounds`` rounds and show the last ``lookup_depth`` of them."""


VALIDITY_MECHANISMS = ("NoMechanism", *WINDOWED_MECHANISMS)
"""CoopEval mechanisms whose decisions depend on the answers only through their validity (a
failed decision ends its match-up or leaves the population game); a plugin mechanism is not
assumed to be one."""


def _coopeval(spec: Mapping[str, Any]) -> Shrunk:
    params = dict(spec.get("mechanism_params") or {})
    if spec.get("mechanism") not in WINDOWED_MECHANISMS or "num_rounds" not in params or "lookup_depth" not in params:
        return Shrunk(dict(spec), pl.lit(1.0))
    rounds = int(params["num_rounds"])
    played = min(rounds, int(params["lookup_depth"]) + 1)
    params["num_rounds"] = played
    weight = pl.when(pl.col("round") == played).then(float(rounds - played + 1)).otherwise(1.0)
    return Shrunk({**spec, "mechanism_params": params}, weight, rounds - played)


def _evolution(spec: Mapping[str, Any]) -> Shrunk:
    p = dict(spec["params"])
    n, generations = int(p["n_agents"]), int(p["generations"])
    invasion, matrix = int(p["invasion_per_generation"]), int(p["matrix_per_generation"])
    first_invasion, first_matrix = int(p["invasion_first_generation"]), int(p["matrix_first_generation"])
    played = min(generations, max(2, first_invasion, first_matrix))
    p.update(
        generations=played,
        invasion_per_generation=min(invasion, 1),
        matrix_per_generation=min(matrix, 1),
        invasion_first_generation=max(first_invasion, played),  # tested in the last played generation only
        matrix_first_generation=max(first_matrix, played),
    )
    matchup = pl.col("matchup_id").cast(pl.String)  # g<generation>/<context>/game<game> (evolution.calls)
    generation = matchup.str.extract(r"^g(\d+)/", 1).cast(pl.Int64)
    weight = (
        pl.when(matchup.str.contains(r"^g\d+/invasion:"))
        .then(float(min(invasion, n) * max(0, generations - first_invasion + 1)))
        .when(matchup.str.contains(r"^g\d+/matrix:"))
        .then(float(min(matrix, n) * max(0, generations - first_matrix + 1)))
        .when(generation == played)
        .then(float(generations - played + 1))
        .otherwise(1.0)
    )
    return Shrunk({**spec, "params": p}, weight)


SHRINKERS: dict[str, Callable[[Mapping[str, Any]], Shrunk]] = {"coopeval": _coopeval, "evolution": _evolution}
"""Study name → its shrinker; studies not listed are played in full."""


def shrink(study: str, spec: Mapping[str, Any]) -> Shrunk:
    """The cell to play for ``spec`` of ``study`` and the weight of its rows (see the module
    docstring); the spec itself with weight 1 for a study without a shrinker."""
    shrinker = SHRINKERS.get(study)
    return shrinker(spec) if shrinker is not None else Shrunk(dict(spec), pl.lit(1.0))


def validity_decides_counts(study: str, spec: Mapping[str, Any]) -> bool:
    """Whether a cell asks the same decisions for any valid answers, its counts depending only on
    which answers are valid: then the defecting stance asks what the cooperative one asks and
    need not be simulated again (:func:`coopeval.estimate.simulate.simulate`'s ``borrow``).

    True for CoopEval's :data:`VALIDITY_MECHANISMS` (NoMechanism, Repetition, the reputations: a
    failed decision ends its match-up, whatever was chosen before) and for evolution cells
    (every donation and probe is asked whatever is given; the strategy re-ask of Horibe's word
    limit never comes up with stand-ins' strategies). False for design mechanisms (votes decide
    whether a contract is signed and played), gossip and any other study.
    """
    if study == "evolution":
        return True
    if study == "coopeval":
        return spec.get("mechanism") in VALIDITY_MECHANISMS
    return False
