"""Matching schedules: who meets whom in which round (docs/protocol/gossip.md#matching, #testbeds, #greedy-defector).

A schedule is a list of ``(first, second)`` pairs of 0-based seat indices, one per round in
round order. In the donation and trust games ``first`` is the donor (investor) and ``second``
the recipient (responder); in the PD the pair is (player 1, player 2); in the market
(seller, buyer).

Policies
--------
``align_sweep`` (docs/protocol/gossip.md#matching)
    The reference's deterministic schedule: a depth-first search with backtracking over all
    unordered pairs in lexicographic order of seat index, trying the lower index as donor first,
    under three constraints: every pair once; each agent's successive appearances alternate
    between donor and recipient; each agent is donor (and recipient) at most ⌈(n − 1)/2⌉ times.
``random_alternating`` (docs/protocol/gossip.md#matching, [decision])
    A seeded random order over all pairs under the same constraints: a randomised depth-first
    search (candidate pairs and orientations shuffled by the given generator) with restarts.

Under alternation the quota holds automatically (an agent with n − 1 appearances has ⌈(n − 1)/2⌉
of its first role), but it is checked anyway, as the reference does.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

Pair = tuple[int, int]

MATCHING_POLICIES = ("align_sweep", "random_alternating")
"""Known matching policies of the donation and trust games (config ``gossip.matching``)."""

_NODE_BUDGET = 200_000
"""Search nodes per attempt before :func:`random_alternating` restarts (and before
:func:`align_sweep` gives up); generous for n ≤ 12."""

_RESTARTS = 50


class ScheduleError(ValueError):
    """No schedule satisfying the constraints exists (or none was found within the budget)."""


def quota(n: int) -> int:
    """⌈(n − 1)/2⌉: the most donor (or recipient) turns of one agent (docs/protocol/gossip.md#matching, constraint 3)."""
    return math.ceil((n - 1) / 2)


def _fits(pair: Pair, last_role: list[int], donor_turns: list[int], recipient_turns: list[int], cap: int) -> bool:
    donor, recipient = pair
    # last_role: -1 none yet, 0 donor, 1 recipient; alternation forbids repeating the last role
    return (
        last_role[donor] != 0
        and last_role[recipient] != 1
        and donor_turns[donor] < cap
        and recipient_turns[recipient] < cap
    )


def align_sweep(n: int) -> list[Pair]:
    """The reference's deterministic alternating sweep (docs/protocol/gossip.md#matching).

    For n = 9 it is the 36-round list of docs/protocol/gossip.md#matching (1 John→Kate, 2 Jack→John, …, 36 Bob→Charlie);
    for n = 5 the trust game's 10 rounds of docs/protocol/gossip.md#testbeds.

    Raises
    ------
    ScheduleError
        If no schedule exists for ``n`` (or none is found within the search budget).
    """
    if n < 2:
        raise ScheduleError(f"a schedule needs at least 2 agents, not {n}")
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    cap = quota(n)
    last_role = [-1] * n
    donor_turns = [0] * n
    recipient_turns = [0] * n
    chosen: list[Pair] = []
    nodes = 0

    def search(index: int) -> bool:
        nonlocal nodes
        if index == len(pairs):
            return True
        nodes += 1
        if nodes > _NODE_BUDGET:
            return False
        low, high = pairs[index]
        for oriented in ((low, high), (high, low)):
            if not _fits(oriented, last_role, donor_turns, recipient_turns, cap):
                continue
            donor, recipient = oriented
            saved = (last_role[donor], last_role[recipient])
            last_role[donor], last_role[recipient] = 0, 1
            donor_turns[donor] += 1
            recipient_turns[recipient] += 1
            chosen.append(oriented)
            if search(index + 1):
                return True
            chosen.pop()
            donor_turns[donor] -= 1
            recipient_turns[recipient] -= 1
            last_role[donor], last_role[recipient] = saved
        return False

    if not search(0):
        raise ScheduleError(f"no alternating schedule exists for n = {n} agents")
    return chosen


def random_alternating(n: int, rng: np.random.Generator) -> list[Pair]:
    """A seeded random alternating schedule over all pairs (docs/protocol/gossip.md#matching, [decision]).

    Parameters
    ----------
    n:
        Number of agents (≥ 2).
    rng:
        The cell's ``"matching"`` stream; the result is a pure function of its state.

    Raises
    ------
    ScheduleError
        If no schedule was found in any of the restarts.
    """
    if n < 2:
        raise ScheduleError(f"a schedule needs at least 2 agents, not {n}")
    cap = quota(n)
    total = n * (n - 1) // 2
    for _ in range(_RESTARTS):
        remaining = {(i, j) for i in range(n) for j in range(i + 1, n)}
        last_role = [-1] * n
        donor_turns = [0] * n
        recipient_turns = [0] * n
        chosen: list[Pair] = []
        nodes = 0

        def search() -> bool:
            nonlocal nodes
            if len(chosen) == total:
                return True
            nodes += 1
            if nodes > _NODE_BUDGET // 10:
                return False
            candidates = [
                oriented
                for low, high in sorted(remaining)
                for oriented in ((low, high), (high, low))
                if _fits(oriented, last_role, donor_turns, recipient_turns, cap)
            ]
            order = rng.permutation(len(candidates))
            for k in order:
                donor, recipient = candidates[int(k)]
                key = (min(donor, recipient), max(donor, recipient))
                saved = (last_role[donor], last_role[recipient])
                remaining.discard(key)
                last_role[donor], last_role[recipient] = 0, 1
                donor_turns[donor] += 1
                recipient_turns[recipient] += 1
                chosen.append((donor, recipient))
                if search():
                    return True
                chosen.pop()
                donor_turns[donor] -= 1
                recipient_turns[recipient] -= 1
                last_role[donor], last_role[recipient] = saved
                remaining.add(key)
                if nodes > _NODE_BUDGET // 10:
                    return False
            return False

        if search():
            return chosen
    raise ScheduleError(f"no random alternating schedule found for n = {n} agents")


def circle_schedule(n: int) -> list[Pair]:
    """The PD's round-robin by the circle method, with a bye for odd n (docs/protocol/gossip.md#testbeds).

    Seats ``0..n-1`` (plus a bye slot for odd n) are laid out in a list; each round pairs slot i
    with slot m − 1 − i, pairs with the bye are dropped, then every slot but the first moves one
    place to the right (the last wraps to position 1). For n = 5: 1 Kate–Luke, 2 Jack–Emma,
    3 John–Luke, 4 Kate–Jack, 5 John–Emma, 6 Luke–Jack, 7 John–Jack, 8 Emma–Kate, 9 John–Kate,
    10 Emma–Luke.

    Raises
    ------
    ScheduleError
        If ``n`` < 2.
    """
    if n < 2:
        raise ScheduleError(f"a schedule needs at least 2 agents, not {n}")
    bye = -1
    slots = list(range(n)) + ([bye] if n % 2 else [])
    m = len(slots)
    rounds: list[Pair] = []
    for _ in range(m - 1):
        for i in range(m // 2):
            a, b = slots[i], slots[m - 1 - i]
            if bye not in (a, b):
                rounds.append((a, b))
        rest = slots[1:]
        slots = [slots[0], rest[-1], *rest[:-1]]
    return rounds


def max_schedule(n_llm: int, max_seat: int, pd: bool = False) -> list[Pair]:
    """Max's interactions only, in agent order (docs/protocol/gossip.md#greedy-defector).

    Donation game (``pd=False``): Max is donor first, then recipient, alternating:
    ``(Max, 0), (1, Max), (Max, 2), …``. For n = 9 (8 LLM agents): 1 Max→John, 2 Kate→Max,
    3 Max→Jack, 4 Emma→Max, 5 Max→Luke, 6 Mary→Max, 7 Max→Alice, 8 Bob→Max.
    PD (``pd=True``): Max meets each other player once as player 1: ``(Max, i)``.
    """
    if pd:
        return [(max_seat, i) for i in range(n_llm)]
    return [(max_seat, i) if i % 2 == 0 else (i, max_seat) for i in range(n_llm)]


def market_schedule(sellers: Sequence[int], buyers: Sequence[int], rng: np.random.Generator) -> list[Pair]:
    """Every seller–buyer pair once, in a seeded random order (docs/protocol/gossip.md#testbeds; the reference's shuffle
    is unseeded)."""
    pairs = [(s, b) for s in sellers for b in buyers]
    order = rng.permutation(len(pairs))
    return [pairs[int(k)] for k in order]


def check_alternating(schedule: Sequence[Pair], n: int) -> None:
    """Raise :class:`ScheduleError` unless ``schedule`` meets the three constraints of docs/protocol/gossip.md#matching."""
    seen: set[tuple[int, int]] = set()
    last: dict[int, int] = {}
    donor_turns = [0] * n
    recipient_turns = [0] * n
    for donor, recipient in schedule:
        key = (min(donor, recipient), max(donor, recipient))
        if key in seen or donor == recipient:
            raise ScheduleError(f"pair {key} repeated or degenerate")
        seen.add(key)
        if last.get(donor) == 0 or last.get(recipient) == 1:
            raise ScheduleError(f"round {donor}->{recipient} breaks alternation")
        last[donor], last[recipient] = 0, 1
        donor_turns[donor] += 1
        recipient_turns[recipient] += 1
    if len(seen) != n * (n - 1) // 2:
        raise ScheduleError("not every pair is played")
    if max(donor_turns + recipient_turns) > quota(n):
        raise ScheduleError("quota exceeded")
