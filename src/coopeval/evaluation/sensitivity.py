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

The decomposition needs a balanced design: the models, taken in order of the number of contexts
in which they have a value under every variant, and those shared contexts, such that models ×
contexts is largest (two models or more where possible; a roster where some agents play only
some mechanisms keeps the agents that play everywhere). The per-variant means of each model and
the orderings of each pair use every context the model, or the pair, has under every variant.
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
        Columns ``model``, ``prompt_variant``, ``value`` (mean over the contexts in which the model
        has a value under every variant), ``n_contexts`` (their number).
    shares:
        Columns ``source`` (:data:`SOURCES`), ``sum_sq``, ``df``, ``share`` (of the total sum of squares).
    orderings:
        Columns ``a``, ``b``, ``prompt_variant``, ``delta`` (mean of a − mean of b under that
        variant, over the contexts both have under every variant), ``n_contexts`` and ``holds`` (the sign of delta is the same and non-zero under every variant;
        repeated on each of the pair's rows).
    models:
        The models of the balanced design of :attr:`shares`.
    contexts_used, contexts_dropped:
        Contexts in that design, and those left out.
    """

    per_variant: pl.DataFrame
    shares: pl.DataFrame
    orderings: pl.DataFrame
    models: list[str]
    contexts_used: int
    contexts_dropped: int


def _complete(values: pl.DataFrame, n_variants: int) -> dict[str, list[str]]:
    """model → the contexts (first-appearance order) in which it has a value under every variant."""
    counts = values.group_by(["model", "context"], maintain_order=True).agg(pl.col("prompt_variant").n_unique().alias("n"))
    out: dict[str, list[str]] = {}
    for row in counts.filter(pl.col("n") == n_variants).iter_rows(named=True):
        out.setdefault(row["model"], []).append(row["context"])
    return out


def _design(models: list[str], complete: dict[str, list[str]]) -> tuple[list[str], list[str]]:
    """The models and contexts of the balanced design: the models taken in order of coverage,
    the set (of two or more models where possible) that maximises models × shared contexts."""
    ranked = sorted((m for m in models if complete.get(m)), key=lambda m: -len(complete[m]))
    best: tuple[tuple[bool, int, int], list[str], list[str]] = ((False, 0, 0), [], [])
    for i in range(1, len(ranked) + 1):
        chosen = ranked[:i]
        shared = [c for c in complete[chosen[0]] if all(c in set(complete[m]) for m in chosen)]
        score = (i >= 2 and bool(shared), i * len(shared), i)
        if shared and score > best[0]:
            best = (score, chosen, shared)
    return best[1], best[2]


def _means(values: pl.DataFrame, models: list[str], variants: list[str], contexts: list[str]) -> np.ndarray:
    """The (model, variant, context) cube of means over ``contexts``."""
    cube = np.full((len(models), len(variants), len(contexts)), np.nan)
    where = {c: k for k, c in enumerate(contexts)}
    subset = values.filter(pl.col("model").is_in(models) & pl.col("context").is_in(contexts))
    for row in subset.iter_rows(named=True):
        cube[models.index(row["model"]), variants.index(row["prompt_variant"]), where[row["context"]]] = row["value"]
    return cube


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
    raw = values.drop_nulls("value").filter(pl.col("value").is_not_nan())
    values = raw.group_by(["model", "prompt_variant", "context"], maintain_order=True).agg(pl.col("value").mean())
    all_models = list(dict.fromkeys(values["model"].to_list()))
    variants = list(dict.fromkeys(values["prompt_variant"].to_list()))
    complete = _complete(values, len(variants))
    models, contexts = _design(all_models, complete)
    if not contexts:
        raise ValueError("no context has a value for every prompt variant; nothing to compare")
    y = _means(values, models, variants, contexts)
    dropped = values["context"].n_unique() - len(contexts)
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
    ss["residual"] = ss_total - sum(ss.values())
    ss = {k: v if v > 1e-12 * ss_total else 0.0 for k, v in ss.items()}  # rounding noise of an exact 0
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
    per_rows = []
    for model in all_models:
        own = complete.get(model, [])
        if own:
            means = _means(values, [model], variants, own)[0].mean(axis=1)
            per_rows += [{"model": model, "prompt_variant": v, "value": float(x), "n_contexts": len(own)} for v, x in zip(variants, means, strict=True)]
    per_variant = pl.DataFrame(per_rows, schema={"model": pl.String, "prompt_variant": pl.String, "value": pl.Float64, "n_contexts": pl.Int64})
    rows = []
    for a, b in itertools.combinations([m for m in all_models if complete.get(m)], 2):
        shared = [c for c in complete[a] if c in set(complete[b])]
        if not shared:
            continue
        pair = _means(values, [a, b], variants, shared).mean(axis=2)
        deltas = pair[0] - pair[1]
        signs = set(np.sign(deltas).tolist())
        holds = len(signs) == 1 and 0.0 not in signs
        rows += [
            {"a": a, "b": b, "prompt_variant": v, "delta": float(d), "n_contexts": len(shared), "holds": holds}
            for v, d in zip(variants, deltas, strict=True)
        ]
    schema = {"a": pl.String, "b": pl.String, "prompt_variant": pl.String, "delta": pl.Float64, "n_contexts": pl.Int64, "holds": pl.Boolean}
    return Sensitivity(per_variant, shares, pl.DataFrame(rows, schema=schema), models, n_c, dropped)
