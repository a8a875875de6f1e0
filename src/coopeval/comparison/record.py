"""The ``comparisons`` table and the JSON object of ``coopeval compare``.

One row per (study, scope, metric, pair of agents): the paired estimate
(:class:`coopeval.comparison.paired.PairedEstimate`) with its p-value adjusted over its *family*,
all the pairs of one (study, scope, metric) — the pairs of one leaderboard column. Every
missing value is null (never NaN) and ``note`` says why. What a row can claim
(:func:`coopeval.comparison.evidence.verdict`: significant, not significant, untestable at its
size, stable under resampling at one replicate) is ``evidence`` in ``coopeval compare``'s object;
the store's ``note`` says why wherever it is not read off p alone.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from coopeval.comparison.evidence import verdict
from coopeval.comparison.multiplicity import DEFAULT_CORRECTION, adjust_p_values
from coopeval.core.schemas import register_tables

if TYPE_CHECKING:  # an annotation only: paired imports scipy.stats (~0.8 s), which config loading does not need
    from coopeval.comparison.paired import PairedEstimate

__all__ = ["COMPARISONS_SCHEMA", "COMPARISONS_TABLE", "JSON_FIELDS", "comparison_row", "comparisons_frame", "corrected", "swapped", "to_json",
           "with_evidence"]

JSON_FIELDS = ("a", "b", "metric", "delta", "ci_low", "ci_high", "p_value", "p_adjusted", "correction",
               "n_pairs", "n_clusters", "mde", "method", "evidence", "note")
"""The keys of the object ``coopeval compare`` prints, in order."""

COMPARISONS_SCHEMA: dict[str, pl.DataType] = {
    "study": pl.String(),
    "scope": pl.String(),  # what the pair was compared on, e.g. "Repetition/prisoners_dilemma"
    "metric": pl.String(),
    "a": pl.String(),
    "b": pl.String(),
    "delta": pl.Float64(),
    "ci_low": pl.Float64(),
    "ci_high": pl.Float64(),
    "p_value": pl.Float64(),
    "p_adjusted": pl.Float64(),
    "correction": pl.String(),
    "n_pairs": pl.Int64(),
    "n_clusters": pl.Int64(),
    "mde": pl.Float64(),
    "method": pl.String(),
    "note": pl.String(),
}
"""Columns of the store's ``comparisons`` table (and ``results/tables/comparisons.csv``)."""

COMPARISONS_TABLE = "comparisons"
"""The store table every study's comparison rows go to."""

register_tables({COMPARISONS_TABLE: COMPARISONS_SCHEMA})


def _clean(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(value)


def comparison_row(
    study: str, scope: str, metric: str, a: str, b: str, estimate: PairedEstimate, replicates: int | None = None
) -> dict[str, Any]:
    """One row of the ``comparisons`` table before correction (``p_adjusted`` None); ``replicates``
    (the replicates behind its clusters, None: not known) is kept for :func:`corrected`'s verdict."""
    return {"replicates": replicates,
        "study": study, "scope": scope, "metric": metric, "a": a, "b": b,
        "delta": _clean(estimate.delta), "ci_low": _clean(estimate.ci_low), "ci_high": _clean(estimate.ci_high),
        "p_value": _clean(estimate.p_value), "p_adjusted": None, "correction": None,
        "n_pairs": estimate.n_pairs, "n_clusters": estimate.n_clusters, "mde": _clean(estimate.mde),
        "method": estimate.method, "note": estimate.note,
    }


def corrected(rows: Sequence[Mapping[str, Any]], correction: str = DEFAULT_CORRECTION) -> list[dict[str, Any]]:
    """Rows with ``p_adjusted`` and ``correction`` filled, each (study, scope, metric) one family,
    and ``evidence`` (:func:`coopeval.comparison.evidence.verdict`), whose reason, where it has
    one, is added to ``note``.

    Raises
    ------
    ValueError
        On an unknown correction.
    """
    out = [dict(r) for r in rows]
    families: dict[tuple[str, str, str], list[int]] = {}
    for i, row in enumerate(out):
        families.setdefault((row["study"], row["scope"], row["metric"]), []).append(i)
    for members in families.values():
        adjusted = adjust_p_values([out[i]["p_value"] for i in members], correction)
        for i, p in zip(members, adjusted, strict=True):
            out[i]["p_adjusted"] = p
            out[i]["correction"] = correction
    for row in out:
        with_evidence(row)
    return out


def with_evidence(row: dict[str, Any]) -> dict[str, Any]:
    """Set ``row["evidence"]`` from its numbers (and ``replicates``, if given) and add the
    verdict's reason to ``note`` once; returns ``row``."""
    found, why = verdict(row, row.get("replicates"))
    row["evidence"] = found
    note = row.get("note")
    if why and (note is None or why not in note):
        row["note"] = why if not note else f"{note}; {why}"
    return row


def comparisons_frame(rows: Sequence[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows as a frame of :data:`COMPARISONS_SCHEMA` (empty frame for no rows)."""
    clean = [{k: r.get(k) for k in COMPARISONS_SCHEMA} for r in rows]
    return pl.DataFrame(clean, schema=COMPARISONS_SCHEMA) if clean else pl.DataFrame(schema=COMPARISONS_SCHEMA)


def to_json(row: Mapping[str, Any]) -> dict[str, Any]:
    """The ``coopeval compare`` object of one row: exactly :data:`JSON_FIELDS`, no NaN."""
    out = {key: row.get(key) for key in JSON_FIELDS}
    for key, value in out.items():
        if isinstance(value, float) and not math.isfinite(value):
            out[key] = None
    return out


def swapped(row: Mapping[str, Any]) -> dict[str, Any]:
    """The row of (b, a) as a row of (a, b): Δ and the interval change sign (None stays None)."""
    low, high, delta = row["ci_low"], row["ci_high"], row["delta"]
    return {**row, "a": row["b"], "b": row["a"], "delta": None if delta is None else -delta,
            "ci_low": None if high is None else -high, "ci_high": None if low is None else -low}
