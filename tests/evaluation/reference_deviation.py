"""Test-only reference for the strictest deviation ratings: the straightforward face test.

One face LP per row tight at the returned vertex, each solved with
``scipy.optimize.linprog(method="highs")``, no shortcuts (Marris et al. 2025, arXiv 2502.11645;
docs/protocol/evaluation.md#deviation-ratings). The package's
:func:`coopeval.evaluation.deviation.deviation_ratings` tests one row per agent type and skips
rows that a face point already shows slack; this module is what it must agree with.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import linprog

from coopeval.evaluation.deviation import RELATIVE_TOL, deviation_matrix, rating_decimals

__all__ = ["reference_strictest_ratings"]


def _solve(c: np.ndarray, a_ub: np.ndarray, b_ub: np.ndarray, a_eq: np.ndarray, b_eq: np.ndarray,
           bounds: list[tuple[float | None, float | None]]) -> np.ndarray:
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=b_eq, bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"reference LP failed: {res.message}")
    return np.asarray(res.x, dtype=float)


def reference_strictest_ratings(tensor: np.ndarray) -> tuple[float, ...]:
    """Strictest-CCE ratings of ``tensor`` (shape (S,)*N), rounded as the package rounds them.

    Raises
    ------
    RuntimeError
        If an LP fails (the face LP is retried on the face widened by the tolerance first).
    """
    t = np.asarray(tensor, dtype=float)
    n_players, size = t.ndim, t.shape[0]
    raw = deviation_matrix(t)
    scale = float(np.abs(raw).max())
    unit = math.ldexp(1.0, math.frexp(scale)[1]) if scale > 0 else 1.0
    m = raw / unit
    n_rows, n_profiles = m.shape
    tol = RELATIVE_TOL * scale / unit
    frozen = np.zeros(n_rows, dtype=bool)
    values = np.zeros(n_rows)
    bounds: list[tuple[float | None, float | None]] = [(0.0, None)] * n_profiles
    ones = np.ones((1, n_profiles))
    while not frozen.all():
        free, fixed = np.flatnonzero(~frozen), np.flatnonzero(frozen)
        c = np.zeros(n_profiles + 1)
        c[-1] = 1.0
        z = _solve(c, np.hstack([m[free], -np.ones((len(free), 1))]), np.zeros(len(free)),
                   np.vstack([np.hstack([m[fixed], np.zeros((len(fixed), 1))]), np.append(ones, 0.0)[None]]),
                   np.concatenate([values[fixed], [1.0]]), [*bounds, (None, None)])
        sigma, eps = z[:-1], float(z[-1])
        gains = m @ sigma
        face_eq = np.vstack([m[fixed], ones])
        face_b_eq = np.concatenate([values[fixed], [1.0]])
        newly = []
        for i in free[gains[free] >= eps - tol]:
            b_ub = np.full(len(free), eps)
            try:
                point = _solve(m[i], m[free], b_ub, face_eq, face_b_eq, bounds)
            except RuntimeError:
                point = _solve(m[i], m[free], b_ub + tol, face_eq, face_b_eq, bounds)
            if float(m[i] @ point) >= eps - tol:
                newly.append(i)
        if not newly:
            raise RuntimeError("reference: no row frozen")
        frozen[newly] = True
        values[newly] = eps
    decimals = rating_decimals(scale)
    return tuple(round(float(r) * unit, decimals) + 0.0 for r in values.reshape(n_players, size)[0])
