"""Deviation ratings of a symmetric metagame (Marris et al. 2025, arXiv 2502.11645).

Source: CoopEval (Tewolde et al., arXiv 2604.15267), docs/protocol/evaluation.md#deviation-ratings.

Objects (N seats, S types, tensor T of shape (S,)*N):

* full game G_p(a) = T[a_p, a_{−p} in seat order] for seat p and joint profile a ∈ S^N;
* deviation matrix M with N·S rows (p, s) and S^N columns a:
  M[(p, s), a] = G_p(s, a_{−p}) − G_p(a); σ is a CCE iff Mσ ≤ 0.

Rules:

* ``"strictest"`` (default): strictest CCE with the exact freezing rule. Repeatedly solve
  min ε s.t. (Mσ)_i ≤ ε (i unfrozen), (Mσ)_i = r_i (i frozen), σ in the simplex, and freeze
  the rows binding on the *whole* optimal face. The rating of type s is r_(0,s). Unique,
  solver-independent. A row tight at the returned vertex is binding on the face if its dual
  value exceeds :data:`BINDING_DUAL` (complementary slackness), else if the face test passes
  (one extra LP: min (Mσ)_i over the face ≥ ε* − tol). Shortcuts that give the same frozen set:
  for a bit-for-bit seat-symmetric tensor the face is seat-symmetric, so the N rows of a type
  are tested once (on seat 0) and only if all are tight; a row slack at the point returned by
  an earlier face LP is not binding and is not tested. On a 4-type 2-seat metagame this takes
  ~3 LPs per call instead of ~11 (benchmarks/comparisons_dr.py; docs/comparisons.md).
* ``"reference-vertex"`` (alias ``"coopeval_vertex"``): the reference's rule — impose the
  seat-symmetry equalities (Mσ)_(p,s) = (Mσ)_(0,s) and freeze every row within
  1e−14·(max G − min G) of ε* at the vertex the solver returned. Solver-dependent by
  construction; for compatibility only.

All LPs use ``scipy.optimize.linprog(method="highs")``.

Scale: the LPs are solved on M / 2^k with 2^k the power of two just above max|M| (an exact
division, so T and 2^j·T give bit-identical ratings up to the factor), and every tolerance is
relative to max|M|. Ratings are rounded to 10 significant digits of the payoff scale
(:attr:`DeviationResult.rating_decimals`), which is 1e−10 for max|M| in [1, 10) as in docs/protocol/evaluation.md#deviation-ratings.
So a tensor times any positive factor (1e−12 or 1e12) gives the same ranking as the original.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.optimize import OptimizeResult, linprog

from coopeval.evaluation.dr_rules import DR_RULE_ALIASES
from coopeval.evaluation.rating_ranks import RATING_DECIMALS, rank_with_ties, rating_decimals
from coopeval.evaluation.tensor import check_payoff_span

__all__ = [
    "DR_MAX_PROFILES",
    "DeviationRatingError",
    "DeviationResult",
    "canonical_rule",
    "deviation_matrix",
    "deviation_ratings",
    "dr_size_problem",
    "rank_with_ties",
    "rating_decimals",
]

BINDING_DUAL = 1e-6

DR_MAX_PROFILES = 4096
"""Largest metagame (S^N joint profiles, the LP's columns) whose deviation ratings are computed:
4 agents × 6 seats or 8 × 4. At that size one solve took 0.29 s (4 agents × 6 seats, shared 2-core
machine at load average ~5; docs/measurements.md), so a DR comparison's 1000 resamples stay in
minutes; one more seat multiplies the LP's columns by S."""


def dr_size_problem(n_types: int, n_players: int) -> str | None:
    """Why the deviation ratings of an S-type, N-seat metagame are not computed, or None when
    its LP fits (S^N ≤ :data:`DR_MAX_PROFILES`). The message names the size, the limit and the
    fix (docs/protocol/evaluation.md#n-player-metagames)."""
    profiles = n_types**n_players
    if profiles <= DR_MAX_PROFILES:
        return None
    return (
        f"deviation ratings not computed: the LP over {n_types}^{n_players} = {profiles} joint profiles exceeds"
        f" {DR_MAX_PROFILES} (docs/protocol/evaluation.md#n-player-metagames); Mean and Fitness are reported;"
        " play fewer agents or seats for DR"
    )
"""A row whose dual value in the main LP exceeds this (duals of the ε rows sum to 1) is binding on
the whole optimal face by complementary slackness and is frozen without its face LP."""

RELATIVE_TOL = 1e-9
"""Tightness, face-test and dual tolerance as a fraction of max|M| (docs/protocol/evaluation.md#deviation-ratings: 1e−9·max|M|)."""

_Bounds = np.ndarray | list[tuple[float | None, float | None]]
"""Variable bounds as linprog takes them: an (n, 2) array (±inf for none) or (low, high) pairs."""


class DeviationRatingError(RuntimeError):
    """An LP failed (infeasible/unbounded/solver error), an iteration froze nothing, or the
    ratings differ across seats."""


@dataclass(frozen=True)
class DeviationResult:
    """Outcome of :func:`deviation_ratings`.

    Attributes
    ----------
    ratings:
        One rating per agent index (≤ 0, higher is better), rounded to 1e−10.
    iteration_epsilons:
        ε* of each main LP, in order (unrounded).
    n_main_lps:
        Number of main LP iterations (= number of distinct ratings under ``"strictest"``).
    n_face_lps:
        Number of extra face-test LPs (0 for other rules).
    rule:
        Canonical rule name: ``"strictest"`` or ``"reference-vertex"``.
    rating_decimals:
        Decimal places the ratings were rounded to (10 for max|M| in [1, 10); more for smaller
        payoffs, fewer for larger); pass it to :func:`rank_with_ties`.
    """

    ratings: tuple[float, ...]
    iteration_epsilons: tuple[float, ...]
    n_main_lps: int
    n_face_lps: int
    rule: str
    rating_decimals: int = RATING_DECIMALS


def canonical_rule(rule: str) -> str:
    """Map a DR rule name or alias to ``"strictest"`` or ``"reference-vertex"``.

    Raises
    ------
    ValueError
        On an unknown rule name.
    """
    try:
        return DR_RULE_ALIASES[rule]
    except KeyError:
        raise ValueError(
            f"dr_rule: unknown rule {rule!r}; use one of {sorted(DR_RULE_ALIASES)}"
        ) from None


def _check_tensor(tensor: np.ndarray) -> np.ndarray:
    t = np.asarray(tensor, dtype=float)
    if t.ndim < 2 or len(set(t.shape)) != 1 or t.shape[0] == 0:
        raise ValueError(
            f"tensor: shape {t.shape} is not (S,)*N with N >= 2; pass a square/cubic tensor"
        )
    if not np.isfinite(t).all():
        bad = tuple(int(i) for i in np.argwhere(~np.isfinite(t))[0])
        raise ValueError(f"tensor: cell {list(bad)} is NaN or infinite; every cell needs a payoff")
    check_payoff_span(t)
    return t


def deviation_matrix(tensor: np.ndarray) -> np.ndarray:
    """Return the CCE deviation-gain matrix M of the full game built from ``tensor``.

    Row p·S + s is "seat p deviates to type s"; column k is the joint profile
    ``np.unravel_index(k, (S,)*N)`` (C order). M[(p, s), a] = G_p(s, a_{−p}) − G_p(a) with
    G_p(a) = T[a_p, a_{−p}]. Source: docs/protocol/evaluation.md#deviation-ratings ("Objects").

    Returns
    -------
    numpy.ndarray
        Shape (N·S, S^N), points.

    Raises
    ------
    ValueError
        On a non-cubic tensor or a NaN/infinite cell.
    """
    t = _check_tensor(tensor)
    n_players, size = t.ndim, t.shape[0]
    rows = []
    for p in range(n_players):
        game_p = np.moveaxis(t, 0, p)  # game_p[a] = T[a_p, a_{-p}] = G_p(a)
        for s in range(size):
            deviated = np.broadcast_to(np.take(game_p, [s], axis=p), game_p.shape)
            rows.append((deviated - game_p).ravel())
    return np.array(rows)


def _solve(
    c: np.ndarray,
    a_ub: np.ndarray | None,
    b_ub: np.ndarray | None,
    a_eq: np.ndarray,
    b_eq: np.ndarray,
    bounds: _Bounds,
    what: str,
) -> OptimizeResult:
    res = linprog(
        c,
        A_ub=a_ub if a_ub is not None and len(a_ub) else None,
        b_ub=b_ub if b_ub is not None and len(b_ub) else None,
        A_eq=a_eq,
        b_eq=b_eq,
        bounds=bounds,
        method="highs",
    )
    if res.status == 2:
        raise DeviationRatingError(f"{what}: LP infeasible ({res.message})")
    if res.status == 3:
        raise DeviationRatingError(f"{what}: LP unbounded ({res.message})")
    if res.status != 0 or res.x is None:
        raise DeviationRatingError(f"{what}: LP solver failed (status {res.status}: {res.message})")
    return res


def deviation_ratings(
    tensor: np.ndarray,
    rule: str = "strictest",
    *,
    freeze_test: Literal["face", "dual"] = "face",
) -> DeviationResult:
    """Deviation ratings of every agent type of a symmetric metagame.

    Iterative strictest-CCE LP of Marris et al. (2025, arXiv 2502.11645) as specified for
    CoopEval in docs/protocol/evaluation.md#deviation-ratings (arXiv 2604.15267). Scale-free: the LPs run on M divided by a power
    of two just above max|M|; tolerance 1e−9·max|M| for the tightness screen and the face
    test; ratings rounded to 10 significant digits of max|M| (1e−10 for max|M| in [1, 10)).

    Parameters
    ----------
    tensor:
        Metagame tensor, shape (S,)*N with N ≥ 2 (points), symmetric in the co-player axes.
    rule:
        ``"strictest"`` (default), or ``"reference-vertex"`` / ``"coopeval_vertex"``.
    freeze_test:
        For ``"strictest"``: ``"face"`` (one LP per row tight at the vertex; default) or
        ``"dual"`` (freeze rows with dual value > tol, a cross-check; docs/protocol/evaluation.md#deviation-ratings step 2).

    Returns
    -------
    DeviationResult
        ``ratings`` (length S, ≤ 0, higher is better), the ε* sequence, LP counts and the
        canonical rule name.

    Raises
    ------
    ValueError
        On an unknown rule, a non-cubic tensor or a NaN/infinite cell.
    DeviationRatingError
        On an infeasible/unbounded/failed LP, an iteration that freezes nothing, or ratings
        that differ across seats by more than the tolerance.
    """
    canonical = canonical_rule(rule)
    if freeze_test not in ("face", "dual"):
        raise ValueError(f"freeze_test: {freeze_test!r}; use 'face' or 'dual'")
    t = _check_tensor(tensor)
    n_players, size = t.ndim, t.shape[0]
    raw = deviation_matrix(t)
    scale = float(np.abs(raw).max())
    unit = math.ldexp(1.0, math.frexp(scale)[1]) if scale > 0 else 1.0  # 2^k > max|M|
    m = raw / unit  # exact: a power-of-two division
    n_rows, n_profiles = m.shape
    tol = RELATIVE_TOL * scale / unit
    vertex_tol = 1e-14 * float(t.max() - t.min()) / unit
    symmetric = canonical == "reference-vertex"

    frozen = np.zeros(n_rows, dtype=bool)
    values = np.zeros(n_rows)
    epsilons: list[float] = []
    n_face = 0
    sigma_bounds = np.tile([0.0, np.inf], (n_profiles, 1))  # σ ≥ 0
    ones = np.ones((1, n_profiles))
    symmetric_seats = _exactly_seat_symmetric(t)

    while not frozen.all():
        free = np.flatnonzero(~frozen)
        fixed = np.flatnonzero(frozen)
        # Main LP over z = (σ, ε): min ε.
        a_ub = np.hstack([m[free], -np.ones((len(free), 1))])
        eq_rows = [np.hstack([m[fixed], np.zeros((len(fixed), 1))]), np.append(ones, 0.0)[None]]
        b_eq_parts = [values[fixed], np.array([1.0])]
        if symmetric and n_players > 1:
            sym = np.array(
                [m[p * size + s] - m[s] for p in range(1, n_players) for s in range(size)]
            )
            eq_rows.append(np.hstack([sym, np.zeros((len(sym), 1))]))
            b_eq_parts.append(np.zeros(len(sym)))
        c = np.zeros(n_profiles + 1)
        c[-1] = 1.0
        what = f"deviation ratings iteration {len(epsilons) + 1}"
        res = _solve(
            c,
            a_ub,
            np.zeros(len(free)),
            np.vstack(eq_rows),
            np.concatenate(b_eq_parts),
            np.vstack([sigma_bounds, [-np.inf, np.inf]]),  # ε free
            what,
        )
        sigma = np.asarray(res.x[:-1], dtype=float)
        eps = float(res.x[-1])
        epsilons.append(eps * unit)
        gains = m @ sigma

        if symmetric:
            newly = free[np.abs(gains[free] - eps) <= vertex_tol]
        elif freeze_test == "dual":
            duals = -np.asarray(res.ineqlin.marginals, dtype=float)
            newly = free[duals > tol]
        else:
            tight = gains >= eps - tol
            tight[fixed] = False
            groups = _face_test_groups(tight, n_players, size, symmetric_seats)
            duals = np.zeros(n_rows)
            duals[free] = -np.asarray(res.ineqlin.marginals, dtype=float)
            face_ub = m[free]
            face_eq = np.vstack([m[fixed], ones])
            face_b_eq = np.concatenate([values[fixed], [1.0]])
            keep = []
            ruled_out = np.zeros(len(groups), dtype=bool)
            for g, group in enumerate(groups):
                if ruled_out[g]:
                    continue
                if (duals[group] > BINDING_DUAL).any():
                    # A positive dual makes its row binding at every optimal σ (complementary
                    # slackness): the face test would pass, so it is not run.
                    keep.extend(group)
                    continue
                n_face += 1
                low, point = _face_minimum(
                    m[group[0]], face_ub, eps, face_eq, face_b_eq, sigma_bounds, tol, what
                )
                if low >= eps - tol:
                    keep.extend(group)
                if point is not None:
                    # A point of the face below ε* − tol on some row of a later group bounds that
                    # row's face minimum: the group cannot pass its face test.
                    below = (m @ point) < eps - tol
                    for h in range(g + 1, len(groups)):
                        ruled_out[h] |= bool(below[groups[h]].any())
            newly = np.array(sorted(keep), dtype=int)
        if len(newly) == 0:
            raise DeviationRatingError(
                f"{what}: no row frozen at epsilon* = {eps * unit!r} (numerical trouble; rule {canonical})"
            )
        frozen[newly] = True
        values[newly] = eps

    ratings_by_row = values.reshape(n_players, size)
    spread = np.abs(ratings_by_row - ratings_by_row[0]).max(axis=0)
    if (spread > max(tol, 1e-8 * scale / unit)).any():
        worst = int(np.argmax(spread))
        raise DeviationRatingError(
            f"ratings differ across seats for agent index {worst} (spread"
            f" {float(spread[worst]) * unit!r}); the tensor is not symmetric in its co-player axes"
        )
    decimals = rating_decimals(scale)
    ratings = tuple(round(float(r) * unit, decimals) + 0.0 for r in ratings_by_row[0])
    return DeviationResult(
        ratings=ratings,
        iteration_epsilons=tuple(epsilons),
        n_main_lps=len(epsilons),
        n_face_lps=n_face,
        rule=canonical,
        rating_decimals=decimals,
    )


def _face_minimum(
    row: np.ndarray,
    a_ub: np.ndarray,
    eps: float,
    a_eq: np.ndarray,
    b_eq: np.ndarray,
    bounds: _Bounds,
    tol: float,
    what: str,
) -> tuple[float, np.ndarray | None]:
    """min (Mσ)_i over the optimal face {σ: (Mσ)_j ≤ ε* unfrozen, = r_j frozen, σ ∈ Δ}, and the
    minimising σ (shape (S^N,)); σ is None when only the face widened by ``tol`` was feasible."""
    b_ub = np.full(len(a_ub), eps)
    try:
        res = _solve(row, a_ub, b_ub, a_eq, b_eq, bounds, f"{what} face test")
    except DeviationRatingError:
        # ε* is feasible up to solver round-off; retry on the face widened by the tolerance.
        res = _solve(row, a_ub, b_ub + tol, a_eq, b_eq, bounds, f"{what} face test")
        return float(row @ np.asarray(res.x, dtype=float)), None
    point = np.asarray(res.x, dtype=float)
    return float(row @ point), point


def _exactly_seat_symmetric(tensor: np.ndarray) -> bool:
    """True iff ``tensor`` is bit-for-bit symmetric in its co-player axes 1..N−1 (then the
    deviation matrix's seat-p rows are column permutations of the seat-0 rows)."""
    n_players = tensor.ndim
    for p in range(1, n_players - 1):
        axes = list(range(n_players))
        axes[p], axes[p + 1] = axes[p + 1], axes[p]
        if not np.array_equal(tensor, np.transpose(tensor, axes)):
            return False
    return True


def _face_test_groups(
    tight: np.ndarray, n_players: int, size: int, symmetric_seats: bool
) -> list[list[int]]:
    """Rows to face-test, as groups that pass or fail together (first row tested).

    ``tight`` (shape (N·S,)) marks the unfrozen rows tight at the returned vertex. For an exactly
    seat-symmetric tensor the LP is invariant under permuting the seats, and so is its optimal
    face, so the rows (p, s) of one type s are binding on the whole face together: a type is
    tested once, on seat 0, and only when its rows are tight at the vertex on every seat (a row
    slack at a point of the face is not binding on it). Otherwise every tight row is its own group.
    """
    if not symmetric_seats:
        return [[int(i)] for i in np.flatnonzero(tight)]
    by_type = tight.reshape(n_players, size)
    return [[p * size + s for p in range(n_players)] for s in range(size) if by_type[:, s].all()]
