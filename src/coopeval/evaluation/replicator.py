"""Discrete exponential-weights (Hedge) replicator dynamics on a symmetric metagame.

Pure numpy functions. Source: CoopEval (Tewolde et al., arXiv 2604.15267), docs/protocol/evaluation.md#replicator-dynamics:

    f_i(x) = Σ_{o_1..o_{N−1}} T[i, o_1, …, o_{N−1}] · x_{o_1} ⋯ x_{o_{N−1}}
    f̄ = x · f
    x_i ← x_i · exp(η_s (f_i − f̄)) / Σ_j x_j · exp(η_s (f_j − f̄))

with η_s = η (constant) or η/√s (``"sqrt"``), stopping *before* an update when
max_i |f_i − f̄| < tol (extinct types included).

The update is computed in log space, x_i ∝ exp(log x_i + η_s (f_i − f̄) − logsumexp(...)),
which is the same map without overflow: no finite tensor or learning rate gives NaN. When
η_s (f_i − f̄) is too large for a float, the step is its limit: the population moves to the
best surviving types in equal shares. A start with a zero share is allowed but warned about
(:class:`ExtinctStartWarning`): that type stays at 0 for ever.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np

from coopeval.evaluation.tensor import check_payoff_span

__all__ = ["ExtinctStartWarning", "ReplicatorResult", "fitness", "hedge_step", "replicator_dynamics"]

LrMethod = Literal["constant", "sqrt"]


@dataclass(frozen=True)
class ReplicatorResult:
    """Outcome of :func:`replicator_dynamics`.

    Attributes
    ----------
    history:
        Populations, shape (n_updates + 1, S): the start plus one row per applied update.
    final_population:
        Population after the last applied update, shape (S,).
    fitness:
        f(final_population), shape (S,) (points).
    population_weighted_fitness:
        Σ_i x_i f_i at the final population (the LLM-average "Fitness").
    n_updates:
        Number of updates applied.
    stopped_early:
        True if the convergence test fired before ``steps`` updates.
    """

    history: np.ndarray
    final_population: np.ndarray
    fitness: np.ndarray
    population_weighted_fitness: float
    n_updates: int
    stopped_early: bool


class ExtinctStartWarning(UserWarning):
    """A replicator start gives some type share 0: the map keeps it at 0 in every step."""


def _plain(value: object) -> object:
    """A numpy scalar as the plain Python number (for error messages: ``0.5``, not
    ``np.float64(0.5)``); anything else unchanged."""
    return value.item() if isinstance(value, np.generic) else value


def _check_tensor(tensor: np.ndarray) -> np.ndarray:
    t = np.asarray(tensor, dtype=float)
    if t.ndim < 2 or len(set(t.shape)) != 1 or t.shape[0] == 0:
        raise ValueError(
            f"tensor: shape {t.shape} is not (S,)*N with N >= 2 and S >= 1;"
            " pass a square matrix or cubic tensor"
        )
    if not np.isfinite(t).all():
        raise ValueError("tensor: contains NaN or infinite cells; every cell needs a payoff")
    check_payoff_span(t)
    return t


def _check_population(x: np.ndarray, size: int, name: str = "x") -> np.ndarray:
    p = np.asarray(x, dtype=float)
    if p.shape != (size,):
        raise ValueError(f"{name}: shape {p.shape}, expected ({size},) (one share per agent)")
    if not np.isfinite(p).all() or (p < 0).any():
        raise ValueError(f"{name}: shares must be finite and non-negative")
    if abs(p.sum() - 1.0) > 1e-9:
        raise ValueError(f"{name}: shares sum to {_plain(p.sum())!r}, not 1; normalise the population")
    return p


def fitness(tensor: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Expected payoff of each type when its N−1 co-players are drawn i.i.d. from ``x``.

    f_i(x) = Σ_{o} T[i, o_1, …, o_{N−1}] Π_k x_{o_k}; for N = 2 this is T @ x.
    Source: arXiv 2604.15267, docs/protocol/evaluation.md#replicator-dynamics step 2.1.

    Parameters
    ----------
    tensor:
        Metagame tensor, shape (S,)*N, N ≥ 2 (points).
    x:
        Population shares, shape (S,), non-negative, summing to 1.

    Returns
    -------
    numpy.ndarray
        Fitness vector, shape (S,), in points.

    Raises
    ------
    ValueError
        On a non-cubic or non-finite tensor, or an invalid population.
    """
    t = _check_tensor(tensor)
    p = _check_population(x, t.shape[0])
    return _fitness(t, p)


def _fitness(t: np.ndarray, p: np.ndarray) -> np.ndarray:
    f = t
    for _ in range(t.ndim - 1):
        f = f @ p
    return np.asarray(f, dtype=float)


