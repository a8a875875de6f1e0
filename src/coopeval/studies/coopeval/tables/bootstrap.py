"""Seeded bootstrap intervals for the Mean and Fitness table cells (beyond the paper).

Resampling scheme (issue 4 §5; the paper reports no intervals):

1. **Runs.** Draw n_runs runs with replacement from the runs of one (mechanism, game).
2. **Matchups within each drawn run.** Redraw that run's matchups with replacement *within
   strata of equal type multisets* (e.g. the matchups (A, B) and (B, A) form one stratum;
   (A, A) is its own). Every cell of the metagame tensor (docs/protocol/evaluation.md#payoff-tensor) is fed only by the
   matchups of one stratum, so every resample still yields a complete tensor. For the
   reputation format (one row per seated agent) the strata are the agent types.
3. For each resample, recompute per run the Mean (pooled per-seat mean, docs/protocol/evaluation.md#mean) and, for
   metagames, the tensor → replicator dynamics (uniform start, the configured
   steps and η) → Fitness per type and the population-weighted LLM-average Fitness; the table
   statistic is the mean over the drawn runs (docs/protocol/tables.md step 4). Each drawn copy of a run gets
   its own matchup resample.
4. The interval is the 2.5 / 97.5 % percentile of the B resampled statistics.

The replicator dynamics are run for all resamples at once (batched numpy); they follow the
same update as :func:`coopeval.evaluation.replicator.replicator_dynamics`, which the tests
check.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from coopeval.evaluation.replicator import hedge_step
from coopeval.evaluation.tensor import Observation
from coopeval.studies.coopeval.tables.defaults import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    REPLICATOR_LR,
    REPLICATOR_STEPS,
)

__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "CellReplicates",
    "batched_replicator",
    "bootstrap_group",
    "bootstrap_groups",
    "group_rng",
    "percentile_interval",
    "resampled_tensors",
]



def group_rng(seed: int, *labels: str) -> np.random.Generator:
    """A generator keyed by ``seed`` and string labels (e.g. mechanism, game), stable across runs."""
    entropy = [int(seed)] + [zlib.crc32(label.encode("utf-8")) for label in labels]
    return np.random.default_rng(np.random.SeedSequence(entropy))


@dataclass(frozen=True)
class CellReplicates:
    """Bootstrap replicates of one (mechanism, game).

    Attributes
    ----------
    agents:
        Agent types (sorted).
    mean:
        Shape (B, S): Mean per type, averaged over the drawn runs (points).
    fitness:
        Shape (B, S) or None (no metagame): RD fitness per type (points).
    population_fitness:
        Shape (B,) or None: population-weighted fitness over every type (the LLM-average Fitness
        when every type is an LLM agent).
    parts:
        Per tensor shape: (resample index of each drawn run, its final populations, its fitness),
        for :meth:`weighted_fitness` over a subset of the types.
    n_runs:
        Runs drawn per resample.
    """

    agents: tuple[str, ...]
    mean: np.ndarray
    fitness: np.ndarray | None
    population_fitness: np.ndarray | None
    parts: tuple[tuple[np.ndarray, np.ndarray, np.ndarray], ...] = ()
    n_runs: int = 1

    def weighted_fitness(self, members: Sequence[bool]) -> np.ndarray | None:
        """Shape (B,): per drawn run, Σ pop_m · fitness_m / Σ pop_m over the types flagged in
        ``members`` (in :attr:`agents` order), averaged over the runs; NaN in a run where those
        types died out. None without fitness replicates or with no type flagged."""
        mask = np.asarray(members, dtype=bool)
        if self.population_fitness is None or not mask.any():
            return None
        if mask.all():
            return self.population_fitness
        acc = np.zeros(len(self.population_fitness))
        for rows, pop, fit in self.parts:
            weight = pop[:, mask].sum(axis=1)
            with np.errstate(invalid="ignore", divide="ignore"):
                per_run = np.einsum("bi,bi->b", pop[:, mask], fit[:, mask]) / weight
            np.add.at(acc, rows, per_run)
        return acc / self.n_runs


def batched_replicator(
    tensors: np.ndarray, steps: int = REPLICATOR_STEPS, lr: float = REPLICATOR_LR, tol: float = 1e-6
) -> tuple[np.ndarray, np.ndarray]:
    """Discrete exponential-weights replicator (docs/protocol/evaluation.md#replicator-dynamics) on a batch of tensors.

    Parameters
    ----------
    tensors:
        Shape (B, S, …, S) with N ≥ 2 tensor axes after the batch axis (points).
    steps, lr, tol:
        As in :func:`coopeval.evaluation.replicator.replicator_dynamics` (uniform start,
        constant η); a batch member stops before an update once max_i |f_i − f̄| < tol.

    Returns
    -------
    (final populations (B, S), fitness at the final population (B, S)).
    """
    # batch-last layout: reductions over the short type axis run over contiguous rows
    t = np.ascontiguousarray(np.moveaxis(np.asarray(tensors, dtype=float), 0, -1))
    size, batch = t.shape[0], t.shape[-1]
    x = np.full((size, batch), 1.0 / size)
    active = np.ones(batch, dtype=bool)
    for _ in range(steps):
        f = _batched_fitness(t, x)
        advantage = f - (x * f).sum(axis=0)
        active &= np.abs(advantage).max(axis=0) >= tol
        if not active.any():
            break
        updated = hedge_step(x, advantage, lr)  # log space: no overflow (issue 13 kind 8)
        x = updated if active.all() else np.where(active, updated, x)
    return x.T.copy(), _batched_fitness(t, x).T.copy()


def _batched_fitness(t: np.ndarray, x: np.ndarray) -> np.ndarray:
    """f_i = Σ_o T[i, o_1, …] x_o1 ⋯ for batch-last T (S, …, S, B) and x (S, B) → (S, B)."""
    f = t
    while f.ndim > 2:
        f = (f * x).sum(axis=-2)
    return f


BOOTSTRAP_MAX_CELLS = 2**22
"""Largest match-ups × S^N tensor cells of one replicate whose per-match-up tensor contributions
the Fitness bootstrap holds (32 MiB each for sums and counts): the paper's 216 Public Goods
match-ups × 6^3 cells use 46 656. Above it (N-player Public Goods with many seats) only the
Mean gets an interval (docs/protocol/evaluation.md#n-player-metagames)."""


def _run_design(observations: Sequence[Observation], agents: Sequence[str]) -> dict[str, object]:
    """Per-matchup contribution matrices for Mean and tensor sums / counts (None for one seat
    or above :data:`BOOTSTRAP_MAX_CELLS`), and the strata."""
    position = {a: i for i, a in enumerate(agents)}
    size = len(agents)
    n_seats = len(observations[0][0])
    m = len(observations)
    mean_sum = np.zeros((m, size))
    mean_cnt = np.zeros((m, size))
    fits = n_seats >= 2 and m * size**n_seats <= BOOTSTRAP_MAX_CELLS
    tensor_sum = np.zeros((m,) + (size,) * n_seats) if fits else None
    tensor_cnt = np.zeros_like(tensor_sum) if tensor_sum is not None else None
    strata: dict[tuple[int, ...], list[int]] = {}
    for k, (seat_agents, seat_scores) in enumerate(observations):
        idx = tuple(position[a] for a in seat_agents)
        strata.setdefault(tuple(sorted(idx)), []).append(k)
        for seat, score in enumerate(seat_scores):
            mean_sum[k, idx[seat]] += score
            mean_cnt[k, idx[seat]] += 1
            if tensor_sum is not None and tensor_cnt is not None:
                others = idx[:seat] + idx[seat + 1 :]
                for perm in set(itertools.permutations(others)):
                    cell = (k, idx[seat], *perm)
                    tensor_sum[cell] += score
                    tensor_cnt[cell] += 1
    return {
        "mean_sum": mean_sum,
        "mean_cnt": mean_cnt,
        "tensor_sum": None if tensor_sum is None else tensor_sum.reshape(m, -1),
        "tensor_cnt": None if tensor_cnt is None else tensor_cnt.reshape(m, -1),
        "strata": list(strata.values()),
        "n_seats": n_seats,
        "m": m,
    }


def _weights(strata: Sequence[Sequence[int]], m: int, replicates: int, rng: np.random.Generator) -> np.ndarray:
    w = np.zeros((replicates, m))
    for members in strata:
        k = len(members)
        draws = rng.integers(0, k, size=(replicates, k))
        counts = (draws[:, :, None] == np.arange(k)[None, None, :]).sum(axis=1)
        w[:, list(members)] = counts
    return w


@dataclass
class _Pending:
    """Resampled Means and the tensors still waiting for the (batched) replicator."""

    agents: tuple[str, ...]
    n_runs: int
    mean: np.ndarray
    complete: bool
    tensors: list[tuple[np.ndarray, np.ndarray]]  # (replicate index per row, tensors (k, S, …, S))


def _resample(
    runs: Sequence[Sequence[Observation]], rng: np.random.Generator, n_resamples: int
) -> _Pending:
    if not runs or any(len(r) == 0 for r in runs):
        raise ValueError("bootstrap_group: every run needs at least one matchup")
    agents = tuple(sorted({a for run in runs for obs in run for a in obs[0]}))
    designs = [_run_design(run, agents) for run in runs]
    if len({d["n_seats"] for d in designs}) != 1:
        raise ValueError("bootstrap_group: runs have different seat counts")
    n_runs = len(runs)
    size = len(agents)
    run_choice = rng.integers(0, n_runs, size=(n_resamples, n_runs))
    mean_acc = np.zeros((n_resamples, size))
    metagame = int(designs[0]["n_seats"]) >= 2  # type: ignore[call-overload]
    complete = metagame and all(
        d["tensor_cnt"] is not None and (np.asarray(d["tensor_cnt"]).sum(axis=0) > 0).all() for d in designs
    )
    tensors: list[tuple[np.ndarray, np.ndarray]] = []
    for r, d in enumerate(designs):
        chosen = np.argwhere(run_choice == r)  # (replicate, copy) pairs drawing this run
        if len(chosen) == 0:
            continue
        # each drawn (replicate, copy) pair gets its own matchup resample
        w = _weights(d["strata"], int(d["m"]), len(chosen), rng)  # type: ignore[arg-type, call-overload]
        with np.errstate(invalid="ignore", divide="ignore"):
            mean = (w @ d["mean_sum"]) / (w @ d["mean_cnt"])  # type: ignore[operator]
        np.add.at(mean_acc, chosen[:, 0], mean)
        if complete:
            sums = w @ d["tensor_sum"]  # type: ignore[operator]
            cnts = w @ d["tensor_cnt"]  # type: ignore[operator]
            shape = (len(w),) + (size,) * int(d["n_seats"])  # type: ignore[call-overload]
            tensors.append((chosen[:, 0], (sums / cnts).reshape(shape)))
    return _Pending(agents, n_runs, mean_acc / n_runs, complete, tensors)


def resampled_tensors(
    runs: Sequence[Sequence[Observation]], rng: np.random.Generator, n_resamples: int
) -> tuple[tuple[str, ...], int, list[tuple[np.ndarray, np.ndarray]] | None]:
    """The resampled metagame tensors of one (mechanism, game), before any replicator step.

    Same draws as :func:`bootstrap_group` with the same generator: for other statistics of the
    tensor (e.g. deviation ratings) on the resamples the Fitness intervals use.

    Returns
    -------
    (agents, n_runs, parts)
        ``parts`` lists (replicate index per tensor, shape (k,); tensors, shape (k, S, …, S),
        points): every drawn copy of a run is one tensor, so each replicate has ``n_runs`` of
        them. None for one-seat data, when a run's tensor has empty cells or when it is above
        :data:`BOOTSTRAP_MAX_CELLS`.

    Raises
    ------
    ValueError
        As :func:`bootstrap_group`.
    """
    pending = _resample(runs, rng, n_resamples)
    return pending.agents, pending.n_runs, (pending.tensors if pending.complete else None)


def bootstrap_groups(
    groups: Mapping[Hashable, tuple[Sequence[Sequence[Observation]], np.random.Generator]],
    n_resamples: int = DEFAULT_RESAMPLES,
    steps: int = REPLICATOR_STEPS,
    lr: float = REPLICATOR_LR,
) -> dict[Hashable, CellReplicates]:
    """Bootstrap several (mechanism, game) groups; the replicator runs once per tensor shape.

    Parameters
    ----------
    groups:
        Key → (one observation list per run, generator). Every group draws from its own
        generator, so results do not depend on which other groups are present.
    n_resamples, steps, lr:
        As in :func:`bootstrap_group`.

    Returns
    -------
    dict
        Key → :class:`CellReplicates`.

    Raises
    ------
    ValueError
        As :func:`bootstrap_group`.
    """
    pending = {key: _resample(runs, rng, n_resamples) for key, (runs, rng) in groups.items()}
    by_shape: dict[tuple[int, ...], list[tuple[Hashable, int]]] = {}
    for key, p in pending.items():
        for part, (_, t) in enumerate(p.tensors):
            by_shape.setdefault(t.shape[1:], []).append((key, part))
    fit_acc = {key: np.zeros((n_resamples, len(p.agents))) for key, p in pending.items()}
    pop_acc = {key: np.zeros(n_resamples) for key in pending}
    kept: dict[Hashable, list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = {key: [] for key in pending}
    for parts in by_shape.values():
        batch = np.concatenate([pending[key].tensors[part][1] for key, part in parts])
        pops, fits = batched_replicator(batch, steps=steps, lr=lr)
        offset = 0
        for key, part in parts:
            rows, t = pending[key].tensors[part]
            pop, fit = pops[offset : offset + len(t)], fits[offset : offset + len(t)]
            offset += len(t)
            np.add.at(fit_acc[key], rows, fit)
            np.add.at(pop_acc[key], rows, np.einsum("bi,bi->b", pop, fit))
            kept[key].append((np.asarray(rows), pop, fit))
    return {
        key: CellReplicates(
            agents=p.agents,
            mean=p.mean,
            fitness=fit_acc[key] / p.n_runs if p.complete else None,
            population_fitness=pop_acc[key] / p.n_runs if p.complete else None,
            parts=tuple(kept[key]),
            n_runs=p.n_runs,
        )
        for key, p in pending.items()
    }


def bootstrap_group(
    runs: Sequence[Sequence[Observation]],
    rng: np.random.Generator,
    n_resamples: int = DEFAULT_RESAMPLES,
    steps: int = REPLICATOR_STEPS,
    lr: float = REPLICATOR_LR,
) -> CellReplicates:
    """Bootstrap replicates of Mean and Fitness for one (mechanism, game) over runs and matchups.

    Parameters
    ----------
    runs:
        One list of observations ``(seat agents, seat scores)`` per run (replicate); one-seat
        observations give Mean only.
    rng:
        The generator (see :func:`group_rng`).
    n_resamples:
        Number B of bootstrap resamples.
    steps, lr:
        Replicator settings.

    Returns
    -------
    CellReplicates
        Fitness fields are None for one-seat data, when a run's tensor has empty cells or above
        :data:`BOOTSTRAP_MAX_CELLS`.

    Raises
    ------
    ValueError
        On no runs, an empty run, or runs with different seat counts.
    """
    return bootstrap_groups({0: (runs, rng)}, n_resamples, steps, lr)[0]


def percentile_interval(replicates: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    """The central percentile interval of bootstrap replicates (NaNs ignored)."""
    alpha = (1.0 - level) / 2.0
    low, high = np.nanpercentile(np.asarray(replicates, dtype=float), [100 * alpha, 100 * (1 - alpha)])
    return float(low), float(high)
