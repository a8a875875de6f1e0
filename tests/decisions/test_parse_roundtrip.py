"""Answer parsing round-trips every valid distribution (docs/protocol/answers.md#output-formats, #parsing): integer percents
summing to exactly 100, written in any key order and spacing, inside prose or a code fence,
after earlier drafts, parse back to the same distribution in token order."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.decisions import AnswerError, parse_answer
from coopeval.decisions.formats import ActionDistribution


@st.composite
def distributions(draw: st.DrawFn) -> tuple[tuple[str, ...], dict[str, int]]:
    """Tokens A0..A{n-1} (2 ≤ n ≤ 6) and integer percents summing to exactly 100."""
    n = draw(st.integers(2, 6))
    cuts = sorted(draw(st.lists(st.integers(0, 100), min_size=n - 1, max_size=n - 1)))
    bounds = [0, *cuts, 100]
    tokens = tuple(f"A{i}" for i in range(n))
    return tokens, {t: bounds[i + 1] - bounds[i] for i, t in enumerate(tokens)}


def render(answer: dict[str, int], order: list[str], style: int) -> str:
    """The answer as JSON, keys in ``order``, in one of several response styles."""
    obj = {k: answer[k] for k in order}
    compact = json.dumps(obj, separators=(",", ":"))
    spaced = json.dumps(obj, indent=2)
    return [
        compact,
        f"I weigh the options.\n{spaced}",
        f"Reasoning first.\n```json\n{spaced}\n```\nThat is my answer.",
        f'Draft: {{"A0": 100}}\nOn reflection the final answer is {compact}',
    ][style]


@settings(max_examples=50, deadline=None)
@given(case=distributions(), data=st.data())
def test_every_valid_distribution_round_trips(case: tuple[tuple[str, ...], dict[str, int]], data: st.DataObject) -> None:
    tokens, answer = case
    order = data.draw(st.permutations(list(tokens)), label="key order")
    style = data.draw(st.integers(0, 3), label="style")
    parsed = parse_answer(ActionDistribution(tokens), render(answer, order, style))
    assert parsed == answer
    assert list(parsed) == list(tokens)
    assert all(type(v) is int for v in parsed.values())


@settings(max_examples=50, deadline=None)
@given(case=distributions(), data=st.data())
def test_off_by_one_totals_are_rejected(case: tuple[tuple[str, ...], dict[str, int]], data: st.DataObject) -> None:
    tokens, answer = case
    key = data.draw(st.sampled_from(tokens), label="key")
    delta = data.draw(st.sampled_from([-1, 1]).filter(lambda d: 0 <= answer[key] + d <= 100), label="delta")
    broken = {**answer, key: answer[key] + delta}
    with pytest.raises(AnswerError):
        parse_answer(ActionDistribution(tokens), json.dumps(broken))
