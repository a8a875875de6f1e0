"""The generic comparison statistics: Holm / BH, letters, MDE and the paired cluster test."""

from __future__ import annotations

import numpy as np
import pytest

from coopeval.comparison.letters import letter_groups
from coopeval.comparison.multiplicity import adjust_p_values
from coopeval.comparison.paired import paired_cluster_test, replicate_test, resampling_p_value
from coopeval.comparison.power import mde_multiplier, minimum_detectable_difference


def test_holm_on_hand_values() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 (m = 4): 4·0.005 = 0.02, 3·0.01 = 0.03, 2·0.03 = 0.06, 1·0.04 = 0.04 → running max
    assert adjust_p_values([0.01, 0.04, 0.03, 0.005], "holm") == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # a None (no test) is kept and does not count in m: m = 2 → 2·0.2 = 0.4, max(0.4, 0.5) = 0.5
    assert adjust_p_values([0.5, None, 0.2], "holm") == [pytest.approx(0.5), None, pytest.approx(0.4)]
    assert adjust_p_values([0.6, 0.7], "holm") == pytest.approx([1.0, 1.0])


def test_bh_on_hand_values() -> None:
    # sorted 0.005, 0.01, 0.03, 0.04 (m = 4): m·p/rank = 0.02, 0.02, 0.04, 0.04 → running min from the top
    assert adjust_p_values([0.01, 0.04, 0.03, 0.005], "bh") == pytest.approx([0.02, 0.04, 0.04, 0.02])
    # 0.02·3/1 = 0.06, 0.03·3/2 = 0.045, 0.9·3/3 = 0.9 → min from the top: 0.045, 0.045, 0.9
    assert adjust_p_values([0.9, 0.02, 0.03], "bh") == pytest.approx([0.9, 0.045, 0.045])


def test_unknown_correction_and_bad_p_values_are_refused() -> None:
    with pytest.raises(ValueError, match="correction: 'bonferroni'"):
        adjust_p_values([0.1], "bonferroni")
    with pytest.raises(ValueError, match="outside"):
        adjust_p_values([1.5], "holm")


def test_letters_share_a_group_exactly_when_not_significant() -> None:
    ranked = ["A", "B", "C", "D"]
    significant = {("A", "C"), ("A", "D"), ("B", "D")}
    letters = letter_groups(ranked, significant)
    assert letters == {"A": "a", "B": "ab", "C": "bc", "D": "c"}
    for i, x in enumerate(ranked):
        for y in ranked[i + 1 :]:
            share = bool(set(letters[x]) & set(letters[y]))
            assert share == ((x, y) not in significant)
    assert letter_groups(ranked, []) == dict.fromkeys(ranked, "a")
    assert letter_groups(["A", "B", "C"], [("A", "B"), ("B", "C"), ("A", "C")]) == {"A": "a", "B": "b", "C": "c"}


def test_mde_is_z_quantiles_times_the_standard_error() -> None:
    # z_0.975 = 1.959964, z_0.8 = 0.841621 (standard normal table)
    assert mde_multiplier() == pytest.approx(1.959964 + 0.841621, abs=1e-6)
    assert minimum_detectable_difference(0.5) == pytest.approx(0.5 * 2.801585, abs=1e-6)
    assert minimum_detectable_difference(None) is None


def test_paired_test_point_estimate_standard_error_and_exact_p() -> None:
    a = np.array([3.0, 1.0, 2.0, 5.0])
    b = np.array([1.0, 1.5, 0.0, 2.0])  # d = 2, −0.5, 2, 3; Σ = 6.5
    est = paired_cluster_test(a, b)
    assert est.delta == pytest.approx(6.5)
    assert est.se == pytest.approx(2.0 * np.std([2.0, -0.5, 2.0, 3.0], ddof=1))
    # exact sign flips: |Σ ± d| ≥ 6.5 for (+,+,+,+), (+,−,+,+) and their negatives: 4 of 16
    assert est.p_value == pytest.approx(4 / 16)
    assert est.ci_low is not None and est.ci_high is not None and est.ci_low <= 6.5 <= est.ci_high
    assert est.n_clusters == 4 and "exact, 16 sign patterns" in est.method


def test_replicate_test_inverts_the_percentile_interval() -> None:
    reps = np.concatenate([np.full(90, 1.0), np.full(10, -1.0)])
    est = replicate_test(0.8, reps, n_pairs=5, n_clusters=5, method="m")
    # 10 of B = 100 replicates ≤ 0, the observed data counted as one more: 2 · (10 + 1) / 101
    assert est.p_value == pytest.approx(2 * 11 / 101)
    assert est.ci_low == -1.0 and est.ci_high == 1.0
    assert replicate_test(0.8, reps, n_pairs=1, n_clusters=1, method="m").ci_low is None


