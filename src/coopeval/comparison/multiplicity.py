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

import math
from collections.abc import Sequence

__all__ = ["CORRECTIONS", "DEFAULT_CORRECTION", "adjust_p_values"]

CORRECTIONS = {"holm": "Holm (1979) step-down, family-wise error rate", "bh": "Benjamini-Hochberg (1995), false discovery rate"}
"""Correction name → description (the names accepted by ``--correction``)."""
DEFAULT_CORRECTION = "holm"


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
    if correction not in CORRECTIONS:
        raise ValueError(f"correction: {correction!r} is not one of {sorted(CORRECTIONS)}")
    index = [i for i, p in enumerate(p_values) if p is not None]
    raw = [float(p) for p in p_values if p is not None]
    if any(not (math.isfinite(p) and 0.0 <= p <= 1.0) for p in raw):
        raise ValueError(f"p_values: {raw} has a value outside [0, 1]")
    out: list[float | None] = [None] * len(p_values)
    if not raw:
        return out
    m = len(raw)
    if correction == "bh":
        from scipy.stats import (
            false_discovery_control,  # imported when used: `coopeval --help` stays fast
        )

        adjusted = [float(v) for v in false_discovery_control(raw, method="bh")]
    else:
        adjusted = [0.0] * m
        running = 0.0
        for rank, i in enumerate(sorted(range(m), key=lambda j: raw[j])):  # stable: ties keep input order
            running = max(running, min(1.0, (m - rank) * raw[i]))
            adjusted[i] = running
    for i, value in zip(index, adjusted, strict=True):
        out[i] = min(1.0, max(value, 0.0))
    return out
