"""Seat-balanced roster samples (docs/protocol/tournament.md#match-up-samples): every agent sits
every seat equally often, rosters are distinct, the sample is seeded and reproducible, all
rosters are played when there are few, and the covering sample observes every cell of the
symmetric metagame tensor."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest

from coopeval.core.errors import ConfigError
from coopeval.estimate.roster import reduce_roster
from coopeval.pipeline.config import validate_config
from coopeval.studies.coopeval.cells import build_cells
from coopeval.studies.coopeval.rosters import is_sampled, roster_sample, rosters, seat_counts
from tests.helpers import make_cell, play_bots

CASES = [(4, 5, 256), (4, 8, 256), (4, 8, 2000), (3, 6, 100), (2, 8, 64), (5, 4, 300)]


@pytest.mark.parametrize(("agents", "seats", "cap"), CASES)
def test_every_agent_sits_every_seat_equally_often(agents: int, seats: int, cap: int) -> None:
    sample = rosters(agents, seats, cap, 7, "public_goods", seats, 1)
    assert is_sampled(agents, seats, cap)
    assert len(sample) == len(set(sample)) <= cap
    counts = seat_counts(sample, agents)
    assert counts.shape == (agents, seats)
    assert (counts == counts[0, 0]).all() and counts[0, 0] * agents == len(sample)
    # brute-force recount, independent of seat_counts
    assert {Counter(r[s] for r in sample)[a] for a in range(agents) for s in range(seats)} == {len(sample) // agents}


def test_seeded_and_reproducible() -> None:
    first = rosters(4, 8, 256, 7, "public_goods", 8, 1)
    assert first == rosters(4, 8, 256, 7, "public_goods", 8, 1)
    assert first != rosters(4, 8, 256, 8, "public_goods", 8, 1)  # another seed
    assert first != rosters(4, 8, 256, 7, "public_goods", 8, 2)  # another replicate


@pytest.mark.parametrize(("agents", "seats", "cap"), [(4, 5, 300), (4, 8, 2000), (3, 6, 200)])
def test_the_covering_sample_observes_every_co_player_multiset(agents: int, seats: int, cap: int) -> None:
    sample = rosters(agents, seats, cap, 7, "public_goods", seats, 1)
    seen = {tuple(sorted(r)) for r in sample}
    assert seen == set(itertools.combinations_with_replacement(range(agents), seats))
    assert len(sample) < agents**seats


def test_all_rosters_when_few() -> None:
    assert rosters(3, 3, None, 7) == list(itertools.product(range(3), repeat=3))
    assert rosters(3, 3, 27, 7) == list(itertools.product(range(3), repeat=3))  # the cap does not bind
    assert not is_sampled(3, 3, 27) and is_sampled(3, 3, 26)


def test_a_cap_below_agents_times_seats_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 20 match-ups"):
        roster_sample(4, 5, 19, np.random.default_rng(0))
    with pytest.raises(ConfigError, match="max_matchups: 10 is below agents × seats = 4 × 5"):
        make_cell("NoMechanism", "public_goods", BOTS, config={"max_matchups": 10, "game_params": {"public_goods": {"players": 5}}})


BOTS = ["always-cooperate", "always-defect", "tit-for-tat", "uniform-random"]
BOT_NAMES = [f"bot/{b}" for b in BOTS]


def test_cell_ids_change_only_where_the_cap_binds() -> None:
    plain = make_cell("NoMechanism", "prisoners_dilemma", BOTS)
    capped = make_cell("NoMechanism", "prisoners_dilemma", BOTS, config={"max_matchups": 16})
    assert capped == plain and "max_matchups" not in plain  # 4^2 = 16 rosters: the cap does not bind
    five = make_cell("NoMechanism", "public_goods", BOTS, config={"max_matchups": 256, "game_params": {"public_goods": {"players": 5}}})
    assert five["max_matchups"] == 256 and five["game_params"] == {"public_goods": {"players": 5}}["public_goods"]
    assert reduce_roster("coopeval", five) is None  # the estimate plays the sample as it is


def test_a_played_cell_plays_the_sample() -> None:
    config = {"max_matchups": 300, "game_params": {"public_goods": {"players": 5}}}
    tables = play_bots("NoMechanism", "public_goods", BOTS, config=config)
    matchups = tables["matchups"]
    expected = rosters(4, 5, 300, 42, "public_goods", 5, 1)
    assert matchups.height == len(expected) == 264  # the covering sample of 4 agents in 5 seats
    assert sorted(matchups["matchup_id"]) == sorted("|".join(BOT_NAMES[i] for i in r) for r in expected)
    decisions = tables["decisions"]
    by_seat = Counter(zip(decisions["agent"], decisions["seat"], strict=True))
    assert len(by_seat) == 4 * 5 and set(by_seat.values()) == {264 // 4}  # each bot in each seat 66 times


def test_a_variant_sets_game_params_of_listed_games_only() -> None:
    variant = {"mechanism": "NoMechanism", "name": "n5", "params": {}, "game_params": {"public_goods": {"players": 5}}}
    raw = {"agents": [{"model": "bot/always-defect"}], "mechanisms": ["NoMechanism"], "variants": [variant]}
    with pytest.raises(ConfigError, match=r"variants\[0\]\.game_params\.public_goods: public_goods is not listed in games"):
        validate_config({**raw, "games": ["prisoners_dilemma"]})
    with pytest.raises(ConfigError, match="players"):
        bad = {**variant, "game_params": {"public_goods": {"players": 11}}}
        validate_config({**raw, "games": ["public_goods"], "variants": [bad]})
    config = validate_config({**raw, "games": ["public_goods"]})
    sizes = sorted((c["variant"], c["game_params"].get("players", 3)) for c in build_cells(config))
    assert sizes == [("default", 3), ("n5", 5)]


@pytest.mark.parametrize("mechanism", ["Mediation", "Contracting"])
def test_design_mechanisms_play_the_sample(mechanism: str) -> None:
    """3 bots in 4 seats: 81 rosters, capped at 30; designs stay one per seated agent (3 × 4)."""
    config = {"max_matchups": 30, "game_params": {"public_goods": {"players": 4}}}
    tables = play_bots(mechanism, "public_goods", ["tit-for-tat", "always-defect", "always-cooperate"], config=config)
    sample = rosters(3, 4, 30, 42, "public_goods", 4, 1)
    assert tables["matchups"].height == len(sample) <= 30
    kinds = Counter(tables["decisions"]["kind"])
    assert kinds["action"] == 4 * len(sample) and sum(v for k, v in kinds.items() if k.endswith("_design")) == 12
