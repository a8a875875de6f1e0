"""Selection ties (issue 21 item 3): the population is shuffled by a seeded stream and sorted
by score with stable ties, so equal scores survive in the shuffled order, which varies with the
seed; the shuffle is recorded (``evo_strategies.tiebreak``)."""

from __future__ import annotations

import asyncio

from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from coopeval.core.rng import rng_for
from coopeval.studies.evolution.bots import ConstantFraction
from coopeval.studies.evolution.runner import StepRecords
from coopeval.studies.evolution.selection import ranks, shuffled_positions, truncation_survivors

from .helpers import bot_agents, make_run, settings


@hsettings(max_examples=200, deadline=None)
@given(scores=st.lists(st.sampled_from([0.0, 1.0, 2.5, 7.0]), min_size=2, max_size=16), seed=st.integers(0, 2**32 - 1))
def test_truncation_is_a_stable_sort_of_the_shuffled_population(scores: list[float], seed: int) -> None:
    import numpy as np

    positions = shuffled_positions(len(scores), np.random.default_rng(seed))
    shuffled = sorted(range(len(scores)), key=lambda i: positions[i])  # the population in shuffled order
    expected = sorted(shuffled, key=lambda i: -scores[i])  # Python's sort is stable
    assert truncation_survivors(scores, positions) == expected[: len(scores) // 2]
    assert [expected.index(i) + 1 for i in range(len(scores))] == ranks(scores, positions)


def test_equal_scores_survive_by_the_seeded_shuffle_not_by_construction_order() -> None:
    seen = set()
    for seed in range(12):
        run = make_run(settings(protocol="vh", invasion_per_generation=0, matrix_per_generation=0), bot_agents(ConstantFraction(50)), seed=seed)
        members, records = asyncio.run(run.step(1, None))
        assert len({m.score for m in members}) == 1  # everyone ties (docs/protocol/evolution.md#constant-fraction-oracle: 182.96875 + 499.375)
        perm = [int(p) for p in rng_for(seed, "evolution", "runkey", 1, "rank-ties").permutation(12)]
        assert [row["tiebreak"] for row in records.tables["evo_strategies"]] == [perm[i] for i in range(12)]
        expected = sorted(range(12), key=lambda i: perm[i])[:6]
        nxt = asyncio.run(run.next_population(StepRecords(), 2, members))
        survivors = [m.agent_id for m in nxt if m.survived]
        assert survivors == [members[i].agent_id for i in expected]
        seen.add(frozenset(survivors))
    assert len(seen) > 6  # the survivors vary with the seed
