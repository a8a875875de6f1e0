"""The V&H reference's unused reputation score, logged only (docs/protocol/evolution.md#vh-metrics).

No agent ever sees it; it is stored with every donation event (``evo_events.donor_reputation``)
so analyses can compare it with behaviour. A donor's first donation sets it to the fraction
``f`` of its resources it gave (0–1; 0 for punish, refuse and invalid events); afterwards it
becomes ``((1 − |f − rep_recipient|) + 0.5 · rep_previous) / 1.5``.

Decisions where the sources are silent: the score is reset with the traces at the start of each
game; a recipient without a score yet (impossible in the docs/protocol/evolution.md#schedule schedule, where every agent
donates before it is a recipient a second time) counts as ``rep_recipient = f``.
"""

from __future__ import annotations


def next_reputation(previous: float | None, fraction: float, recipient: float | None) -> float:
    """The donor's score after giving ``fraction`` (0–1) of its resources to a recipient whose
    score is ``recipient`` (``None``: none yet), from its ``previous`` score (``None``: first
    donation).

    Raises
    ------
    ValueError
        ``fraction`` outside [0, 1].
    """
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"a donated fraction is in [0, 1], got {fraction}")
    if previous is None:
        return fraction
    other = fraction if recipient is None else recipient
    return ((1.0 - abs(fraction - other)) + 0.5 * previous) / 1.5