def hedge_step(x: np.ndarray, advantage: np.ndarray, eta: float) -> np.ndarray:
    """One update x_i exp(η a_i) / Σ_j x_j exp(η a_j), computed as a softmax of log x + η a.

    Parameters
    ----------
    x:
        Shares, shape (S,) or (S, B) (a batch of B populations, types on axis 0).
    advantage:
        f − f̄, same shape as ``x`` (points).
    eta:
        Learning rate of this step (finite, ≥ 0).

    Returns
    -------
    numpy.ndarray
        The updated shares, same shape, each population summing to 1. Shares that are 0 stay 0.
        Where some η a_i is beyond the float range (+inf) the result is the limit of the map:
        equal shares on the surviving types with the largest advantage. Never NaN.

    Raises
    ------
    ValueError
        If the advantage itself is NaN (payoff sums overflowed).
    """
    alive = x > 0
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        gain = np.where(advantage == 0, 0.0, eta * advantage) if eta else np.zeros_like(x)
        z = np.where(alive, np.log(np.where(alive, x, 1.0)) + gain, -np.inf)
    if np.isnan(z).any():
        raise ValueError("tensor: payoffs too large for float arithmetic; rescale the payoffs")
    top = z.max(axis=0)
    limit = top == np.inf
    with np.errstate(invalid="ignore"):
        weights = np.where(limit, (z == np.inf).astype(float), np.exp(z - np.where(limit, 0.0, top)))
    shares: np.ndarray = weights / weights.sum(axis=0)
    return shares


def replicator_dynamics(
    tensor: np.ndarray,
    initial: np.ndarray | None = None,
    steps: int = 1000,
    lr: float = 0.1,
    lr_method: LrMethod = "constant",
    tol: float = 1e-6,
) -> ReplicatorResult:
    """Run the discrete exponential-weights replicator of CoopEval.

    For s = 1..steps: compute f = f(x) and f̄ = x·f; stop *before* updating when
    max_i |f_i − f̄| < tol; else x_i ← x_i exp(η_s (f_i − f̄)) / Z with η_s = ``lr``
    (``"constant"``) or ``lr``/√s (``"sqrt"``). Source: arXiv 2604.15267, docs/protocol/evaluation.md#replicator-dynamics (main
    study: uniform start, 1000 steps, η = 0.1, constant).

    Parameters
    ----------
    tensor:
        Metagame tensor, shape (S,)*N, N ≥ 2.
    initial:
        Starting shares, shape (S,); default uniform 1/S.
    steps:
        Maximum number of updates (≥ 0).
    lr:
        Learning rate η (finite, ≥ 0).
    lr_method:
        ``"constant"`` or ``"sqrt"``.
    tol:
        Early-stop threshold on max_i |f_i − f̄| (≥ 0).

    Returns
    -------
    ReplicatorResult
        History (n_updates + 1, S), final population, fitness there, Σ x_i f_i, the number of
        updates and whether it stopped early. Extinct types keep share 0 (underflow). Never
        NaN: the update is computed in log space.

    Warns
    -----
    ExtinctStartWarning
        When ``initial`` gives some type share 0 (that type can never grow).

    Raises
    ------
    ValueError
        On an invalid tensor, population, step count, learning rate, method or tolerance, or
        payoffs so close to the float limit (~1e308) that their differences overflow.
    """
    t = _check_tensor(tensor)
    size = t.shape[0]
    x = (
        np.full(size, 1.0 / size)
        if initial is None
        else _check_population(initial, size, "initial")
    )
    if isinstance(steps, bool) or int(steps) != steps or steps < 0:
        raise ValueError(f"steps: {_plain(steps)!r} must be a non-negative integer")
    if not (math.isfinite(lr) and lr >= 0):
        raise ValueError(f"lr: {_plain(lr)!r} must be finite and non-negative")
    if lr_method not in ("constant", "sqrt"):
        raise ValueError(f"lr_method: {lr_method!r}; use 'constant' or 'sqrt'")
    if not (math.isfinite(tol) and tol >= 0):
        raise ValueError(f"tol: {_plain(tol)!r} must be finite and non-negative")

    extinct = np.flatnonzero(x == 0)
    if len(extinct):
        warnings.warn(
            f"initial: agent indices {extinct.tolist()} start with share 0 and stay at 0 in every"
            " step (the update multiplies shares); give them a small positive share to let them"
            " compete",
            ExtinctStartWarning,
            stacklevel=2,
        )

    history = [x.copy()]
    stopped_early = False
    for step in range(1, int(steps) + 1):
        f = _fitness(t, x)
        with np.errstate(over="ignore", invalid="ignore"):
            advantage = f - float(x @ f)
        if float(np.max(np.abs(advantage))) < tol:
            stopped_early = True
            break
        eta = lr if lr_method == "constant" else lr / math.sqrt(step)
        x = hedge_step(x, advantage, eta)
        history.append(x.copy())
    final_fitness = _fitness(t, x)
    return ReplicatorResult(
        history=np.array(history),
        final_population=x,
        fitness=final_fitness,
        population_weighted_fitness=float(x @ final_fitness),
        n_updates=len(history) - 1,
        stopped_early=stopped_early,
    )
