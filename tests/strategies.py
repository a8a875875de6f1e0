"""Shared hypothesis strategies: random normal-form games, metagames, mixed strategies, populations.

Every property test that needs a random game draws it here, so the games the suite explores are
declared once. Payoffs are small integers (points) unless a strategy says otherwise: integer
tensors make the invariance checks exact (adding an integer offset changes no deviation gain by
even one ulp), and they are what the released metagames look like after rounding.

Objects (N players, S strategies/types):

* a *normal-form game* is an array of shape (S_1, …, S_N, N): ``game[a][p]`` is player p's
  payoff at the joint profile a (:func:`normal_form_games`);
* a *metagame* is a tensor of shape (S,)*N, symmetric in its co-player axes: ``T[i, o_1, …]``
  is the payoff of a type-i player whose co-players are o_1, … (CoopEval, arXiv 2604.15267,
  Sec. 5 "evaluation", and :mod:`coopeval.evaluation.tensor`) (:func:`metagames`);
* a *mixed strategy* / *population* is a point of the simplex Δ^{S−1}, shape (S,)
  (:func:`mixed_strategies`, :func:`populations`);
* *faulty values* (issue 25 kind 7): score lists and 11 × 11 strategy matrices in which NaN,
  ±inf, zeros and negative values occur (:func:`scores_with_faults`, :func:`matrices_with_faults`);
* *stage games* of the engine (:mod:`coopeval.games.donation`, ``.trust``, ``.market``) with
  random parameters, and resource amounts (:data:`UNITS_AMOUNTS`, :func:`binary_donation_params`,
  :func:`continuous_donation_games`). Amounts are dyadic (multiples of 1/8, multipliers of 1/4)
  and small, so every payoff a test computes by hand is exact in float64.

The sizes default to 2..4 players and 1..4 strategies, capped by ``max_profiles`` (S^N) so that a
deviation-rating LP stays in the millisecond range.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import strategies as st

from coopeval.games.donation import PERCENT_BASES, ContinuousDonationGame

__all__ = [
    "FAULTY_VALUES",
    "MULTIPLIERS",
    "PAYOFFS",
    "UNITS_AMOUNTS",
    "binary_donation_params",
    "continuous_donation_games",
    "game_sizes",
    "matrices_with_faults",
    "metagame_from_game",
    "metagames",
    "mixed_strategies",
    "normal_form_games",
    "populations",
    "reorder",
    "scores_with_faults",
    "symmetric_payoff_functions",
]

PAYOFFS = st.integers(-5, 5)
"""One payoff in points: a small integer, so sums and differences are exact in float64."""


@st.composite
def game_sizes(
    draw: st.DrawFn,
    min_players: int = 2,
    max_players: int = 4,
    min_strategies: int = 1,
    max_strategies: int = 4,
    max_profiles: int = 81,
) -> tuple[int, int]:
    """(N, S) with N in [min_players, max_players], S in [min_strategies, max_strategies] and
    S**N ≤ ``max_profiles`` (S is shrunk to the largest that fits for large N).

    Raises
    ------
    ValueError
        If no S ≥ ``min_strategies`` fits the profile cap for the smallest N.
    """
    if min_strategies**min_players > max_profiles:
        raise ValueError(f"max_profiles: {max_profiles} < {min_strategies}**{min_players}; raise the cap")
    n_players = draw(
        st.integers(min_players, max_players).filter(lambda n: min_strategies**n <= max_profiles)
    )
    cap = max(s for s in range(min_strategies, max_strategies + 1) if s**n_players <= max_profiles)
    return n_players, draw(st.integers(min_strategies, cap))


@st.composite
def normal_form_games(
    draw: st.DrawFn,
    min_players: int = 2,
    max_players: int = 4,
    min_strategies: int = 1,
    max_strategies: int = 4,
    max_profiles: int = 81,
    same_strategies: bool = False,
) -> np.ndarray:
    """A general-sum N-player normal-form game, shape (S_1, …, S_N, N), integer points.

    Each player has its own number of strategies in [min_strategies, max_strategies] (one
    common S if ``same_strategies``, as a metagame needs); the number of joint profiles
    Π S_p stays ≤ ``max_profiles``.
    """
    if same_strategies:
        n_players, size = draw(game_sizes(min_players, max_players, min_strategies, max_strategies, max_profiles))
        counts = [size] * n_players
    else:
        n_players = draw(st.integers(min_players, max_players))
        counts = []
        for p in range(n_players):
            room = max_profiles // max(1, math.prod(counts)) // min_strategies ** (n_players - p - 1)
            counts.append(draw(st.integers(min_strategies, max(min_strategies, min(max_strategies, room)))))
    size = math.prod(counts) * n_players
    cells = draw(st.lists(PAYOFFS, min_size=size, max_size=size))
    return np.array(cells, dtype=float).reshape((*counts, n_players))


@st.composite
def symmetric_payoff_functions(
    draw: st.DrawFn, n_players: int, n_strategies: int, values: st.SearchStrategy[float] = PAYOFFS
) -> dict[tuple[int, ...], float]:
    """u(own, co-players) of a symmetric game: one payoff per (own strategy, sorted multiset of
    the N−1 co-players' strategies)."""
    keys = [
        (own, *others)
        for own in range(n_strategies)
        for others in itertools.combinations_with_replacement(range(n_strategies), n_players - 1)
    ]
    return dict(zip(keys, draw(st.lists(values, min_size=len(keys), max_size=len(keys))), strict=True))


def metagame_from_game(table: dict[tuple[int, ...], float], n_players: int, n_strategies: int) -> np.ndarray:
    """The metagame tensor (S,)*N of a symmetric payoff function (see
    :func:`symmetric_payoff_functions`): T[i, o_1, …] = u(i, sorted(o))."""
    tensor = np.empty((n_strategies,) * n_players)
    for profile in itertools.product(range(n_strategies), repeat=n_players):
        tensor[profile] = table[(profile[0], *sorted(profile[1:]))]
    return tensor


@st.composite
def metagames(
    draw: st.DrawFn,
    min_players: int = 2,
    max_players: int = 4,
    min_types: int = 1,
    max_types: int = 4,
    max_profiles: int = 81,
    values: st.SearchStrategy[float] = PAYOFFS,
) -> np.ndarray:
    """A symmetric metagame tensor, shape (S,)*N, points drawn from ``values`` (default small
    integers), symmetric in the co-player axes
    (the shape :func:`coopeval.evaluation.replicator.replicator_dynamics` and
    :func:`coopeval.evaluation.deviation.deviation_ratings` take)."""
    n_players, size = draw(game_sizes(min_players, max_players, min_types, max_types, max_profiles))
    table = draw(symmetric_payoff_functions(n_players, size, values))
    return metagame_from_game(table, n_players, size)


@st.composite
def mixed_strategies(draw: st.DrawFn, size: int, interior: bool = False) -> np.ndarray:
    """A point of the simplex Δ^{size−1}, shape (size,): non-negative shares summing to 1.

    Drawn as integer weights in 0..20 (1..20 if ``interior``) normalised, so vertices, edges
    and the uniform point all occur. A draw of all-zero weights gives the uniform point.
    """
    low = 1 if interior else 0
    weights = np.array(draw(st.lists(st.integers(low, 20), min_size=size, max_size=size)), dtype=float)
    if weights.sum() == 0:
        weights[:] = 1.0
    shares: np.ndarray = weights / weights.sum()
    return shares


def populations(size: int) -> st.SearchStrategy[np.ndarray]:
    """A replicator population of ``size`` types with every share positive (an interior point
    of the simplex: no type starts extinct)."""
    return mixed_strategies(size, interior=True)


def reorder(tensor: np.ndarray, order: list[int]) -> np.ndarray:
    """The same metagame with type ``order[i]`` on position i of every axis (a relabelling of the
    strategies; ``order`` may repeat an index, which clones that type)."""
    relabelled: np.ndarray = tensor[np.ix_(*[order] * tensor.ndim)]
    return relabelled


FAULTY_VALUES = st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, -1.0, -3.5])
"""One value a buggy upstream step may produce: NaN, ±inf, (signed) zero or a negative number."""


