"""Prompt sensitivity: how much a metric depends on the wording of the prompts (issue 23 item 4,
docs/paraphrases.md).

The input is one value per (model, prompt variant, context), where a context is one unit the
same for every model and wording (e.g. a CoopEval mechanism × game × replicate). Three results:

* each model's metric per variant: the mean over the contexts;
* the share of the total sum of squares due to model, variant, their interaction, the context
  and the residual (the model × context, variant × context and three-way terms), from the
  classical decomposition of a balanced crossed design (Montgomery, *Design and Analysis of
  Experiments*, 9th ed., §5.3, with the context as a blocking factor, §4.1):
  ``SS_model = V·C·Σ_m (ȳ_m − ȳ)²``, ``SS_variant = M·C·Σ_v (ȳ_v − ȳ)²``,
  ``SS_model×variant = C·Σ_{m,v} (ȳ_mv − ȳ_m − ȳ_v + ȳ)²``, ``SS_context = M·V·Σ_c (ȳ_c − ȳ)²``,
  ``SS_residual = SS_total − the four``; a share is ``SS / SS_total`` (all 0 when every value
  is equal);
* for every pair of models, the difference of their per-variant means under each variant and
  whether the ordering holds under every variant (same strict sign everywhere).

Only contexts in which every model has a value under every variant enter (the design must be
balanced for the decomposition to hold); the number left out is reported.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import polars as pl

__all__ = ["SOURCES", "Sensitivity", "prompt_sensitivity"]

SOURCES = ("model", "prompt variant", "model × prompt variant", "context", "residual")
"""The sources of variation, in the order of :attr:`Sensitivity.shares`."""


@dataclass(frozen=True)
class Sensitivity:
    """The result of :func:`prompt_sensitivity`.

    Attributes
    ----------
    per_variant:
        Columns ``model``, ``prompt_variant``, ``value`` (mean over the contexts), ``n_contexts``.
    shares:
        Columns ``source`` (:data:`SOURCES`), ``sum_sq``, ``df``, ``share`` (of the total sum of squares).
    orderings:
        Columns ``a``, ``b``, ``prompt_variant``, ``delta`` (mean of a − mean of b under that
        variant) and ``holds`` (the sign of delta is the same and non-zero under every variant;
        repeated on each of the pair's rows).
    contexts_used, contexts_dropped:
        Contexts in the balanced design, and those left out because a model or variant lacks a value.
    """

    per_variant: pl.DataFrame
    shares: pl.DataFrame
    orderings: pl.DataFrame
    contexts_used: int
    contexts_dropped: int


def _cube(values: pl.DataFrame) -> tuple[list[str], list[str], list[str], np.ndarray, int]:
    models = list(dict.fromkeys(values["model"].to_list()))
    variants = list(dict.fromkeys(values["prompt_variant"].to_list()))
    means = values.group_by(["model", "prompt_variant", "context"]).agg(pl.col("value").mean())
    counts = means.group_by("context").len()
    complete = counts.filter(pl.col("len") == len(models) * len(variants))["context"].to_list()
    contexts = [c for c in dict.fromkeys(values["context"].to_list()) if c in set(complete)]
    cube = np.full((len(models), len(variants), len(contexts)), np.nan)
    index = {c: k for k, c in enumerate(contexts)}
    for row in means.filter(pl.col("context").is_in(contexts)).iter_rows(named=True):
        cube[models.index(row["model"]), variants.index(row["prompt_variant"]), index[row["context"]]] = row["value"]
    return models, variants, contexts, cube, counts.height - len(contexts)


def prompt_sensitivity(values: pl.DataFrame) -> Sensitivity:
    """Per-variant means, variance shares and pairwise orderings of a metric (module docstring).

    Parameters
    ----------
    values:
        Columns ``model``, ``prompt_variant``, ``context`` (strings) and ``value`` (float); several
        rows of one (model, variant, context) are averaged first; null values are dropped.

    Raises
    ------
    ValueError
        If a column is missing, or no context has a value for every model under every variant.
    """
    missing = {"model", "prompt_variant", "context", "value"} - set(values.columns)
    if missing:
        raise ValueError(f"prompt_sensitivity needs the columns {sorted(missing)}")
    values = values.drop_nulls("value").filter(pl.col("value").is_not_nan())
    models, variants, contexts, y, dropped = _cube(values)
    if not contexts:
        raise ValueError("no context has a value for every model under every prompt variant; nothing to compare")
    n_m, n_v, n_c = y.shape
    grand = y.mean()
    m_mean, v_mean, c_mean = y.mean(axis=(1, 2)), y.mean(axis=(0, 2)), y.mean(axis=(0, 1))
    mv_mean = y.mean(axis=2)
    ss_total = float(((y - grand) ** 2).sum())
    ss = {
        "model": n_v * n_c * float(((m_mean - grand) ** 2).sum()),
        "prompt variant": n_m * n_c * float(((v_mean - grand) ** 2).sum()),
        "model × prompt variant": n_c * float(((mv_mean - m_mean[:, None] - v_mean[None, :] + grand) ** 2).sum()),
        "context": n_m * n_v * float(((c_mean - grand) ** 2).sum()),
    }
    ss["residual"] = max(ss_total - sum(ss.values()), 0.0)
    dof = {"model": n_m - 1, "prompt variant": n_v - 1, "model × prompt variant": (n_m - 1) * (n_v - 1), "context": n_c - 1}
    dof["residual"] = n_m * n_v * n_c - 1 - sum(dof.values())
    shares = pl.DataFrame(
        {
            "source": list(SOURCES),
            "sum_sq": [ss[s] for s in SOURCES],
            "df": [dof[s] for s in SOURCES],
            "share": [ss[s] / ss_total if ss_total > 0 else 0.0 for s in SOURCES],
        }
    )
    per_variant = pl.DataFrame(
        {
            "model": [m for m in models for _ in variants],
            "prompt_variant": variants * n_m,
            "value": mv_mean.reshape(-1).tolist(),
            "n_contexts": [n_c] * (n_m * n_v),
        }
    )
    rows = []
    for i, j in itertools.combinations(range(n_m), 2):
        deltas = mv_mean[i] - mv_mean[j]
        signs = set(np.sign(deltas).tolist())
        holds = len(signs) == 1 and 0.0 not in signs
        rows += [
            {"a": models[i], "b": models[j], "prompt_variant": v, "delta": float(d), "holds": holds}
            for v, d in zip(variants, deltas, strict=True)
        ]
    schema = {"a": pl.String, "b": pl.String, "prompt_variant": pl.String, "delta": pl.Float64, "holds": pl.Boolean}
    return Sensitivity(per_variant, shares, pl.DataFrame(rows, schema=schema), n_c, dropped)
