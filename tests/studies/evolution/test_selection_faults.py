"""Non-finite and degenerate selection scores (issue 25 kind 7).

A NaN compares false with everything: before the guard it survived truncation, ranked by its
construction order and sent every roulette draw to agent 0. Non-finite scores are now refused
before any selection, naming the agents; the all-zero roulette fallback is flagged on the
offspring's rows.
"""

from __future__ import annotations

import asyncio
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from coopeval.studies.evolution.bots import ConstantFraction
from coopeval.studies.evolution.runner import Member, StepRecords
from coopeval.studies.evolution.selection import (
    NonFiniteScoreError,
    ranks,
    roulette_draw,
    roulette_is_uniform,
    roulette_probabilities,
    truncation_survivors,
)
from tests.strategies import scores_with_faults

from .helpers import bot_agents, make_run, settings


def _names(n: int) -> list[str]:
    return [f"1_{k + 1}" for k in range(n)]


@hsettings(max_examples=200, deadline=None)
@given(scores=scores_with_faults(), seed=st.integers(0, 2**32 - 1))
def test_every_selection_refuses_non_finite_scores_naming_the_agents(scores: list[float], seed: int) -> None:
    names = _names(len(scores))
    bad = {names[i] for i, s in enumerate(scores) if not math.isfinite(s)}
    calls = [
        lambda: truncation_survivors(scores, agents=names),
        lambda: ranks(scores, agents=names),
        lambda: roulette_draw(scores, len(scores), np.random.default_rng(seed), agents=names),
    ]
    if not bad:  # only zeros and negatives were drawn: ranking works, roulette refuses negatives
        assert sorted(ranks(scores)) == list(range(1, len(scores) + 1))
        if any(s < 0 for s in scores):
            with pytest.raises(ValueError, match="negative"):
                calls[2]()
        return
    for call in calls:
        with pytest.raises(NonFiniteScoreError) as info:
            call()
        assert set(info.value.agents) == bad
        assert all(f"{name} = " in str(info.value) for name in bad)


@hsettings(max_examples=200, deadline=None)
@given(scores=scores_with_faults(finite=True))
def test_truncation_keeps_the_best_finite_scores(scores: list[float]) -> None:
    kept = truncation_survivors(scores)
    dropped = set(range(len(scores))) - set(kept)
    assert len(kept) == len(scores) // 2
    assert all(scores[k] >= scores[d] for k in kept for d in dropped)


@hsettings(max_examples=200, deadline=None)
@given(fitness=scores_with_faults(finite=True, non_negative=True), seed=st.integers(0, 2**32 - 1))
def test_roulette_never_picks_a_zero_fitness_parent_unless_all_are_zero(fitness: list[float], seed: int) -> None:
    parents = roulette_draw(fitness, 64, np.random.default_rng(seed))
    if roulette_is_uniform(fitness):
        assert roulette_probabilities(fitness) == [Fraction(1, len(fitness))] * len(fitness)
    else:
        assert all(fitness[p] > 0 for p in parents)


def test_a_nan_score_no_longer_sends_every_roulette_draw_to_agent_0() -> None:
    with pytest.raises(NonFiniteScoreError, match=r"1_3 = nan"):
        roulette_draw([5.0, 2.0, math.nan, 1.0], 4, np.random.default_rng(0), agents=_names(4))
    with pytest.raises(NonFiniteScoreError, match=r"agent 1 = nan"):
        truncation_survivors([1.0, math.nan, 2.0, 3.0])


def _previous(scores: list[float]) -> list[Member]:
    out = []
    for k, score in enumerate(scores):
        m = Member(f"1_{k + 1}", 1, "My strategy will be to give half.", word_count=7, display=f"Player {k + 1}")
        m.score, m.rank, m.tiebreak = score, k + 1, k
        out.append(m)
    return out


def test_next_population_refuses_a_nan_scored_agent_by_id() -> None:
    for protocol in ("vh", "horibe"):
        run = make_run(settings(protocol=protocol, invasion_per_generation=0, matrix_per_generation=0), bot_agents(ConstantFraction(50)))
        scores = [10.0] * 12
        scores[7] = math.nan
        with pytest.raises(NonFiniteScoreError, match=r"1_8 = nan"):
            asyncio.run(run.next_population(StepRecords(), 2, _previous(scores)))


@pytest.mark.parametrize(("scores", "flagged"), [([0.0] * 12, True), ([0.0] * 11 + [3.0], False)])
def test_the_all_zero_roulette_fallback_is_flagged_on_the_offspring_rows(scores: list[float], flagged: bool) -> None:
    run = make_run(settings(protocol="horibe", invasion_per_generation=0, matrix_per_generation=0), bot_agents(ConstantFraction(50)))
    _, records = asyncio.run(run.step(2, _previous(scores)))
    rows = records.tables["evo_strategies"]
    assert len(rows) == 12 and [r["selection_fallback"] for r in rows] == [flagged] * 12
    if not flagged:
        assert {r["parent_id"] for r in rows} == {"1_12"}  # the only agent with fitness > 0