@st.composite
def scores_with_faults(
    draw: st.DrawFn, min_size: int = 2, max_size: int = 12, finite: bool = False, non_negative: bool = False
) -> list[float]:
    """A list of scores (units) mixing ordinary values in [0, 500] with :data:`FAULTY_VALUES`.

    ``finite`` keeps only finite values (zeros and negatives still occur); ``non_negative`` also
    drops the negatives (what roulette fitness must be). At least one faulty value is drawn when
    neither flag is set, so every example exercises a fault.
    """
    ordinary = st.floats(0.0, 500.0, allow_nan=False, allow_infinity=False)
    faulty = FAULTY_VALUES
    if finite:
        faulty = faulty.filter(math.isfinite)
    if non_negative:
        faulty = faulty.filter(lambda v: v >= 0)
    values = draw(st.lists(st.one_of(ordinary, faulty), min_size=min_size, max_size=max_size))
    if not finite and not non_negative:
        values[draw(st.integers(0, len(values) - 1))] = draw(faulty)
    return values


@st.composite
def matrices_with_faults(draw: st.DrawFn, size: int = 11) -> np.ndarray:
    """A ``size`` × ``size`` strategy matrix (donation percentages) that is all-zero, constant,
    a random matrix in [0, 100] with some constant rows, or one with NaN / negative cells."""
    kind = draw(st.sampled_from(["zero", "constant", "random", "nan", "negative"]))
    if kind == "zero":
        return np.zeros((size, size))
    if kind == "constant":
        return np.full((size, size), float(draw(st.integers(0, 100))))
    cells = draw(st.lists(st.integers(0, 100), min_size=size * size, max_size=size * size))
    m = np.asarray(cells, dtype=float).reshape(size, size)
    for row in draw(st.lists(st.integers(0, size - 1), max_size=size)):
        m[row, :] = m[row, 0]
    if kind in ("nan", "negative"):
        i, j = draw(st.integers(0, size - 1)), draw(st.integers(0, size - 1))
        m[i, j] = math.nan if kind == "nan" else -float(draw(st.integers(1, 100)))
    return m


