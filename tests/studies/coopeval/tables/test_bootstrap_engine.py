"""The bootstrap engine beyond the interval: the batched replicator equals the evaluation's
replicator member by member (including members that stop early at different steps), input
checks with their messages, and the replicator settings passed through."""

from __future__ import annotations

import re

import numpy as np
import pytest

from coopeval.evaluation.replicator import replicator_dynamics
from coopeval.studies.coopeval.tables.bootstrap import (
    batched_replicator,
    bootstrap_group,
    bootstrap_groups,
    group_rng,
)

# Anti-coordination games with an interior equilibrium: from the uniform start they converge and
# stop early (182 and 168 updates, shares 2/3 and 3/4); the flat game stops at once; PD and a
# coordination game never stop (an extinct-bound type keeps a fitness gap).
STOP_182 = np.array([[0.0, 2.0], [1.0, 0.0]])
STOP_168 = np.array([[0.0, 3.0], [1.0, 0.0]])
FLAT = np.ones((2, 2))
PD = np.array([[2.0, 0.0], [3.0, 1.0]])
COORD = np.array([[1.0, 0.0], [0.0, 2.0]])


def test_batch_members_stop_independently() -> None:
    batch = np.stack([STOP_182, PD, FLAT, STOP_168, COORD])
    pops, fits = batched_replicator(batch)
    expected_updates = [182, 1000, 0, 168, 1000]
    for b, tensor in enumerate(batch):
        ref = replicator_dynamics(tensor)
        assert ref.n_updates == expected_updates[b]
        np.testing.assert_allclose(pops[b], ref.final_population, atol=1e-13, rtol=0)
        np.testing.assert_allclose(fits[b], ref.fitness, atol=1e-13, rtol=0)
    assert pops[0] == pytest.approx([2 / 3, 1 / 3], abs=1e-6)
    assert pops[3] == pytest.approx([3 / 4, 1 / 4], abs=1e-6)


def test_a_batch_that_stops_entirely() -> None:
    pops, fits = batched_replicator(np.stack([FLAT, 2 * FLAT]))
    assert pops.tolist() == [[0.5, 0.5], [0.5, 0.5]]
    assert fits.tolist() == [[1.0, 1.0], [2.0, 2.0]]


def test_settings_are_passed_through() -> None:
    pops, _ = batched_replicator(np.stack([PD]), steps=7, lr=0.5)
    ref = replicator_dynamics(PD, steps=7, lr=0.5)
    np.testing.assert_allclose(pops[0], ref.final_population, atol=1e-13, rtol=0)


def runs_pd() -> list[list[tuple[tuple[str, str], list[float]]]]:
    """Two runs of a PD-like tournament between A and B (one matchup per ordered pair)."""
    base = [(("A", "A"), [2.0, 2.0]), (("A", "B"), [0.0, 3.0]), (("B", "A"), [3.0, 0.0]), (("B", "B"), [1.0, 1.0])]
    return [base, [(agents, [s + 0.5 for s in scores]) for agents, scores in base]]


def test_replicator_defaults_and_learning_rate_reach_the_replicates() -> None:
    default = bootstrap_group(runs_pd(), group_rng(5, "g"), 20)
    explicit = bootstrap_groups({0: (runs_pd(), group_rng(5, "g"))}, 20, steps=1000, lr=0.1)[0]
    np.testing.assert_array_equal(default.fitness, explicit.fitness)
    fast = bootstrap_group(runs_pd(), group_rng(5, "g"), 20, steps=5, lr=0.5)
    fast_groups = bootstrap_groups({0: (runs_pd(), group_rng(5, "g"))}, 20, steps=5, lr=0.5)[0]
    np.testing.assert_array_equal(fast.fitness, fast_groups.fitness)
    slow = bootstrap_group(runs_pd(), group_rng(5, "g"), 20, steps=5, lr=0.1)
    assert not np.array_equal(fast.fitness, slow.fitness)


def test_a_run_with_a_single_matchup_is_valid() -> None:
    one = [[(("A", "B"), [0.0, 3.0])]]
    rep = bootstrap_group(one, group_rng(1, "x"), 10)
    assert list(rep.agents) == ["A", "B"]
    np.testing.assert_array_equal(rep.mean, np.tile([0.0, 3.0], (10, 1)))  # every resample redraws the one matchup
    assert rep.fitness is None  # (A, A) and (B, B) are missing: no complete tensor


@pytest.mark.parametrize(
    ("runs", "message"),
    [
        ([], "bootstrap_group: every run needs at least one matchup"),
        ([[(("A", "B"), [0.0, 3.0])], []], "bootstrap_group: every run needs at least one matchup"),
        ([[(("A", "B"), [0.0, 3.0])], [(("A", "B", "A"), [1.0, 1.0, 1.0])]], "bootstrap_group: runs have different seat counts"),
    ],
)
def test_input_errors(runs, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        bootstrap_group(runs, group_rng(1, "x"), 5)
