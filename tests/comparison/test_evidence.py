"""What a comparison row can claim (issue 47, honest evidence): the rule of
:func:`coopeval.comparison.evidence.verdict` in the rows the store and ``coopeval compare`` get."""

from __future__ import annotations

import numpy as np
import pytest

from coopeval.comparison.paired import paired_cluster_test, replicate_test
from coopeval.comparison.populations import population_rows
from coopeval.comparison.record import comparison_row, corrected, to_json


def test_one_replicate_whose_clusters_all_agree_is_stable_not_significant():
    """Six co-player clusters of one replicate, each giving Δ = 0.5: the exact sign-flip p is
    2 / 2^6 = 0.03125 < 0.05 and the interval has zero width; the row is stable under
    resampling, not significant, and its note says why (one replicate)."""
    estimate = paired_cluster_test([1.0] * 6, [0.5] * 6)
    assert estimate.p_value == pytest.approx(2 / 2**6) and estimate.ci_low == estimate.ci_high == pytest.approx(3.0)
    (row,) = corrected([comparison_row("coopeval", "NoMechanism/PublicGoods", "Mean", "a", "b", estimate, replicates=1)])
    assert row["p_adjusted"] == pytest.approx(0.03125)
    assert row["evidence"] == "stable" and "one replicate" in row["note"] and "not read as significant" in row["note"]
    assert to_json(row)["evidence"] == "stable"
    (two,) = corrected([comparison_row("coopeval", "NoMechanism/PublicGoods", "Mean", "a", "b", estimate, replicates=2)])
    assert two["evidence"] == "significant"


def test_a_bootstrap_p_below_what_three_clusters_can_show_is_untestable():
    """Fitness or DR from the tables' bootstrap over 3 clusters: every replicate difference is
    positive, so p = 2 / (999 + 1) = 0.002, far below 2 / 2^3 = 0.25, the smallest p any test of
    3 pairs can reach; the row is untestable at this size, and says so."""
    estimate = replicate_test(1.0, np.linspace(0.5, 1.5, 999), n_pairs=3, n_clusters=3, method="tables' bootstrap")
    assert estimate.p_value == pytest.approx(0.002)
    (row,) = corrected([comparison_row("coopeval", "NoMechanism/PublicGoods", "DR", "a", "b", estimate, replicates=3)])
    assert row["evidence"] == "untestable"
    assert "n = 3 clusters" in row["note"] and "0.25" in row["note"] and "below what 3 clusters can show" in row["note"]


def test_population_rows_carry_the_verdict_of_their_replicates():
    """Gossip/evolution rows: 7 replicates differing by 0.1 ± noise are significant (p = 2/2^7
    after a family of one); 3 replicates are untestable whatever they show."""
    import polars as pl

    def frame(k: int) -> pl.DataFrame:
        noise = [0.01 * i for i in range(k)]
        return pl.DataFrame({"scope": ["s"] * (2 * k), "model": ["m1"] * k + ["m2"] * k, "replicate": list(range(k)) * 2,
                             "x": [0.6 + e for e in noise] + [0.5 - e for e in noise]})  # fmt: skip

    (seven,) = population_rows(frame(7), study="gossip", scope_columns=["scope"], population_column="model", replicate_column="replicate", metrics=["x"])
    assert seven["p_adjusted"] == pytest.approx(2 / 2**7) and seven["evidence"] == "significant"
    (three,) = population_rows(frame(3), study="gossip", scope_columns=["scope"], population_column="model", replicate_column="replicate", metrics=["x"])
    assert three["evidence"] == "untestable" and "n = 3 clusters" in three["note"]
