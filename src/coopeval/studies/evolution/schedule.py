"""The donation game's schedule: a bipartite round-robin played twice (docs/protocol/evolution.md#schedule).

Agents are identified by their index in the shuffled population: the first half is A
(``a_k`` = index ``k``), the second half B (``b_k`` = index ``N/2 + k``).

* Base rounds ``r = 0 .. N/2 − 1``: ``a_k`` meets ``b_{(k − r) mod N/2}``; A donates in even
  ``r``, B in odd ``r``.
* Rounds ``N/2 .. N − 1`` repeat the base rounds with donor and recipient swapped. One game is
  ``N`` rounds × ``N/2`` pairs (12 × 6 = 72 donations for N = 12).
* Game 2 plays the same rounds with every pair's roles swapped again.

Per generation: ``2 · N · N/2`` donation events (144 for N = 12), 12 per agent for N = 12.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Pairing:
    """One donation of a round: ``pair`` is the 0-based index ``k`` of the A agent (docs/protocol/evolution.md#schedule)."""

    pair: int
    donor: int
    recipient: int


def check_population_size(n_agents: int) -> None:
    """Raise ``ValueError`` unless ``n_agents`` is even and at least 4 (docs/protocol/evolution.md#donation-game, issue 11 §1)."""
    if n_agents < 4 or n_agents % 2:
        raise ValueError(f"the population size must be an even number >= 4, got {n_agents}")


def game_rounds(n_agents: int, game: int) -> list[list[Pairing]]:
    """The rounds of game ``game`` (1 or 2) for ``n_agents`` agents (docs/protocol/evolution.md#schedule).

    Returns ``n_agents`` rounds, each a list of ``n_agents // 2`` pairings ordered by pair index.

    Raises
    ------
    ValueError
        Odd or too small population, or a game other than 1 or 2.
    """
    check_population_size(n_agents)
    if game not in (1, 2):
        raise ValueError(f"a generation has games 1 and 2, not {game}")
    half = n_agents // 2
    base: list[list[Pairing]] = []
    for r in range(half):
        pairings = []
        for k in range(half):
            a, b = k, half + (k - r) % half
            donor, recipient = (a, b) if r % 2 == 0 else (b, a)
            pairings.append(Pairing(k, donor, recipient))
        base.append(pairings)
    swapped = [[Pairing(p.pair, p.recipient, p.donor) for p in rnd] for rnd in base]
    rounds = base + swapped
    if game == 2:
        rounds = [[Pairing(p.pair, p.recipient, p.donor) for p in rnd] for rnd in rounds]
    return rounds


def role_sequence(n_agents: int, game: int, agent: int) -> str:
    """The agent's roles over the rounds of a game as a string of ``D`` (donor) / ``R``
    (recipient), e.g. ``"DRDRDRRDRDRD"`` for an A agent in game 1 with N = 12 (docs/protocol/evolution.md#schedule item 6)."""
    out = []
    for rnd in game_rounds(n_agents, game):
        out.append("D" if any(p.donor == agent for p in rnd) else "R")
    return "".join(out)


def half_of(n_agents: int, agent: int) -> str:
    """``"A"`` for indices below ``n_agents // 2``, else ``"B"``."""
    return "A" if agent < n_agents // 2 else "B"
