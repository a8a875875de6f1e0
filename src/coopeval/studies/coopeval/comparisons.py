"""CoopEval's paired comparisons: two agents on the same co-player profiles and replicates.

The Mean of agent A in one cell (one run of one (mechanism, game)) is the pooled mean of its
seat scores (docs/protocol/evaluation.md#mean), and a table value is the mean over runs
(docs/protocol/tables.md step 4). Each seat of A faces a *co-player profile* c (the sorted
agents of the other seats: one payoff-tensor entry T[A, c]). Grouping A's seats by
(mechanism, game, run, c) writes the difference of the table values as a sum over clusters,

    Δ = Σ_{(m, g, r, c)} w_{m,g} · ( S_A(m,g,r,c) / n_A(m,g,r) − S_B(m,g,r,c) / n_B(m,g,r) ) / R,

S the sum of the agent's seat scores facing c, n its seat count in the run, R the number of
runs. With w = 1 (one (mechanism, game), or several pooled) Δ is exactly the mean over the
selected cells of the ``metrics`` table's Mean(A) − Mean(B). The aggregate table's normalised
Mean (docs/protocol/games.md#normalisation) averages games with w_g = 1 / (G · (coop_g − NE_g)),
the NE offsets cancelling in the difference. Clusters (co-player profile, replicate) are what
:func:`coopeval.comparison.paired.paired_cluster_test` resamples; the reputation format (one
row per seated agent, no co-players recorded) has one cluster per run.

Fitness and deviation-rating (DR rank) differences reuse the tables' bootstrap (runs, then
matchups within strata of equal agent multisets; :mod:`coopeval.studies.coopeval.tables.bootstrap`,
:mod:`coopeval.studies.coopeval.tables.dr_bootstrap`): A's and B's values come from the same
resampled tensors, so their difference is paired, and
:func:`coopeval.comparison.paired.replicate_test` gives its interval and p-value.
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import polars as pl

from coopeval.comparison.multiplicity import DEFAULT_CORRECTION
from coopeval.comparison.paired import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    PairedEstimate,
    paired_cluster_test,
    replicate_test,
)
from coopeval.comparison.record import comparison_row, corrected
from coopeval.evaluation.tensor import Observation
from coopeval.games import SOCIAL_DILEMMA_TYPES, get_game
from coopeval.studies.coopeval.tables.bootstrap import CellReplicates, bootstrap_groups, group_rng
from coopeval.studies.coopeval.tables.defaults import REPLICATOR_LR, REPLICATOR_STEPS
from coopeval.studies.coopeval.tables.dr_bootstrap import DR_RESAMPLES, dr_replicates_by_group
from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE, observations_by_cell

__all__ = [
    "ALL_GAMES",
    "CLUSTERS",
    "METRICS",
    "Cells",
    "all_pair_rows",
    "compare_dr",
    "compare_fitness",
    "compare_mean",
    "dr_replicates",
    "fitness_replicates",
    "mean_contributions",
    "pairs_in",
    "replicates_of",
    "scope_name",
    "select_cells",
]

METRICS = ("Mean", "Fitness", "DR")
"""Metrics ``coopeval compare --study coopeval`` accepts (DR: the tables' deviation-rating rank,
1 = best, so a positive Δ means A ranks worse)."""
ALL_GAMES = "All"
"""Game part of the scope of the aggregate (normalised, four social dilemmas) comparisons."""
CLUSTERS = "(co-player profile, replicate) clusters"
FITNESS_RESAMPLES = 1000
"""Bootstrap resamples of a Fitness comparison (each runs the replicator dynamics)."""

Cells = dict[tuple[str, ...], list[Observation]]
"""(cell_id, source, run, mechanism, game) → observations, as
:func:`coopeval.studies.coopeval.tables.metrics.observations_by_cell` returns them."""


def scope_name(mechanism: str | None, game: str | None) -> str:
    """``"<mechanism>/<game>"`` with ``*`` for a part pooled over every value."""
    return f"{mechanism or '*'}/{game or '*'}"


def select_cells(cells: Cells, mechanism: str | None = None, game: str | None = None) -> Cells:
    """The cells of one mechanism and/or game (None: every one)."""
    return {k: v for k, v in cells.items() if (mechanism is None or k[3] == mechanism) and (game is None or k[4] == game)}


def mean_contributions(
    cells: Cells, a: str, b: str, game_weight: Callable[[str], float] | None = None
) -> tuple[np.ndarray, np.ndarray, int]:
    """Per-cluster contributions of A and B to the Mean difference (see the module docstring).

    Only cells where both agents sit count (R = their number; per game when ``game_weight``
    is given, each game then weighted 1/G · ``game_weight(game)``).

    Returns
    -------
    (a, b, n_pairs)
        Contributions, shape (K,) each, over the union of both agents' clusters (sorted keys);
        n_pairs counts the clusters where both agents have seats.

    Raises
    ------
    ValueError
        If no cell seats both agents.
    """
    both = {k: obs for k, obs in cells.items() if _seats(obs, a) and _seats(obs, b)}
    if not both:
        raise ValueError(f"agents {a!r} and {b!r} never sit in the same cell of the selection")
    runs_per_game: dict[str, int] = defaultdict(int)
    for key in both:
        runs_per_game[key[4] if game_weight else ""] += 1
    sums: dict[str, dict[tuple[Any, ...], float]] = {a: defaultdict(float), b: defaultdict(float)}
    for key, obs in both.items():
        group = key[4] if game_weight else ""
        weight = 1.0 / runs_per_game[group]
        if game_weight is not None:
            weight *= game_weight(group) / len(runs_per_game)
        for agent in (a, b):
            n = _seats(obs, agent)
            for seat_agents, seat_scores in obs:
                for seat, (name, score) in enumerate(zip(seat_agents, seat_scores, strict=True)):
                    if name == agent:
                        profile = tuple(sorted(seat_agents[:seat] + seat_agents[seat + 1 :]))
                        sums[agent][(*key, profile)] += weight * float(score) / n
    keys = sorted(set(sums[a]) | set(sums[b]))
    n_pairs = len(set(sums[a]) & set(sums[b]))
    return (np.array([sums[a].get(k, 0.0) for k in keys]), np.array([sums[b].get(k, 0.0) for k in keys]), n_pairs)


def _seats(observations: Sequence[Observation], agent: str) -> int:
    return sum(1 for seat_agents, _ in observations for name in seat_agents if name == agent)


def normalised_weight(game: str) -> float:
    """1 / (coop − NE) of a game (docs/protocol/games.md#normalisation): the aggregate table's scale."""
    definition = get_game(game)
    return 1.0 / (definition.coop_value - definition.ne_value)


def compare_mean(
    cells: Cells, a: str, b: str, *, normalised: bool = False,
    n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED,
) -> PairedEstimate:
    """Paired comparison of Mean(A) − Mean(B) over ``cells`` (raw points, or normalised and
    averaged over games as in the aggregate table when ``normalised``).

    Raises
    ------
    ValueError
        If no cell seats both agents.
    """
    x, y, n_pairs = mean_contributions(cells, a, b, normalised_weight if normalised else None)
    return paired_cluster_test(x, y, n_pairs=n_pairs, clusters=CLUSTERS, n_resamples=n_resamples, seed=seed)


def _runs_by_group(cells: Cells) -> dict[tuple[str, str], list[list[Observation]]]:
    """(mechanism, game) → one observation list per run (runs in sorted order)."""
    groups: dict[tuple[str, str], dict[str, list[Observation]]] = defaultdict(dict)
    for key, obs in cells.items():
        groups[(key[3], key[4])].setdefault(key[2], []).extend(obs)
    return {g: [runs[r] for r in sorted(runs)] for g, runs in groups.items()}


def fitness_replicates(
    cells: Cells, *, n_resamples: int = FITNESS_RESAMPLES, seed: int = DEFAULT_SEED,
    steps: int = REPLICATOR_STEPS, lr: float = REPLICATOR_LR,
) -> dict[tuple[str, str], CellReplicates]:
    """The tables' bootstrap replicates per (mechanism, game) of ``cells`` (one stream per group
    from ``seed``; :func:`coopeval.studies.coopeval.tables.bootstrap.bootstrap_groups`)."""
    work = {g: (runs, group_rng(seed, *g)) for g, runs in _runs_by_group(cells).items()}
    return bootstrap_groups(work, n_resamples, steps, lr)  # type: ignore[arg-type, return-value]


def dr_replicates(
    cells: Cells, *, rule: str = "strictest", n_resamples: int = DR_RESAMPLES, seed: int = DEFAULT_SEED,
) -> dict[tuple[str, str], tuple[tuple[str, ...], np.ndarray | None]]:
    """DR rank replicates per (mechanism, game) of ``cells`` (same resampling and streams as
    :func:`fitness_replicates`; :mod:`coopeval.studies.coopeval.tables.dr_bootstrap`):
    group → (agents, ranks of shape (B, S) or None)."""
    reps = dr_replicates_by_group(_runs_by_group(cells), seed=seed, n_resamples=n_resamples, rule=rule)
    return {g: (r.agents, r.ranks) for g, r in reps.items()}


def _table_difference(cells: Cells, rows: pl.DataFrame, a: str, b: str, what: str) -> tuple[float, pl.DataFrame]:
    """Mean over the selected cells of the ``metrics`` rows' value(A) − value(B), and the cells
    (``cell_id``, ``mechanism``, ``game``, A, B columns) where both have a value."""
    ids = [k[0] for k in cells]
    mine = rows.filter(pl.col("cell_id").is_in(ids) & pl.col("agent").is_in([a, b]))
    wide = mine.pivot(on="agent", index=["cell_id", "mechanism", "game"], values="value") if mine.height else mine
    if a in wide.columns and b in wide.columns:
        wide = wide.drop_nulls([a, b])
    if not mine.height or a not in wide.columns or b not in wide.columns or not wide.height:
        raise ValueError(f"agents {a!r} and {b!r} have no {what} in the same cell of the selection (Reputation has none)")
    return float((wide[a] - wide[b]).mean()), wide  # type: ignore[arg-type]


def _replicate_comparison(
    delta: float, wide: pl.DataFrame, cells: Cells, a: str, b: str,
    replicates: Mapping[tuple[str, str], tuple[tuple[str, ...], np.ndarray | None]], what: str, method: str,
) -> PairedEstimate:
    """Interval and p-value of Δ from per-(mechanism, game) replicates, averaged with the
    weights of Δ (each group's share of the cells in ``wide``)."""
    used = set(wide["cell_id"].to_list())
    strata = {(k[2], k[3], k[4], tuple(sorted(agents))) for k, obs in cells.items() if k[0] in used for agents, _ in obs}
    diff = np.zeros(0)
    for mech, game, count in wide.group_by(["mechanism", "game"]).len().iter_rows():
        agents, values = replicates.get((mech, game), ((), None))
        if values is None or a not in agents or b not in agents:
            return PairedEstimate(delta, None, None, None, None, None, wide.height, len(strata), "tables' bootstrap",
                                  f"{scope_name(mech, game)}: no {what} bootstrap (a run's payoff tensor has empty"
                                  " cells): no interval, p-value or power")
        part = (count / wide.height) * (values[:, agents.index(a)] - values[:, agents.index(b)])
        diff = part if not len(diff) else diff + part
    method = (f"paired bootstrap of the tables (runs, then matchups within equal-agent strata; {len(diff)}"
              f" resamples{method}; percentile interval, p-value by interval inversion)")
    return replicate_test(delta, diff, n_pairs=wide.height, n_clusters=len(strata), method=method)


def compare_fitness(
    cells: Cells, metrics: pl.DataFrame, a: str, b: str, *,
    replicates: Mapping[tuple[str, str], CellReplicates] | None = None, n_resamples: int = FITNESS_RESAMPLES,
    seed: int = DEFAULT_SEED, steps: int = REPLICATOR_STEPS, lr: float = REPLICATOR_LR,
) -> PairedEstimate:
    """Paired comparison of replicator Fitness(A) − Fitness(B) over ``cells``.

    Δ is the mean over the selected cells of the ``metrics`` table's Fitness(A) − Fitness(B);
    the interval and p-value come from the tables' bootstrap replicates (``replicates``, else
    :func:`fitness_replicates` of ``cells``), averaged over the (mechanism, game) groups with
    the weights of Δ (their share of the cells).

    When a group has no Fitness replicates (a run's tensor has empty cells) the interval,
    p-value and MDE are None and ``note`` says why.

    Raises
    ------
    ValueError
        If no selected cell has a Fitness of both agents.
    """
    delta, wide = _table_difference(cells, metrics.filter(pl.col("metric") == "Fitness"), a, b, "Fitness")
    used = set(wide["cell_id"].to_list())
    selected = {k: v for k, v in cells.items() if k[0] in used}
    reps = replicates if replicates is not None else fitness_replicates(selected, n_resamples=n_resamples, seed=seed, steps=steps, lr=lr)
    by_group = {g: (r.agents, r.fitness) for g, r in reps.items()}
    return _replicate_comparison(delta, wide, selected, a, b, by_group, "Fitness", "")


def compare_dr(
    cells: Cells, metrics: pl.DataFrame, a: str, b: str, *, rule: str = "strictest",
    replicates: Mapping[tuple[str, str], tuple[tuple[str, ...], np.ndarray | None]] | None = None,
    n_resamples: int = DR_RESAMPLES, seed: int = DEFAULT_SEED,
) -> PairedEstimate:
    """Paired comparison of the tables' deviation-rating rank DR(A) − DR(B) over ``cells``.

    Δ is the mean over the selected cells of the ``metrics`` table's ``DR_rank`` (rule
    ``rule``) of A minus B's: the difference of the per-game table's DR values (rank units,
    1 = best: Δ > 0 means A ranks worse). The interval and p-value come from DR rank replicates
    on the same resampled tensors as Fitness (``replicates``, else :func:`dr_replicates`),
    averaged over the (mechanism, game) groups with the weights of Δ.

    Raises
    ------
    ValueError
        If no selected cell has a DR rank of both agents under ``rule``.
    """
    rows = metrics.filter((pl.col("metric") == "DR_rank") & (pl.col("rule") == rule))
    delta, wide = _table_difference(cells, rows, a, b, f"DR rank (rule {rule})")
    used = set(wide["cell_id"].to_list())
    selected = {k: v for k, v in cells.items() if k[0] in used}
    reps = replicates if replicates is not None else dr_replicates(selected, rule=rule, n_resamples=n_resamples, seed=seed)
    return _replicate_comparison(delta, wide, selected, a, b, reps, "DR", f", deviation ratings under rule {rule}")


def all_pair_rows(
    scores: pl.DataFrame, metrics: pl.DataFrame | None = None, *, correction: str = DEFAULT_CORRECTION,
    aggregate_games: Sequence[str] = SOCIAL_DILEMMA_TYPES, factor: Mapping[str, str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES, seed: int = DEFAULT_SEED, steps: int = REPLICATOR_STEPS,
    lr: float = REPLICATOR_LR, dr_rule: str | None = None,
) -> list[dict[str, Any]]:
    """Every pair of agents, per (mechanism, game) and per mechanism over ``aggregate_games``
    (normalised Mean, scope ``<mechanism>/All``), corrected per (scope, metric) family.

    Mean always; Fitness per (mechanism, game) when ``metrics`` is given and the cell has it;
    DR (the tables' deviation-rating rank under ``dr_rule``) likewise when ``dr_rule`` is given,
    per (mechanism, game) and over ``aggregate_games`` (scope ``<mechanism>/All``: the aggregate
    table's mean rank, from the same per-game DR replicates, so no further LP solves).
    ``factor`` (cell_id → level of a further design factor, e.g. a prompt variant) compares
    each level on its own cells, scope ``<mechanism>/<game>/<level>``; cells it does not list
    are left out. Rows follow :data:`coopeval.comparison.record.COMPARISONS_SCHEMA` (study
    ``coopeval``).
    """
    every = observations_by_cell(scores)
    levels: dict[str | None, Cells] = {}
    for key, obs in every.items():
        if factor is None or key[0] in factor:
            levels.setdefault(None if factor is None else factor[key[0]], {})[key] = obs
    rows: list[dict[str, Any]] = []
    for level, cells in sorted(levels.items(), key=lambda item: str(item[0])):
        suffix = "" if level is None else f"/{level}"
        dr_by_group: dict[tuple[str, str], tuple[tuple[str, ...], np.ndarray | None]] = {}
        for mech, game in sorted({(k[3], k[4]) for k in cells}):
            selected = select_cells(cells, mech, game)
            scope = scope_name(mech, game) + suffix
            pairs = pairs_in(selected)
            for a, b in pairs:
                rows.append(comparison_row("coopeval", scope, "Mean", a, b, compare_mean(selected, a, b, n_resamples=n_resamples, seed=seed),
                                           replicates=replicates_of(selected, a, b)))
            if metrics is None:
                continue
            if _has_metric(metrics, selected, "Fitness"):
                fitness_reps = fitness_replicates(selected, seed=seed, steps=steps, lr=lr)
                rows += _replicate_rows(scope, "Fitness", pairs, compare_fitness, selected, metrics, replicates=fitness_reps)
            if dr_rule is not None and _has_metric(metrics, selected, "DR_rank", dr_rule):
                dr_reps = dr_replicates(selected, rule=dr_rule, seed=seed)
                dr_by_group.update(dr_reps)
                rows += _replicate_rows(scope, "DR", pairs, compare_dr, selected, metrics, rule=dr_rule, replicates=dr_reps)
        for mech in sorted({k[3] for k in cells}):
            selected = {k: v for k, v in select_cells(cells, mech).items() if k[4] in aggregate_games}
            scope = scope_name(mech, ALL_GAMES) + suffix
            pairs = pairs_in(selected)
            for a, b in pairs:
                rows.append(comparison_row("coopeval", scope, "Mean", a, b,
                                           compare_mean(selected, a, b, normalised=True, n_resamples=n_resamples, seed=seed),
                                           replicates=replicates_of(selected, a, b)))
            if dr_rule is not None and metrics is not None and _has_metric(metrics, selected, "DR_rank", dr_rule):
                # the aggregate table's DR (mean rank over games): the per-game replicates, reused
                rows += _replicate_rows(scope, "DR", pairs, compare_dr, selected, metrics, rule=dr_rule, replicates=dr_by_group)
    return corrected(rows, correction)


def _replicate_rows(
    scope: str, metric: str, pairs: Sequence[tuple[str, str]], compare: Callable[..., PairedEstimate],
    cells: Cells, metrics: pl.DataFrame, **options: Any,
) -> list[dict[str, Any]]:
    """Rows of ``compare(cells, metrics, a, b, **options)`` for the pairs it can compare (a pair
    without values of both is left out)."""
    rows = []
    for a, b in pairs:
        try:
            estimate = compare(cells, metrics, a, b, **options)
        except ValueError:  # one of the two has no value here (e.g. excluded match-ups)
            continue
        rows.append(comparison_row("coopeval", scope, metric, a, b, estimate, replicates=replicates_of(cells, a, b)))
    return rows


def replicates_of(cells: Cells, a: str, b: str) -> int:
    """The replicates (distinct runs) of ``cells`` in which A and B sit together: what a
    comparison's clusters were sampled from (:func:`coopeval.comparison.evidence.verdict`)."""
    return len({k[2] for k, obs in cells.items() if _seats(obs, a) and _seats(obs, b)})


def pairs_in(cells: Cells) -> list[tuple[str, str]]:
    """Every pair (a, b), a < b by name, of agents that sit together in at least one cell."""
    agents = sorted({name for obs in cells.values() for seat_agents, _ in obs for name in seat_agents} - {LLM_AVERAGE})
    together = [(a, b) for a, b in itertools.combinations(agents, 2)
                if any(_seats(obs, a) and _seats(obs, b) for obs in cells.values())]
    return together


def _has_metric(metrics: pl.DataFrame, cells: Cells, metric: str, rule: str = "") -> bool:
    ids = [k[0] for k in cells]
    rows = metrics.filter(pl.col("cell_id").is_in(ids) & (pl.col("metric") == metric))
    return (rows.filter(pl.col("rule") == rule) if rule else rows).height > 0
