"""The gossip tones (docs/protocol/gossip.md#tones) and the binary signal of the ablations (docs/protocol/gossip.md#ablations).

The raw token is the source of truth; ``tone_rank`` is our [decision] ordinal summary
(+2 praising, 0 neutral, −1 mocking, −1 complaint, −2 criticism). No source orders the negative
tones among themselves.
"""

from __future__ import annotations

TONES: tuple[str, ...] = ("praising", "neutral", "mocking", "complaint", "criticism")
"""The five tones, exact tokens, in the order the prompts list them (what each means is the
template ``tone_meaning_<tone>``)."""

TONE_RANK: dict[str, int] = {"praising": 2, "neutral": 0, "mocking": -1, "complaint": -1, "criticism": -2}

NEGATIVE_TONES = frozenset(t for t, r in TONE_RANK.items() if r < 0)

TONE_SETS: dict[str, tuple[str, ...]] = {"align5": TONES}
"""Known tone sets (config ``gossip.tone_set``)."""

SIGNAL_MODES = ("tone", "binary", "binary_convention")
"""Reputation signal of a condition: toned message (ALIGN), a bare 1/0, or 1/0 with the stated
convention 1 = good, 0 = bad (docs/protocol/gossip.md#ablations)."""


def tone_rank(tone: str | None) -> int | None:
    """The rank of ``tone``; None for no tone (e.g. Max's empty tone, binary signals)."""
    if not tone:
        return None
    return TONE_RANK[tone]


def honest_tone(cooperated: bool) -> str:
    """The tone an honest witness gives: praising after cooperation, criticism after defection."""
    return "praising" if cooperated else "criticism"
