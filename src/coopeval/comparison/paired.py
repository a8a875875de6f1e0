"""Paired difference of two agents from per-cluster contributions (arXiv 2411.00640 §§2–4).

A study writes the difference of two agents' headline metric as a sum over independent
clusters, Δ = Σ_k (a_k − b_k): a_k is agent A's contribution from cluster k (its scores in that
cluster times the fixed weight the metric gives them), b_k the same for B on the *same* cluster
(same co-player profile and replicate, or same seed). Then

* the point estimate is exactly the metric's difference (the weights are the metric's own);
* the clustered standard error is SE = √K · s_d, s_d the sample standard deviation (ddof 1) of
  d_k = a_k − b_k over the K clusters (the cluster-robust variance of a sum of independent
  cluster totals; Miller 2024, arXiv 2411.00640 §3, eq. for clustered standard errors);
* the interval is a paired cluster bootstrap: the K pairs (a_k, b_k) are resampled with
  replacement and Σ (a*_k − b*_k) recomputed (:func:`scipy.stats.bootstrap`, ``paired=True``,
  BCa; percentile when BCa is undefined); when every d_k is equal up to float noise (spread at
  most :data:`CONSTANT_TOLERANCE` times the largest |d_k|, at least 1) the interval is the point,
  with a note naming the tolerance;
* the p-value is the sign-flip permutation test of H0 "A and B are exchangeable within each
  cluster": each pair is swapped or not (:func:`scipy.stats.permutation_test` with
  ``permutation_type='samples'``; exact enumeration when 2^K does not exceed the resamples);
  with B random sign patterns it counts the observed one, so it is never below 1/(B + 1)
  (Phipson & Smyth 2010, "Permutation p-values should never be zero", Stat. Appl. Genet. Mol.
  Biol. 9(1); :func:`resampling_p_value` for bootstrap replicates);
* the minimum detectable difference at 80 % power is (z_{0.975} + z_{0.8}) · SE
  (:mod:`coopeval.comparison.power`), reported only where a difference can be significant: not
  when SE is 0 (constant differences) nor when K clusters are so few that the exact sign-flip
  test's smallest p-value, 2 / 2^K (the observed sign pattern and its mirror), exceeds α
  (K ≤ 5 at α = 0.05); the note says which.

Weights are held at their observed values in the resamples: every replicate plays the same
schedule, so how many seats an agent has is fixed by the design, not random.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import bootstrap, permutation_test

from coopeval.comparison.power import DEFAULT_ALPHA, DEFAULT_POWER, minimum_detectable_difference

__all__ = ["DEFAULT_RESAMPLES", "DEFAULT_SEED", "PairedEstimate", "no_shared_data", "paired_cluster_test", "replicate_test",
           "resampling_p_value"]

DEFAULT_RESAMPLES = 9999
"""Bootstrap and permutation resamples of each comparison."""
DEFAULT_SEED = 0
CONFIDENCE_LEVEL = 0.95
CONSTANT_TOLERANCE = 1e-9
"""Cluster differences whose spread is at most this times max(1, largest |d_k|) are taken as
equal (float noise of sums of the same scores), so the interval is the point."""


@dataclass(frozen=True)
class PairedEstimate:
    """One paired comparison before multiplicity correction.

    Attributes
    ----------
    delta:
        Point estimate of metric(A) − metric(B) (metric units), or None when the two share no
        data (``note`` says why).
    ci_low, ci_high:
        95 % interval, or None (``note`` says why).
    p_value:
        Two-sided p-value of "no difference", or None (``note`` says why).
    se:
        Standard error of ``delta``, or None.
    mde:
        Minimum detectable difference at 80 % power, or None (fewer than 2 clusters, standard
        error 0, or clusters too few for any p-value to fall below alpha; ``note`` says which).
    n_pairs:
        Paired observations (e.g. co-player profile entries × replicates) behind ``delta``.
    n_clusters:
        Independent clusters resampled.
    method:
        How the interval and the p-value were computed.
    note:
        Why a field is None (or how the interval fell back), else None.
    """

    delta: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    se: float | None
    mde: float | None
    n_pairs: int
    n_clusters: int
    method: str
    note: str | None = None


def no_shared_data(reason: str, method: str = "no comparison") -> PairedEstimate:
    """The estimate of a pair with nothing to compare: every number None, ``note`` = ``reason``
    (e.g. the two agents never sit in the same cell of the selection)."""
    return PairedEstimate(None, None, None, None, None, None, 0, 0, method, reason)


def resampling_p_value(n_extreme_low: int, n_extreme_high: int, n_resamples: int) -> float:
    """Two-sided p-value from resample counts, never below 1/(B + 1).

    p = min(1, 2 · min(1 + n_low, 1 + n_high) / (B + 1)): the observed data counts as one of
    the B + 1 equally likely resamples (Phipson & Smyth 2010, "Permutation p-values should
    never be zero", Stat. Appl. Genet. Mol. Biol. 9(1): p = (b + 1)/(m + 1) for b of m random
    resamples at least as extreme; doubled for two sides).

    Parameters
    ----------
    n_extreme_low, n_extreme_high:
        Resamples at or below / at or above the null value (e.g. bootstrap differences ≤ 0
        and ≥ 0).
    n_resamples:
        B, the number of resamples (≥ 1).

    Raises
    ------
    ValueError
        If B < 1 or a count is negative or exceeds B.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples: {n_resamples} must be at least 1")
    for name, count in (("n_extreme_low", n_extreme_low), ("n_extreme_high", n_extreme_high)):
        if not 0 <= count <= n_resamples:
            raise ValueError(f"{name}: {count} is not between 0 and n_resamples = {n_resamples}")
    return min(1.0, 2.0 * (1 + min(n_extreme_low, n_extreme_high)) / (n_resamples + 1))