UNITS_AMOUNTS = st.integers(0, 8 * 1000).map(lambda k: k / 8)
"""A resource amount in units: a multiple of 1/8 in [0, 1000] (exact in float64)."""

MULTIPLIERS = st.integers(1, 4 * 10).map(lambda k: k / 4)
"""A positive multiplier (b/c, punishment loss, the trust game's multiplier): a multiple of 1/4 in (0, 10]."""


@st.composite
def binary_donation_params(draw: st.DrawFn, dilemma: bool = False) -> tuple[float, float]:
    """(b, c) of a binary donation game, units; ``dilemma`` draws ``b > c > 0`` (a social dilemma)."""
    c = draw(UNITS_AMOUNTS.filter(lambda x: x > 0) if dilemma else UNITS_AMOUNTS)
    b = draw(UNITS_AMOUNTS.filter(lambda x: x > c) if dilemma else UNITS_AMOUNTS)
    return b, c


@st.composite
def continuous_donation_games(draw: st.DrawFn) -> ContinuousDonationGame:
    """A :class:`~coopeval.games.donation.ContinuousDonationGame` with a random endowment,
    multiplier, punishment loss and percent base."""
    return ContinuousDonationGame(
        endowment=draw(UNITS_AMOUNTS.filter(lambda x: x > 0)),
        multiplier=draw(MULTIPLIERS),
        punishment_loss=draw(st.one_of(st.just(0.0), MULTIPLIERS)),
        percent_base=draw(st.sampled_from(PERCENT_BASES)),
    )
