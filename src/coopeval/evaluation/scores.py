"""Per-seat match scores: the CoopEval δ-weighted average and the plain discounted total.

Source: CoopEval (Tewolde et al., arXiv 2604.15267), docs/protocol/tournament.md#delta-weighted-score. Both functions take one seat's
per-round payoffs (points, round 0 first) and return a scalar in the same units.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["discount_weights", "discounted_average", "discounted_total"]


def _check(payoffs: Sequence[float], delta: float) -> list[float]:
    values = [float(u) for u in payoffs]
    if not values:
        raise ValueError("payoffs: empty sequence; a match needs at least one round")
    if not all(math.isfinite(u) for u in values):
        raise ValueError("payoffs: contains NaN or infinity; pass finite per-round points")
    if not (math.isfinite(delta) and 0.0 <= delta <= 1.0):
        raise ValueError(f"delta: {delta!r} is outside [0, 1]; pass a discount factor in [0, 1]")
    return values


def discount_weights(n_rounds: int, delta: float) -> list[float]:
    """Return the CoopEval round weights for a match of ``n_rounds`` rounds.

    w_t = (1 − δ)·δ^t for t = 0..T−2 and w_{T−1} = δ^(T−1) (the last round carries the whole
    infinite tail), so the weights sum to 1. T = 1 gives ``[1.0]``; δ = 1 puts all weight on
    the last round. Source: arXiv 2604.15267, docs/protocol/tournament.md#delta-weighted-score.

    Raises
    ------
    ValueError
        If ``n_rounds < 1`` or ``delta`` is not in [0, 1].
    """
    if n_rounds < 1:
        raise ValueError(f"n_rounds: {n_rounds} < 1; a match needs at least one round")
    if not (math.isfinite(delta) and 0.0 <= delta <= 1.0):
        raise ValueError(f"delta: {delta!r} is outside [0, 1]; pass a discount factor in [0, 1]")
    weights = [(1.0 - delta) * delta**t for t in range(n_rounds - 1)]
    weights.append(delta ** (n_rounds - 1))
    return weights


def discounted_average(payoffs: Sequence[float], delta: float) -> float:
    """CoopEval δ-weighted average of one seat's per-round payoffs (the per-seat match score).

    score = Σ_{t=0}^{T−2} (1 − δ)·δ^t·u_t + δ^{T−1}·u_{T−1}

    Parameters
    ----------
    payoffs:
        Per-round points u_0..u_{T−1} of one seat, length T ≥ 1.
    delta:
        Discount factor δ in [0, 1] (0.8 for Repetition/Reputation, 1.0 for one-shot
        mechanisms in the released data).

    Returns
    -------
    float
        The weighted average, in points per round. T = 1 returns u_0; δ = 1 returns u_{T−1}.

    Raises
    ------
    ValueError
        On an empty or non-finite payoff sequence or δ outside [0, 1].

    Source: arXiv 2604.15267 (CoopEval), docs/protocol/tournament.md#delta-weighted-score.
    """
    values = _check(payoffs, delta)
    weights = discount_weights(len(values), delta)
    return float(sum(w * u for w, u in zip(weights, values, strict=True)))


def discounted_total(payoffs: Sequence[float], delta: float) -> float:
    """Plain discounted total Σ_{t=1..T} δ^(t−1)·u_t (no normalisation, no tail weight).

    Parameters
    ----------
    payoffs:
        Per-round points u_1..u_T of one seat, length T ≥ 1.
    delta:
        Discount factor δ in [0, 1].

    Returns
    -------
    float
        The discounted sum, in points.

    Raises
    ------
    ValueError
        On an empty or non-finite payoff sequence or δ outside [0, 1].

    Source: docs/protocol/tournament.md#delta-weighted-score (contrasted with the CoopEval average); oracle convention
    ``delta_weighted_total`` in ``oracles/dev_vectors.json``.
    """
    values = _check(payoffs, delta)
    return float(sum(delta**t * u for t, u in enumerate(values)))
