"""Rank grouping (5 %), bold and grey rules of docs/protocol/tables.md step 7."""

from __future__ import annotations

import pytest

from coopeval.studies.coopeval.tables.ranks import descending, group_ranks, is_bold, is_grey


def test_group_compares_with_its_first_value_not_the_previous() -> None:
    # 0.97 is within 5 % of 1.00; 0.94 is within 5 % of 0.97 but 6 % below 1.00 → new group
    values = {"a": 1.00, "b": 0.97, "c": 0.94, "d": 0.50}
    assert group_ranks(values, descending=True) == {"a": 1, "b": 1, "c": 3, "d": 4}


def test_next_rank_is_previous_rank_plus_group_size() -> None:
    values = {"a": 10.0, "b": 9.8, "c": 9.6, "d": 5.0, "e": 4.9, "f": 1.0}
    # group {a, b, c} (|9.6 − 10|/10 = 4 %) → rank 1; {d, e} → 4; {f} → 6
    assert group_ranks(values, descending=True) == {"a": 1, "b": 1, "c": 1, "d": 4, "e": 4, "f": 6}


def test_zero_start_uses_absolute_gap() -> None:
    # ascending (DR-like order); v = 0 → absorb while |w − 0| ≤ 0.05
    values = {"a": 0.0, "b": 0.04, "c": 0.06, "d": 1.0}
    assert group_ranks(values, descending=False) == {"a": 1, "b": 1, "c": 3, "d": 4}


def test_negative_values_use_absolute_denominator() -> None:
    # descending: −1.00 first; −1.04 is 4 % away → same group; −1.2 is 20 % away
    values = {"a": -1.2, "b": -1.0, "c": -1.04}
    assert group_ranks(values, descending=True) == {"b": 1, "c": 1, "a": 3}


def test_dr_ranks_ascending_with_ties() -> None:
    # docs/protocol/evaluation.md#deviation-ratings: four types tied at the top get rank 2.5; the table sorts DR ascending
    values = {"a": 2.5, "b": 2.5, "c": 2.5, "d": 2.5, "e": 5.5, "f": 5.5}
    ranks = group_ranks(values, descending=False)
    assert ranks == {"a": 1, "b": 1, "c": 1, "d": 1, "e": 5, "f": 5}
    n = len(ranks)
    assert [is_bold(ranks[k]) for k in "abcdef"] == [True] * 4 + [False] * 2
    assert [is_grey(ranks[k], n) for k in "abcdef"] == [False] * 4 + [True] * 2


def test_exact_boundary_is_plain_float_arithmetic() -> None:
    # |0.95 − 1.0| / 1.0 evaluates to 0.05000000000000004 > 0.05 in binary floating point
    assert group_ranks({"a": 1.0, "b": 0.95}, descending=True) == {"a": 1, "b": 2}
    assert group_ranks({"a": 1.0, "b": 0.951}, descending=True) == {"a": 1, "b": 1}


def test_nan_is_not_ranked() -> None:
    assert group_ranks({"a": 1.0, "b": float("nan")}, descending=True) == {"a": 1}


@pytest.mark.parametrize(
    ("rank", "n", "bold", "grey"),
    [(1, 6, True, False), (2, 6, True, False), (3, 6, False, False), (5, 6, False, True), (6, 6, False, True),
     (4, 5, False, True), (3, 4, False, False), (4, 4, False, False)],
)
def test_bold_and_grey(rank: int, n: int, bold: bool, grey: bool) -> None:
    assert is_bold(rank) is bold
    assert is_grey(rank, n) is grey


def test_sort_directions() -> None:
    assert all(descending(m) for m in ("Mean", "Fitness", "NS", "WD"))
    assert not descending("DR") and not descending("DR_exact")
