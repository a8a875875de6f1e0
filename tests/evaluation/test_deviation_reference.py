"""The strictest deviation ratings equal the straightforward face test's
(:mod:`tests.evaluation.reference_deviation`: one face LP per tight row, no shortcuts) after
rounding, on random metagames: integer and real payoffs, 2 to 4 seats, exactly seat-symmetric
tensors (one face LP per type) and tensors with a 1e−13 asymmetry (one face LP per row), with and
without the dual shortcut (Marris et al. 2025, arXiv 2502.11645;
docs/protocol/evaluation.md#deviation-ratings)."""

from __future__ import annotations

from unittest import mock

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.evaluation import deviation
from coopeval.evaluation.deviation import DeviationRatingError, deviation_ratings
from tests.evaluation.reference_deviation import reference_strictest_ratings
from tests.strategies import metagames

SMALL = metagames(min_types=2, max_profiles=64)
REAL = metagames(min_types=2, max_profiles=64, values=st.floats(-10, 10, allow_nan=False).map(lambda v: round(v, 3)))
LP = settings(max_examples=40, deadline=None)


@LP
@given(tensor=st.one_of(SMALL, REAL), shortcut=st.booleans())
def test_strictest_ratings_equal_the_reference(tensor: np.ndarray, shortcut: bool) -> None:
    expected = reference_strictest_ratings(tensor)
    with mock.patch.object(deviation, "BINDING_DUAL", deviation.BINDING_DUAL if shortcut else np.inf):
        result = deviation_ratings(tensor)
    assert result.ratings == expected
    assert result.n_main_lps == len(set(expected))


@LP
@given(tensor=metagames(min_players=3, max_players=3, min_types=2, max_types=3), data=st.data())
def test_a_tiny_asymmetry_tests_every_row(tensor: np.ndarray, data: st.DataObject) -> None:
    cell = tuple(data.draw(st.lists(st.integers(0, tensor.shape[0] - 1), min_size=3, max_size=3), label="cell"))
    tensor = tensor.copy()
    tensor[cell] += 1e-13  # below every tolerance, but no longer bit-for-bit seat-symmetric
    assert not deviation._exactly_seat_symmetric(tensor) or cell[1] == cell[2]
    try:
        result = deviation_ratings(tensor)
    except DeviationRatingError:
        return  # the seat-spread check may refuse it; the reference has no such check
    assert result.ratings == reference_strictest_ratings(tensor)
