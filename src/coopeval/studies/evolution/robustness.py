"""Model-level robustness analysis (evolution spec §3.3 item 5, §3.5 last item, §3.6 Tables 1–2).

* :func:`robustness_by_model`: the share (%) of tested strategies classified robust, per model
  (optionally per generation).
* :func:`oes_decomposition`: Table 2 layout: left edge, right edge, OES and robustness (%) per
  model, from the generation-``g`` feature means.
* :func:`feature_regressions`: Table 1 layout: single-feature least-squares regressions of
  robustness (%) on the model-level mean of each feature, with R², two-sided p and slope;
  computed only with three or more models (n − 2 ≥ 1 degrees of freedom).
"""

from __future__ import annotations

import polars as pl

FEATURES = ("oes", "beta_minus_alpha", "entropy", "left", "l1_prevalence", "mean_cooperation")
"""Table 1 rows in the paper's order (``l1_prevalence`` = share of agents satisfying L1)."""


def robustness_by_model(invasion: pl.DataFrame, by_generation: bool = False) -> pl.DataFrame:
    """Columns: model[, generation], n_tested, robustness (%, 0–100)."""
    keys = ["model", "generation"] if by_generation else ["model"]
    return (
        invasion.group_by(keys)
        .agg(pl.len().alias("n_tested"), (pl.col("robust").cast(pl.Float64).mean() * 100).alias("robustness"))
        .sort(keys)
    )


def model_feature_means(features: pl.DataFrame, generation: int | None = None) -> pl.DataFrame:
    """Per model: the mean of every feature at ``generation`` (default: each model's last
    analysed generation), and ``l1_prevalence`` (share of agents with L1, 0–1)."""
    df = features.filter(pl.col("n_failed_cells") == 0)
    if generation is None:
        df = df.filter(pl.col("generation") == pl.col("generation").max().over("model"))
    else:
        df = df.filter(pl.col("generation") == generation)
    return (
        df.group_by("model")
        .agg(
            pl.len().alias("n_agents"),
            *(pl.col(c).mean() for c in ("left", "right", "oes", "beta_minus_alpha", "entropy", "mean_cooperation", "rho_mono")),
            pl.col("l1").cast(pl.Float64).mean().alias("l1_prevalence"),
        )
        .sort("model")
    )


def oes_decomposition(features: pl.DataFrame, invasion: pl.DataFrame, generation: int | None = None) -> pl.DataFrame:
    """Table 2 layout: model, left, right, oes, robustness (%), sorted by OES descending."""
    means = model_feature_means(features, generation).select("model", "left", "right", "oes")
    return means.join(robustness_by_model(invasion).select("model", "robustness"), on="model", how="left").sort(
        "oes", descending=True
    )


def feature_regressions(features: pl.DataFrame, invasion: pl.DataFrame, generation: int | None = None) -> pl.DataFrame:
    """Table 1 layout: feature, n_models, r2, p, slope, intercept (robustness % on the feature).

    Empty when fewer than three models have both features and invasion tests; a feature
    constant across models gets NaN statistics.
    """
    from scipy import stats

    table = model_feature_means(features, generation).join(robustness_by_model(invasion).select("model", "robustness"), on="model")
    rows = []
    if table.height >= 3:
        y = table["robustness"].to_list()
        for feature in FEATURES:
            x = table[feature].to_list()
            if len(set(x)) < 2:
                rows.append({"feature": feature, "n_models": table.height, "r2": None, "p": None, "slope": None, "intercept": None})
                continue
            fit = stats.linregress(x, y)
            rows.append(
                {
                    "feature": feature,
                    "n_models": table.height,
                    "r2": float(fit.rvalue**2),
                    "p": float(fit.pvalue),
                    "slope": float(fit.slope),
                    "intercept": float(fit.intercept),
                }
            )
    schema = {"feature": pl.String, "n_models": pl.Int64, "r2": pl.Float64, "p": pl.Float64, "slope": pl.Float64, "intercept": pl.Float64}
    return pl.DataFrame(rows, schema=schema)
