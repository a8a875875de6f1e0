"""Strategy matrices and their features (docs/protocol/evolution.md#strategy-matrix, #matrix-features).

M is 11 × 11: row i ↔ x_B = 10·i % (the recipient's previous partner's donation, round t − 2),
column j ↔ x_A = 10·j % (the recipient's own last donation, round t − 1); cells are donation
percentages 0–100. Index sets: low = {0..4}, high = {6..10}; index 5 belongs to neither.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

SIZE = 11
LOW = slice(0, 5)
HIGH = slice(6, 11)
CONSTANT_ROW_RULES = ("exclude", "zero")
PERCENT_TOLERANCE = 1e-9
"""Float slack (percentage points) allowed around [0, 100] before a cell is out of domain."""


@dataclass(frozen=True)
class MatrixFeatures:
    """Every docs/protocol/evolution.md#matrix-features feature of one matrix (percent units for edges and corners).

    ``rho_mono`` is NaN when every row is constant under the ``exclude`` rule; ``entropy`` NaN
    for an all-zero matrix.
    """

    left: float
    right: float
    oes: float
    alpha: float
    beta: float
    gamma: float
    delta: float
    l1: bool
    beta_minus_alpha: float
    entropy: float
    rho_mono: float
    n_constant_rows: int
    mean_cooperation: float

    def as_row(self) -> dict[str, Any]:
        return asdict(self)


def _spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's ρ with average ranks for ties (Pearson correlation of the ranks)."""
    rx, ry = _average_ranks(x), _average_ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    return float((rx * ry).sum() / math.sqrt((rx * rx).sum() * (ry * ry).sum()))


def _average_ranks(values: np.ndarray) -> np.ndarray:
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), dtype=float)
    sorted_values = values[order]
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and sorted_values[j + 1] == sorted_values[i]:
            j += 1
        ranks[order[i : j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return ranks


def matrix_entropy(m: np.ndarray) -> float:
    """H(M) = −Σ M̃ ln M̃ with M̃ = M / ΣM, natural log, 0·ln 0 = 0; NaN for an all-zero M."""
    total = float(m.sum())
    if total == 0:
        return math.nan
    p = m[m > 0] / total
    return float(-(p * np.log(p)).sum())


def rho_mono(m: np.ndarray, constant_rows: str = "exclude") -> tuple[float, int]:
    """Mean over rows of Spearman's ρ((0..10), M_i·) and the number of constant rows (docs/protocol/evolution.md#matrix-features).

    ``constant_rows="exclude"`` (default) averages over the non-constant rows only (NaN when
    all are constant); ``"zero"`` counts constant rows as 0 and divides by 11.

    Raises
    ------
    ValueError
        An unknown rule.
    """
    if constant_rows not in CONSTANT_ROW_RULES:
        raise ValueError(f"monotonicity_constant_rows must be one of {CONSTANT_ROW_RULES}, not {constant_rows!r}")
    x = np.arange(m.shape[1], dtype=float)
    rhos, n_constant = [], 0
    for row in m:
        if np.all(row == row[0]):
            n_constant += 1
            if constant_rows == "zero":
                rhos.append(0.0)
            continue
        rhos.append(_spearman(x, row.astype(float)))
    if not rhos:
        return math.nan, n_constant
    return float(np.mean(rhos)), n_constant


def matrix_features(matrix: Sequence[Sequence[float]], constant_rows: str = "exclude") -> MatrixFeatures:
    """All docs/protocol/evolution.md#matrix-features features of an 11 × 11 matrix (rows x_B, columns x_A).

    Raises
    ------
    ValueError
        A matrix that is not 11 × 11, holds NaN, a cell outside [0, 100] (a donation
        percentage; issue 25 kind 7), or an unknown constant-row rule.
    """
    m = np.asarray(matrix, dtype=float)
    if m.shape != (SIZE, SIZE):
        raise ValueError(f"a strategy matrix is {SIZE} x {SIZE}, got shape {m.shape}")
    if np.isnan(m).any():
        raise ValueError("a strategy matrix with missing cells has no features")
    outside = np.argwhere((m < -PERCENT_TOLERANCE) | (m > 100 + PERCENT_TOLERANCE) | ~np.isfinite(m))
    if outside.size:
        i, j = (int(v) for v in outside[0])
        raise ValueError(
            f"strategy matrix cells are donation percentages in [0, 100]; cell (i={i}, j={j}) is {float(m[i, j])!r} "
            f"({len(outside)} cell(s) outside): fix the amount that produced it"
        )
    left = float(m[:, LOW].mean())
    right = float(m[:, HIGH].mean())
    alpha = float(m[HIGH, LOW].mean())
    beta = float(m[HIGH, HIGH].mean())
    gamma = float(m[LOW, LOW].mean())
    delta = float(m[LOW, HIGH].mean())
    rho, n_constant = rho_mono(m, constant_rows)
    return MatrixFeatures(
        left=left,
        right=right,
        oes=right - left,
        alpha=alpha,
        beta=beta,
        gamma=gamma,
        delta=delta,
        l1=bool(alpha < gamma < delta <= beta),
        beta_minus_alpha=beta - alpha,
        entropy=matrix_entropy(m),
        rho_mono=rho,
        n_constant_rows=n_constant,
        mean_cooperation=float(m.mean()),
    )