def test_resampling_p_values_are_never_below_one_over_b_plus_one() -> None:
    # every bootstrap replicate on one side of 0 gave p = 0 before (Phipson & Smyth 2010)
    est = replicate_test(0.5, np.linspace(0.1, 0.9, 99), n_pairs=3, n_clusters=3, method="m")
    assert est.p_value == pytest.approx(2 / 100)
    assert resampling_p_value(0, 99, 99) == pytest.approx(2 / 100)
    assert resampling_p_value(40, 60, 99) == pytest.approx(0.82)  # 2 · (40 + 1) / 100
    assert resampling_p_value(60, 60, 99) == 1.0  # 2 · 61 / 100, capped
    with pytest.raises(ValueError, match="n_extreme_low: 100"):
        resampling_p_value(100, 0, 99)
    with pytest.raises(ValueError, match="n_resamples: 0"):
        resampling_p_value(0, 0, 0)
    # random sign flips (2^20 patterns > 99 resamples): of 99 random patterns none reaches the
    # all-positive observed sum of distinct differences (only the two constant-sign patterns
    # do, 2 of 2^20), so p = 2 · (0 + 1) / (99 + 1)
    d = np.arange(1.0, 21.0)
    est = paired_cluster_test(d, np.zeros(20), n_resamples=99, seed=3)
    assert "99 random sign patterns" in est.method
    assert est.p_value == pytest.approx(2 / 100)


def test_cluster_bootstrap_covers_a_known_difference() -> None:
    """200 seeded synthetic tensors with a known Mean difference: the 95 % interval covers it in
    at least 93 % of them. Each draw: 40 replicates × 5 co-player profiles; a cluster's scores
    share a replicate effect (so observations within a cluster are correlated) and A's true
    Mean exceeds B's by 0.3 on every profile."""
    truth = 0.3
    covered = 0
    n_profiles, n_replicates = 5, 40
    profile_means = np.linspace(0.0, 2.0, n_profiles)
    for draw in range(200):
        rng = np.random.default_rng(draw)
        shared = rng.normal(0.0, 1.0, size=(n_replicates, n_profiles))  # cluster effect, same for A and B
        a = profile_means + truth + shared + rng.normal(0.0, 0.5, size=(n_replicates, n_profiles))
        b = profile_means + shared + rng.normal(0.0, 0.5, size=(n_replicates, n_profiles))
        weight = 1.0 / (n_profiles * n_replicates)  # Mean = average over (profile, replicate) entries
        est = paired_cluster_test((a * weight).ravel(), (b * weight).ravel(), n_resamples=999, seed=draw)
        assert est.ci_low is not None and est.ci_high is not None
        covered += est.ci_low <= truth <= est.ci_high
    assert covered >= 186, f"coverage {covered}/200"


def test_differences_equal_up_to_float_noise_are_constant_with_no_mde() -> None:
    a = np.array([0.1 + 0.2, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3])  # 0.1 + 0.2 = 0.30000000000000004
    b = np.zeros(7)
    est = paired_cluster_test(a, b)
    assert est.delta == pytest.approx(2.1)
    assert est.ci_low == est.ci_high == est.delta  # the interval is the point, not a "BCa" 5e-15 wide
    assert est.se == 0.0 and est.mde is None
    assert est.note is not None and "within 1e-09 relative" in est.note and "standard error 0" in est.note
    constant = paired_cluster_test(np.full(6, 1.0), np.zeros(6))
    assert constant.mde is None and "degenerate jackknife" not in (constant.note or "")


def test_no_mde_when_too_few_clusters_for_significance() -> None:
    # K = 4: the exact sign-flip test's smallest p-value is 2 / 2^4 = 0.125 > 0.05
    few = paired_cluster_test(np.array([3.0, 1.0, 2.0, 5.0]), np.array([1.0, 1.5, 0.0, 2.0]))
    assert few.mde is None and few.note is not None and "smallest possible p-value is 0.125 > alpha = 0.05" in few.note
    # K = 5: 2 / 32 = 0.0625 still above 0.05; K = 6: 2 / 64 = 0.03125, the MDE is 2.80158 · SE
    d5 = np.array([2.0, -0.5, 2.0, 3.0, 1.0])
    assert paired_cluster_test(d5, np.zeros(5)).mde is None
    d6 = np.array([2.0, -0.5, 2.0, 3.0, 1.0, 0.5])
    six = paired_cluster_test(d6, np.zeros(6))
    assert six.mde == pytest.approx(2.801585 * np.sqrt(6) * np.std(d6, ddof=1), rel=1e-6) and six.note is None
    assert paired_cluster_test(d6, np.zeros(6), alpha=0.01).mde is None  # 0.03125 > 0.01


def test_replicate_test_with_constant_replicates_reports_no_mde() -> None:
    est = replicate_test(0.5, np.full(100, 0.5), n_pairs=8, n_clusters=8, method="m")
    assert est.se == 0.0 and est.mde is None and est.note == "standard error 0: no minimum detectable difference"
