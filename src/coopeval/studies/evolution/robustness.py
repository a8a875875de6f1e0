"""Model-level robustness analysis (docs/protocol/evolution.md#invasion-test item 5, docs/protocol/evolution.md#matrix-features last item, docs/protocol/evolution.md#horibe-results Tables 1–2).

Every summary is per population kind, protocol × variant × model (:data:`POPULATION`): runs of
different variants (e.g. V&H ``default`` and ``costly_punishment``) are never pooled, and
regressions compare the models of one protocol × variant.

* :func:`robustness_by_model`: the share (%) of tested strategies classified robust, per model
  (optionally per generation).
* :func:`oes_decomposition`: Table 2 layout: left edge, right edge, OES and robustness (%) per
  model, from the generation-``g`` feature means.
* :func:`feature_regressions`: Table 1 layout: single-feature least-squares regressions of
  robustness (%) on the model-level mean of each feature, with R², two-sided p and slope;
  computed only with three or more models (n − 2 ≥ 1 degrees of freedom).

Undefined features (issue 25 kind 7): ``entropy`` is NaN for an all-zero matrix and ``rho_mono``
when every row is constant (:mod:`~coopeval.studies.evolution.matrix`). Model means leave those
strategies out on purpose (NaN → null, then the mean of the rest) and state how many were used
(``n_valid_<feature>`` next to ``n_agents``); one all-zero strategy therefore never makes its
model's mean NaN, and a regression uses the models whose mean is defined (``n_valid``).
"""

from __future__ import annotations

import polars as pl

FEATURES = ("oes", "beta_minus_alpha", "entropy", "left", "l1_prevalence", "mean_cooperation")
"""Table 1 rows in the paper's order (``l1_prevalence`` = share of agents satisfying L1)."""
GROUP = ["protocol", "variant"]
"""The comparisons: models are compared within one protocol × variant."""
POPULATION = [*GROUP, "model"]
"""One row per population kind."""
MEAN_FEATURES = ("left", "right", "oes", "beta_minus_alpha", "entropy", "mean_cooperation", "rho_mono")
"""Features averaged per model (``l1`` is averaged as ``l1_prevalence``)."""
UNDEFINED_FEATURES = ("entropy", "rho_mono")
"""Features that are NaN for some matrices (all-zero; all rows constant); their model means
count the defined values in ``n_valid_<feature>``."""


def robustness_by_model(invasion: pl.DataFrame, by_generation: bool = False) -> pl.DataFrame:
    """Columns: protocol, variant, model[, generation], n_tested, robustness (%, 0–100)."""
    keys = [*POPULATION, "generation"] if by_generation else POPULATION
    return (
        invasion.group_by(keys)
        .agg(pl.len().alias("n_tested"), (pl.col("robust").cast(pl.Float64).mean() * 100).alias("robustness"))
        .sort(keys)
    )


def model_feature_means(features: pl.DataFrame, generation: int | None = None) -> pl.DataFrame:
    """Per protocol × variant × model: the mean of every feature at ``generation`` (default:
    the population's last analysed generation), and ``l1_prevalence`` (share of agents with
    L1, 0–1).

    Columns: protocol, variant, model, ``n_agents`` (strategies with a complete matrix: the
    means are over those), ``n_analysed`` (every strategy analysed at that generation, also
    those with a failed matrix cell; issue 36 item 4), the :data:`MEAN_FEATURES`,
    ``n_valid_entropy`` and ``n_valid_rho_mono`` (strategies whose feature is defined; the mean
    is over those, null when none), ``l1_prevalence``.
    """
    df = features.filter(pl.col("n_failed_cells") == 0)
    if generation is None:
        df = df.filter(pl.col("generation") == pl.col("generation").max().over(POPULATION))
    else:
        df = df.filter(pl.col("generation") == generation)
    analysed = features.group_by([*POPULATION, "generation"]).agg(pl.len().alias("n_analysed"))
    means = (
        df.group_by(POPULATION)
        .agg(
            pl.len().alias("n_agents"),
            pl.col("generation").first(),
            *(pl.col(c).cast(pl.Float64).fill_nan(None).mean() for c in MEAN_FEATURES),
            *(pl.col(c).cast(pl.Float64).fill_nan(None).count().alias(f"n_valid_{c}") for c in UNDEFINED_FEATURES),
            pl.col("l1").cast(pl.Float64).mean().alias("l1_prevalence"),
        )
    )
    joined = means.join(analysed, on=[*POPULATION, "generation"], how="left").drop("generation")
    return joined.select(*POPULATION, "n_agents", "n_analysed", *[c for c in means.columns if c not in (*POPULATION, "n_agents", "generation")]).sort(POPULATION)


def oes_decomposition(features: pl.DataFrame, invasion: pl.DataFrame, generation: int | None = None) -> pl.DataFrame:
    """Table 2 layout: protocol, variant, model, left, right, oes, robustness (%); per
    protocol × variant, sorted by OES descending. The counts behind each mean follow:
    ``n_agents`` of ``n_analysed`` strategies (those with a complete matrix, of all analysed)
    and ``n_tested`` invasion tests."""
    means = model_feature_means(features, generation).select(*POPULATION, "left", "right", "oes", "n_agents", "n_analysed")
    robust = robustness_by_model(invasion).select(*POPULATION, "robustness", "n_tested")
    return means.join(robust, on=POPULATION, how="left").sort([*GROUP, "oes"], descending=[False, False, True])


def feature_regressions(features: pl.DataFrame, invasion: pl.DataFrame, generation: int | None = None) -> pl.DataFrame:
    """Table 1 layout: protocol, variant, feature, n_models, n_valid, r2, p, slope, intercept
    (robustness % on the feature), one block per protocol × variant.

    A block needs three or more models with both features and invasion tests (none is
    written otherwise). A feature is fitted over the ``n_valid`` models whose mean is defined
    (models whose every strategy has an undefined entropy or monotonicity are left out); with
    fewer than three such models, or a feature constant across them, its statistics are null.
    """
    from scipy import stats

    means = model_feature_means(features, generation)
    table = means.join(robustness_by_model(invasion).select(*POPULATION, "robustness"), on=POPULATION)
    rows = []
    for (protocol, variant), block in sorted(table.group_by(GROUP), key=lambda kv: tuple(str(k) for k in kv[0])):
        if block.height < 3:
            continue
        head = {"protocol": protocol, "variant": variant, "n_models": block.height}
        for feature in FEATURES:
            valid = block.filter(pl.col(feature).is_not_null())
            x, y = valid[feature].to_list(), valid["robustness"].to_list()
            if len(x) < 3 or len(set(x)) < 2:
                rows.append({**head, "feature": feature, "n_valid": len(x), "r2": None, "p": None, "slope": None, "intercept": None})
                continue
            fit = stats.linregress(x, y)
            rows.append(
                {
                    **head,
                    "feature": feature,
                    "n_valid": len(x),
                    "r2": float(fit.rvalue**2),
                    "p": float(fit.pvalue),
                    "slope": float(fit.slope),
                    "intercept": float(fit.intercept),
                }
            )
    schema = {
        "protocol": pl.String, "variant": pl.String, "feature": pl.String, "n_models": pl.Int64, "n_valid": pl.Int64,
        "r2": pl.Float64, "p": pl.Float64, "slope": pl.Float64, "intercept": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema)
