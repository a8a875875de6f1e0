"""Multiplicity corrections of a family of p-values: Holm (default) and Benjamini–Hochberg.

* Holm (Holm 1979, "A simple sequentially rejective multiple test procedure", Scand. J. Stat.
  6(2)): sort p ascending p_(1) ≤ … ≤ p_(m); p̃_(i) = max_{j ≤ i} min(1, (m − j + 1)·p_(j)).
  Controls the family-wise error rate.
* BH (Benjamini & Hochberg 1995, JRSS B 57(1)): p̃_(i) = min_{j ≥ i} min(1, m·p_(j)/j); controls
  the false discovery rate. Computed by :func:`scipy.stats.false_discovery_control`.

statsmodels' ``multipletests`` (methods ``holm`` / ``fdr_bh``) gives the same values; it is not
a dependency of the project (its lock would need pandas and patsy), so Holm's step-down is
written here (a cumulative maximum) and BH comes from scipy.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.stats import false_discovery_control

__all__ = ["CORRECTIONS", "DEFAULT_CORRECTION", "adjust_p_values", "check_correction"]

CORRECTIONS = {"holm": "Holm (1979) step-down, family-wise error rate", "bh": "Benjamini-Hochberg (1995), false discovery rate"}
"""Correction name → description (the names accepted by ``--correction``)."""
DEFAULT_CORRECTION = "holm"


def check_correction(correction: str) -> str:
    """Return ``correction`` if known.

    Raises
    ------
    ValueError
        Naming the valid corrections.
    """
    if correction not in CORRECTIONS:
        raise ValueError(f"correction: {correction!r} is not one of {sorted(CORRECTIONS)}")
    return correction


def adjust_p_values(p_values: Sequence[float | None], correction: str = DEFAULT_CORRECTION) -> list[float | None]:
    """Adjusted p-values of one family; None entries (no test) stay None and do not count in m.

    Parameters
    ----------
    p_values:
        Raw p-values in [0, 1] (or None).
    correction:
        ``"holm"`` or ``"bh"``.

    Returns
    -------
    list
        Adjusted p-values in input order (each in [0, 1], never below its raw value).

    Raises
    ------
    ValueError
        On an unknown correction or a p-value outside [0, 1].
    """
    check_correction(correction)
    index = [i for i, p in enumerate(p_values) if p is not None]
    raw = np.asarray([float(p) for p in p_values if p is not None], dtype=np.float64)
    if np.any(~np.isfinite(raw)) or np.any((raw < 0) | (raw > 1)):
        raise ValueError(f"p_values: {raw.tolist()} has a value outside [0, 1]")
    out: list[float | None] = [None] * len(p_values)
    if len(raw) == 0:
        return out
    if correction == "bh":
        adjusted = np.asarray(false_discovery_control(raw, method="bh"), dtype=float)
    else:
        m = len(raw)
        order = np.argsort(raw, kind="stable")
        stepped = np.minimum(1.0, (m - np.arange(m)) * raw[order])
        adjusted = np.empty(m)
        adjusted[order] = np.maximum.accumulate(stepped)
    for i, value in zip(index, adjusted, strict=True):
        out[i] = float(min(1.0, max(value, 0.0)))
    return out
