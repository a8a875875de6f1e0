"""Released metrics: the summary files → ``released_metrics`` rows (rule ``"released"``).

* ``agent_average_payoff.json`` → ``Mean`` per agent type;
* ``replicator_dynamics_fitness.json`` (metagame mechanisms with ``evolutionary_dynamics``) →
  ``Fitness`` and ``FinalPopulation`` (shares summing to 1 within 1e−6);
* ``deviation_ratings.json`` (metagame mechanisms with ``deviation_rating``) → ``DR`` (≤ 0) and
  ``DR_rank`` (docs/protocol/evaluation.md#deviation-ratings), with the ``dr_release_not_reproducible`` flag where known.

Released values are never mixed with our recomputed metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from coopeval.evaluation.deviation import rank_with_ties
from coopeval.studies.coopeval.reference.importer.config import ExperimentConfig
from coopeval.studies.coopeval.reference.importer.errors import ReleasedFileError
from coopeval.studies.coopeval.reference.importer.fields import (
    check_agent_keys,
    finite_number,
    read_json,
)
from coopeval.studies.coopeval.reference.importer.flags import ImportFlag, dr_release_flag
from coopeval.studies.coopeval.reference.importer.layout import REPUTATION_MECHANISMS
from coopeval.studies.coopeval.reference.importer.rows import CellRows

__all__ = ["read_released_metrics"]


def read_released_metrics(
    folder: Path, cfg: ExperimentConfig, rows: CellRows, flags: list[ImportFlag]
) -> None:
    """Append the released metrics of ``folder`` to ``rows`` (and a DR flag to ``flags``).

    ``rows`` gives every row the experiment's key columns. Raises ReleasedFileError on a missing file,
    keys other than ``cfg.roster``, a non-finite value, a share outside [0, 1], shares not
    summing to 1, or a rating > 0.
    """
    roster = set(cfg.roster)
    path = folder / "agent_average_payoff.json"
    means = read_json(path, "{agent type: Mean} for every agent of config.json")
    check_agent_keys(means, roster, path, "{agent type: Mean}")
    for agent in cfg.roster:
        rows.add("released_metrics", agent=agent, metric="Mean", value=finite_number(means[agent], path, f"[{agent!r}]"), rule="released")
    metagame = cfg.mechanism_type not in REPUTATION_MECHANISMS
    if metagame and "evolutionary_dynamics" in cfg.methods:
        path = folder / "replicator_dynamics_fitness.json"
        shape = '{agent type: {"fitness": f, "final_population": x}}'
        rd = read_json(path, shape + " for every agent of config.json")
        check_agent_keys(rd, roster, path, shape)
        total = 0.0
        for agent in cfg.roster:
            entry = rd[agent]
            if not isinstance(entry, Mapping) or "fitness" not in entry or "final_population" not in entry:
                raise ReleasedFileError(path, f"[{agent!r}] must be {{'fitness': f, 'final_population': x}}")
            fit = finite_number(entry["fitness"], path, f"[{agent!r}].fitness")
            pop = finite_number(entry["final_population"], path, f"[{agent!r}].final_population")
            if not -1e-12 <= pop <= 1 + 1e-12:
                raise ReleasedFileError(path, f"[{agent!r}].final_population is {pop}; expected a share in [0, 1]")
            total += pop
            rows.add("released_metrics", agent=agent, metric="Fitness", value=fit, rule="released")
            rows.add("released_metrics", agent=agent, metric="FinalPopulation", value=pop, rule="released")
        if abs(total - 1.0) > 1e-6:
            raise ReleasedFileError(path, f"final_population shares sum to {total}; expected 1")
    if metagame and "deviation_rating" in cfg.methods:
        path = folder / "deviation_ratings.json"
        ratings = read_json(path, "{agent type: rating ≤ 0} for every agent of config.json")
        check_agent_keys(ratings, roster, path, "{agent type: rating}")
        values = []
        for agent in cfg.roster:
            r = finite_number(ratings[agent], path, f"[{agent!r}]")
            if r > 1e-9:
                raise ReleasedFileError(path, f"[{agent!r}] is {r}; expected a rating ≤ 0")
            values.append(r)
        ranks = rank_with_ties(values)
        for agent, r, rank in zip(cfg.roster, values, ranks, strict=True):
            rows.add("released_metrics", agent=agent, metric="DR", value=r, rule="released")
            rows.add("released_metrics", agent=agent, metric="DR_rank", value=rank, rule="released")
        flag = dr_release_flag(rows.cell["run"], folder.name)
        if flag is not None:
            flags.append(flag)
