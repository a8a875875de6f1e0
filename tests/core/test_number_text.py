"""coopeval.core.prompts.number_text: numbers as prompts state them (issue 13 kind 11b)."""

from __future__ import annotations

import pytest

from coopeval.core.prompts import number_text


@pytest.mark.parametrize(
    ("value", "text"),
    [(3.0, "3"), (-2, "-2"), (1.5, "1.5"), (0.333, "0.333"), (1.234, "1.234"), (1e-7, "1e-07"),
     (1.1 * 3 * 3 / 3, "3.3"), (123456789.0, "123456789"), (2.5e20, "2.5e+20")],
)
def test_stated_exactly_to_twelve_digits(value: float, text: str) -> None:
    assert number_text(value) == text


def test_old_display_rounding_is_gone() -> None:
    assert number_text(1.234) != f"{1.234:.2f}" and float(number_text(2 / 3)) == pytest.approx(2 / 3, rel=1e-12)


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_non_finite_is_refused(value: float) -> None:
    with pytest.raises(ValueError, match="cannot state"):
        number_text(value)
