"""The sequential trust (investment) game: an investor sends, the amount is multiplied, the
trustee returns part of it.

Zhu et al.'s investment game (ALIGN, arXiv 2602.07777; docs/protocol/gossip.md#testbeds), after
Berg, Dickhaut & McCabe's trust game. Not the engine's normal-form
:func:`~coopeval.games.definitions.trust_game` (CoopEval's simultaneous Give/Keep game, arXiv
2604.15267 §2): here the moves are amounts and the trustee sees the investment before it answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from coopeval.games.parameters import param


@dataclass(frozen=True)
class SequentialTrustGame:
    """The investor sends ``I ≥ 0`` units (at most what it holds: the study bounds it); the
    trustee receives ``multiplier · I`` and returns ``R ∈ [0, multiplier · I]``. Rewards:
    investor ``−I + R``, trustee ``multiplier · I − R`` (units).

    Roles are ``investor`` and ``trustee``; the gossip study's prompts and decision positions
    call the trustee the ``responder``, as ALIGN's code does
    (:class:`coopeval.studies.gossip.testbeds.TrustGame`).

    Parameters
    ----------
    multiplier:
        What each unit invested becomes in the trustee's hands (default 3; > 0).
    """

    multiplier: float = param(3.0, "", {"type": "number", "exclusiveMinimum": 0})

    roles: ClassVar[tuple[str, str]] = ("investor", "trustee")
    simultaneous: ClassVar[bool] = False  # the trustee answers the investment

    def received(self, invest: float) -> float:
        """Units the trustee receives for an investment of ``invest`` units: ``multiplier · I``."""
        return self.multiplier * invest

    def payoff(self, invest: float, back: float) -> tuple[float, float]:
        """(investor reward, trustee reward) = (−I + R, multiplier·I − R), units.

        Raises
        ------
        ValueError
            I < 0 or R outside [0, multiplier·I] (1e-9 tolerance above).
        """
        if invest < 0 or not 0 <= back <= self.multiplier * invest + 1e-9:
            raise ValueError(f"invalid trust moves I = {invest}, R = {back}")
        return -invest + back, self.multiplier * invest - back
