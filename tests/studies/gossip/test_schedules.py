"""Schedules equal the spec's lists (docs/protocol/gossip.md#matching, #testbeds, #greedy-defector)."""

from __future__ import annotations

import numpy as np
import pytest

from coopeval.studies.gossip.names import AGENT_NAMES, MAX_NAME
from coopeval.studies.gossip.schedules import (
    ScheduleError,
    align_sweep,
    check_alternating,
    circle_schedule,
    market_schedule,
    max_schedule,
    random_alternating,
)

DONATION_SPEC = """
 1 John→Kate      2 Jack→John      3 John→Emma      4 Luke→John      5 John→Mary      6 Alice→John
 7 John→Bob       8 Charlie→John   9 Kate→Jack     10 Emma→Kate     11 Kate→Luke     12 Mary→Kate
13 Kate→Alice    14 Bob→Kate      15 Kate→Charlie  16 Jack→Emma     17 Luke→Jack     18 Jack→Mary
19 Alice→Jack    20 Jack→Bob      21 Charlie→Jack  22 Emma→Luke     23 Mary→Emma     24 Emma→Alice
25 Bob→Emma      26 Emma→Charlie  27 Luke→Mary     28 Alice→Luke    29 Luke→Bob      30 Charlie→Luke
31 Mary→Alice    32 Bob→Mary      33 Mary→Charlie  34 Alice→Bob     35 Charlie→Alice 36 Bob→Charlie
"""

TRUST_SPEC = "1 John→Kate, 2 Jack→John, 3 John→Emma, 4 Luke→John, 5 Kate→Jack, 6 Emma→Kate, 7 Kate→Luke, 8 Jack→Emma, 9 Luke→Jack, 10 Emma→Luke"
PD_SPEC = "1 Kate–Luke, 2 Jack–Emma, 3 John–Luke, 4 Kate–Jack, 5 John–Emma, 6 Luke–Jack, 7 John–Jack, 8 Emma–Kate, 9 John–Kate, 10 Emma–Luke"
MAX_SPEC = "1 Max→John    2 Kate→Max    3 Max→Jack    4 Emma→Max 5 Max→Luke    6 Mary→Max    7 Max→Alice   8 Bob→Max"


def _parse(text: str, sep: str) -> list[tuple[str, str]]:
    tokens = text.replace(",", " ").split()
    return [tuple(tok.split(sep)) for tok in tokens if sep in tok]  # type: ignore[misc]


def _named(schedule: list[tuple[int, int]], names: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(names[a], names[b]) for a, b in schedule]


def test_donation_align_sweep_equals_spec() -> None:
    expected = _parse(DONATION_SPEC, "→")
    assert len(expected) == 36
    assert _named(align_sweep(9), AGENT_NAMES[:9]) == expected


def test_trust_align_sweep_equals_spec() -> None:
    assert _named(align_sweep(5), AGENT_NAMES[:5]) == _parse(TRUST_SPEC, "→")


def test_pd_circle_schedule_equals_spec() -> None:
    assert _named(circle_schedule(5), AGENT_NAMES[:5]) == _parse(PD_SPEC, "–")


def test_max_schedule_equals_spec() -> None:
    names = (*AGENT_NAMES[:8], MAX_NAME)
    assert _named(max_schedule(8, 8), names) == _parse(MAX_SPEC, "→")
    assert _named(max_schedule(4, 4, pd=True), (*AGENT_NAMES[:4], MAX_NAME)) == [
        ("Max", "John"), ("Max", "Kate"), ("Max", "Jack"), ("Max", "Emma"),
    ]


def test_sweep_roles_and_counts() -> None:
    schedule = align_sweep(9)
    first_role = {}
    for d, r in schedule:
        first_role.setdefault(d, "donor")
        first_role.setdefault(r, "recipient")
    donors = [AGENT_NAMES[i] for i, role in sorted(first_role.items()) if role == "donor"]
    assert donors == ["John", "Jack", "Luke", "Alice", "Charlie"]
    for i in range(9):
        assert sum(d == i for d, _ in schedule) == 4
        assert sum(r == i for _, r in schedule) == 4


@pytest.mark.parametrize("n", range(2, 13))
def test_random_alternating_meets_constraints_and_is_seeded(n: int) -> None:
    a = random_alternating(n, np.random.default_rng(7))
    check_alternating(a, n)
    assert a == random_alternating(n, np.random.default_rng(7))
    check_alternating(align_sweep(n), n)


def test_random_alternating_differs_from_sweep() -> None:
    assert random_alternating(9, np.random.default_rng(1)) != align_sweep(9)


def test_check_alternating_rejects_repeated_role() -> None:
    with pytest.raises(ScheduleError):
        check_alternating([(0, 1), (0, 2), (2, 1)], 3)


def test_too_few_agents() -> None:
    with pytest.raises(ScheduleError):
        align_sweep(1)


def test_market_schedule_every_pair_once_and_seeded() -> None:
    s = market_schedule(range(6), range(6, 12), np.random.default_rng(3))
    assert sorted(s) == [(i, j) for i in range(6) for j in range(6, 12)]
    assert s == market_schedule(range(6), range(6, 12), np.random.default_rng(3))
