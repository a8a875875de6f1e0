"""Agent names in seat order (docs/protocol/gossip.md#donation-game, #testbeds).

The reference names agent_0..agent_11 with these first names; the donation game uses the first
nine, the PD and the trust game the first five, the market all twelve (sellers first).
"""

from __future__ import annotations

AGENT_NAMES: tuple[str, ...] = (
    "John", "Kate", "Jack", "Emma", "Luke", "Mary", "Alice", "Bob", "Charlie", "David", "Eve", "Frank",
)
"""Names of agent_0..agent_11 (docs/protocol/gossip.md#donation-game)."""

MAX_NAME = "Max"
"""The scripted silent greedy defector (docs/protocol/gossip.md#greedy-defector)."""


def agent_names(n: int) -> tuple[str, ...]:
    """The first ``n`` names.

    Raises
    ------
    ValueError
        If ``n`` is not in 2..12 (names exist for at most 12 agents).
    """
    if not 2 <= n <= len(AGENT_NAMES):
        raise ValueError(f"n must be between 2 and {len(AGENT_NAMES)} (names exist for 12 agents), not {n}")
    return AGENT_NAMES[:n]