def _sum_difference(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.asarray(np.sum(x - y, axis=axis))


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def paired_cluster_test(
    a: Sequence[float] | np.ndarray,
    b: Sequence[float] | np.ndarray,
    *,
    n_pairs: int | None = None,
    clusters: str = "clusters",
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> PairedEstimate:
    """Paired cluster bootstrap interval and sign-flip permutation p-value of Σ_k (a_k − b_k).

    Parameters
    ----------
    a, b:
        Per-cluster contributions of agent A and agent B, shape (K,), same cluster order
        (metric units; Δ = Σ (a − b)).
    n_pairs:
        Paired observations behind the clusters (reported only; default K).
    clusters:
        What a cluster is, for the ``method`` text (e.g. "(co-player profile, replicate)").
    n_resamples, seed:
        Bootstrap / permutation resamples and the seed of both.
    alpha, power:
        Level of the test and power of the minimum detectable difference.

    Returns
    -------
    PairedEstimate
        With K < 2 the interval, p-value, SE and MDE are None and ``note`` says why.

    Raises
    ------
    ValueError
        If ``a`` and ``b`` differ in shape, are not 1-D, are empty or hold non-finite values.
    """
    x = np.asarray(a, dtype=float)
    y = np.asarray(b, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"a, b: shapes {x.shape} and {y.shape}; pass two 1-D arrays of equal length (one entry per cluster)")
    if len(x) == 0:
        raise ValueError("a, b: no cluster; a comparison needs at least one cluster both agents play in")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("a, b: non-finite contribution; pass finite per-cluster values")
    d = x - y
    k = len(d)
    delta = math.fsum(d.tolist())
    pairs = k if n_pairs is None else int(n_pairs)
    base = f"paired cluster bootstrap over {k} {clusters}"
    if k < 2:
        return PairedEstimate(delta, None, None, None, None, None, pairs, k, base,
                              f"fewer than 2 clusters ({k}): no interval, p-value or power")
    rng = np.random.default_rng(seed)
    notes: list[str] = []
    constant = float(np.ptp(d)) <= CONSTANT_TOLERANCE * max(1.0, float(np.max(np.abs(d))))
    se = 0.0 if constant else math.sqrt(k) * float(np.std(d, ddof=1))
    if constant:
        low = high = delta
        interval = f"every cluster difference equal (within {CONSTANT_TOLERANCE:g} relative): the interval is the point"
        notes.append(interval)
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = bootstrap((x, y), _sum_difference, paired=True, vectorized=True, n_resamples=n_resamples,
                               confidence_level=CONFIDENCE_LEVEL, method="BCa", rng=rng)
        low, high = float(result.confidence_interval.low), float(result.confidence_interval.high)
        interval = f"BCa, {n_resamples} resamples"
        if not (math.isfinite(low) and math.isfinite(high)):
            tail = 100.0 * (1.0 - CONFIDENCE_LEVEL) / 2.0
            low, high = (float(v) for v in np.percentile(result.bootstrap_distribution, [tail, 100.0 - tail]))
            interval = f"percentile, {n_resamples} resamples"
            notes.append("BCa interval undefined (degenerate jackknife); percentile interval")
    exact = 2**k <= n_resamples
    perm = permutation_test((x, y), _sum_difference, permutation_type="samples", vectorized=True,
                            n_resamples=n_resamples, alternative="two-sided", rng=rng)
    # random sign patterns: scipy counts the observed one ((count + 1) / (B + 1)); the floor
    # keeps that guarantee explicit (exact enumeration includes the observed pattern anyway)
    p_value = min(1.0, max(float(perm.pvalue), 1.0 / (2**k if exact else n_resamples + 1)))
    method = (
        f"{base} ({interval}); sign-flip permutation test"
        f" ({'exact, ' + str(2**k) + ' sign patterns' if exact else str(n_resamples) + ' random sign patterns'})"
    )
    # the interval always contains the point estimate (BCa can exclude it by rounding when all
    # but one cluster agree); widen to it
    low, high = min(low, delta), max(high, delta)
    smallest_p = 2.0 / 2**k if exact else 1.0 / (n_resamples + 1)
    mde = None
    if se == 0.0:
        notes.append("standard error 0: no minimum detectable difference")
    elif smallest_p > alpha:
        notes.append(f"with {k} clusters the smallest possible p-value is {smallest_p:g} > alpha = {alpha:g}: "
                     "no difference can be significant, so no minimum detectable difference")
    else:
        mde = minimum_detectable_difference(se, alpha, power)
    return PairedEstimate(delta, _finite(low), _finite(high), p_value, se, mde, pairs, k, method, "; ".join(notes) or None)


def replicate_test(
    delta: float,
    differences: Sequence[float] | np.ndarray,
    *,
    n_pairs: int,
    n_clusters: int,
    method: str,
    alpha: float = DEFAULT_ALPHA,
    power: float = DEFAULT_POWER,
) -> PairedEstimate:
    """Interval, p-value and MDE of a difference from paired bootstrap replicates of it.

    For statistics that are not sums over clusters (replicator Fitness): ``differences`` are
    metric(A) − metric(B) in each bootstrap resample, both computed on the same resample. The
    interval is the 2.5 / 97.5 % percentile; the p-value inverts it (the smallest level whose
    percentile interval excludes 0, about 2·min(P*(d ≤ 0), P*(d ≥ 0)); Efron & Tibshirani 1993,
    §15.4) with the observed data counted as one resample, so it is never below 1/(B + 1)
    (:func:`resampling_p_value`); SE is the standard deviation of the replicates.

    Raises
    ------
    ValueError
        If ``differences`` holds no finite value.
    """
    reps = np.asarray(differences, dtype=float)
    reps = reps[np.isfinite(reps)]
    if n_clusters < 2:
        return PairedEstimate(float(delta), None, None, None, None, None, n_pairs, n_clusters, method,
                              f"fewer than 2 clusters ({n_clusters}): no interval, p-value or power")
    if len(reps) == 0:
        raise ValueError("differences: no finite bootstrap replicate")
    low, high = (float(v) for v in np.percentile(reps, [2.5, 97.5]))
    p_value = resampling_p_value(int(np.sum(reps <= 0.0)), int(np.sum(reps >= 0.0)), len(reps))
    se = float(np.std(reps, ddof=1)) if len(reps) > 1 else None
    note = "standard error 0: no minimum detectable difference" if se == 0.0 else None
    mde = None if se == 0.0 else minimum_detectable_difference(se, alpha, power)
    return PairedEstimate(float(delta), min(low, delta), max(high, delta), p_value, se, mde, n_pairs, n_clusters, method, note)
