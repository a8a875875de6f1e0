"""Per-position random streams (docs/protocol/engineering.md#randomness): a stream depends only on the global seed
and its position, never on which other streams exist, in which order they are drawn, or on
the roster of the cell (its agents' order)."""

from __future__ import annotations

import functools

import numpy as np
import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.core.rng import rng_for, seed_int_for
from tests.helpers import play_bots

PARTS = st.lists(st.text(max_size=6) | st.integers(0, 2**40), min_size=1, max_size=6).map(tuple)


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(0, 2**31), positions=st.lists(PARTS, min_size=2, max_size=5, unique=True), data=st.data())
def test_streams_do_not_depend_on_draw_order(seed: int, positions: list[tuple], data: st.DataObject) -> None:
    first = {p: rng_for(seed, *p).random(3).tolist() for p in positions}
    order = data.draw(st.permutations(positions), label="order")
    interleaved = {}
    generators = {p: rng_for(seed, *p) for p in order}
    for p in order:
        interleaved[p] = generators[p].random(3).tolist()
    assert interleaved == first
    assert {p: seed_int_for(seed, *p) for p in order} == {p: seed_int_for(seed, *p) for p in positions}
    assert all(0 <= seed_int_for(seed, *p) < 2**31 for p in positions)


def test_streams_differ_by_seed_and_position() -> None:
    base = rng_for(42, "prisoners_dilemma", "Repetition", 1, "a|b", 3, 0, "action").random()
    assert rng_for(42, "prisoners_dilemma", "Repetition", 1, "a|b", 3, 0, "action").random() == base
    assert rng_for(43, "prisoners_dilemma", "Repetition", 1, "a|b", 3, 0, "action").random() != base
    assert rng_for(42, "prisoners_dilemma", "Repetition", 1, "a|b", 3, 1, "action").random() != base
    assert rng_for(42, "prisoners_dilemma", "Repetition", 1, "b|a", 3, 0, "action").random() != base


ROSTER = ("uniform-random", "always-cooperate", "tit-for-tat", "always-defect")


@functools.cache
def draws(roster: tuple[str, ...], mechanism: str) -> dict[tuple, tuple[float, int]]:
    """(matchup, match, round, seat, kind) -> (draw, action) of one played cell."""
    params = {"num_rounds": 3} if mechanism == "Repetition" else {}
    decisions = play_bots(mechanism, "prisoners_dilemma", list(roster), **params)["decisions"]
    keys = decisions.select("matchup_id", "match_id", "round", "seat", "kind", "draw", "action").sort(pl.all())
    return {row[:5]: row[5:] for row in keys.iter_rows()}


@settings(max_examples=8, deadline=None)
@given(order=st.permutations(ROSTER), mechanism=st.sampled_from(["Repetition", "NoMechanism"]))
def test_draws_are_independent_of_roster_order(order: list[str], mechanism: str) -> None:
    reference = draws(ROSTER, mechanism)
    permuted = draws(tuple(order), mechanism)
    assert permuted == reference
    # The uniform-random bot's actions really come from these draws (50/50: A0 iff draw < 0.5).
    random_seat = [(k, v) for k, v in reference.items() if k[0].split("|")[k[3] - 1] == "bot/uniform-random"]
    assert random_seat and all(action == int(draw >= 0.5) for _, (draw, action) in random_seat)
    assert len({round(d, 12) for d, _ in reference.values()}) > 0.9 * len(reference)


def test_adding_an_agent_keeps_existing_draws() -> None:
    small = draws(ROSTER[:3], "Repetition")
    big = draws(ROSTER, "Repetition")
    assert small.items() <= big.items()
    assert len(big) > len(small)


def test_draws_are_uniform_floats_in_unit_interval() -> None:
    values = np.array([d for d, _ in draws(ROSTER, "Repetition").values()])
    assert ((values >= 0) & (values < 1)).all()
