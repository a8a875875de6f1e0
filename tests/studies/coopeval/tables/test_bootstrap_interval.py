"""The bootstrap interval is the central 95 % percentile interval (2.5 % and 97.5 %), with
numpy's linear interpolation, NaN replicates ignored (issue 4 §5; issue 9 item 7)."""

from __future__ import annotations

import numpy as np
import pytest

from coopeval.studies.coopeval.tables.bootstrap import percentile_interval


def test_default_level_is_95_percent_on_0_to_100() -> None:
    # 101 equally spaced values 0..100: the p-th percentile is exactly p.
    assert percentile_interval(np.arange(101.0)) == pytest.approx((2.5, 97.5), abs=1e-12)


def test_default_level_on_41_values() -> None:
    # 0..40: position 0.025 * 40 = 1 and 0.975 * 40 = 39, no interpolation needed.
    assert percentile_interval(np.arange(41.0)) == pytest.approx((1.0, 39.0), abs=1e-12)


def test_interpolates_between_order_statistics() -> None:
    # 0, 10, 20, 30: position 0.025 * 3 = 0.075 -> 0.75; 0.975 * 3 = 2.925 -> 29.25.
    low, high = percentile_interval(np.array([30.0, 0.0, 20.0, 10.0]))
    assert low == pytest.approx(0.75, abs=1e-12) and high == pytest.approx(29.25, abs=1e-12)


def test_other_levels_and_nans() -> None:
    assert percentile_interval(np.arange(101.0), level=0.9) == pytest.approx((5.0, 95.0), abs=1e-12)
    assert percentile_interval(np.arange(101.0), level=0.5) == pytest.approx((25.0, 75.0), abs=1e-12)
    assert percentile_interval(np.array([np.nan, *range(101)], dtype=float)) == pytest.approx((2.5, 97.5), abs=1e-12)
