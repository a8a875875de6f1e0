"""The donation game: a donor pays to benefit a recipient (indirect reciprocity's stage game).

Three variants, each declared once with its parameters and payoffs:

* :class:`BinaryDonationGame`: the donor cooperates (pays ``c``, the recipient gains ``b``) or
  defects (nothing moves). ALIGN gossip study, Zhu et al., arXiv 2602.07777 §3 (the repeated
  donation game of its propositions; docs/protocol/gossip.md#donation-game).
* :class:`DonationPrisonersDilemma`: two players play the binary donation game at once, each as
  the other's donor (ALIGN's Prisoner's Dilemma testbed, arXiv 2602.07777;
  docs/protocol/gossip.md#testbeds).
* :class:`ContinuousDonationGame`: the donor gives any amount ``x`` of its holdings, stated in
  units (Vallinder & Hughes, arXiv 2412.10270) or as a percentage of its holdings (Horibe, Itao
  & Toyokawa, arXiv 2608.04507 §2, App. B.1); the recipient gains ``multiplier · x``; with
  costly punishment the donor may instead spend ``x`` to remove ``punishment_loss · x``
  (docs/protocol/evolution.md#donation-game, #punishment-variants).

Roles are ``donor`` and ``recipient``, the donor moving alone; in the Prisoner's Dilemma both
agents are ``player`` and move at the same time (``player_1``, ``player_2`` in tables,
:func:`coopeval.games.roles.role_names`). All amounts are resource units.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from coopeval.games.base import Profile
from coopeval.games.parameters import param

_NUMBER = {"type": "number"}


@dataclass(frozen=True)
class _Gift:
    """The binary gift both the donation game and its Prisoner's Dilemma are built from: giving
    costs the giver ``c`` units and brings the receiver ``b`` units."""

    b: float = param(5.0, "units", _NUMBER)
    c: float = param(1.0, "units", _NUMBER)

    def cost_benefit(self, gives: bool) -> tuple[float, float]:
        """(cost to the giver, benefit to the receiver) in units: ``(c, b)`` if it gives, else
        ``(0, 0)``."""
        return (self.c, self.b) if gives else (0.0, 0.0)


@dataclass(frozen=True)
class BinaryDonationGame(_Gift):
    """The binary donation game (Zhu et al., arXiv 2602.07777 §3).

    Parameters
    ----------
    b:
        Benefit to the recipient when the donor cooperates, units (default 5).
    c:
        Cost to the donor when it cooperates, units (default 1). A social dilemma needs
        ``b > c > 0``; cooperation is an equilibrium under public monitoring iff the discount
        factor γ ≥ c/b (arXiv 2602.07777 Prop. 3.4). Neither bound is enforced (the gossip
        config accepts any number).
    """

    roles: ClassVar[tuple[str, str]] = ("donor", "recipient")
    simultaneous: ClassVar[bool] = False  # only the donor moves
    actions: ClassVar[tuple[str, str]] = ("cooperate", "defect")

    def payoff(self, action: str) -> tuple[float, float]:
        """(donor reward, recipient reward) in units of ``action`` ∈ {cooperate, defect}:
        ``(−c, b)`` or ``(0, 0)``.

        Raises
        ------
        ValueError
            Unknown action.
        """
        if action == "cooperate":
            return -self.c, self.b
        if action == "defect":
            return 0.0, 0.0
        raise ValueError(f"unknown donor action {action!r}")


@dataclass(frozen=True)
class DonationPrisonersDilemma(_Gift):
    """The Prisoner's Dilemma built from the donation game (ALIGN's PD testbed, arXiv 2602.07777;
    docs/protocol/gossip.md#testbeds): both players decide at once whether to pay ``c`` to give
    the other ``b``. A player's reward is what it receives minus what it pays: CC (b − c, b − c),
    CD (−c, b), DC (b, −c), DD (0, 0); (4, 4), (−1, 5), (5, −1), (0, 0) at the defaults.

    This is not the engine's normal-form :func:`~coopeval.games.definitions.prisoners_dilemma`,
    whose (R, S, T, P) = (2, 0, 3, 1) are CoopEval's (arXiv 2604.15267 §2): here
    (R, S, T, P) = (b − c, −c, b, 0), the "donation-game" PD, so that the PD testbed keeps the
    donation game's b and c and its rewards add up like donation-game rewards. Both are
    Prisoner's Dilemmas (T > R > P > S and 2R > T + S) whenever ``b > c > 0``;
    :meth:`payoff_table` gives this one in the engine's profile convention.

    Parameters
    ----------
    b, c:
        Benefit and cost of giving, units (defaults 5 and 1).
    """

    roles: ClassVar[tuple[str, str]] = ("player", "player")
    simultaneous: ClassVar[bool] = True  # both decide at once: tables number them player_1, player_2
    actions: ClassVar[tuple[str, str]] = ("C", "D")

    def payoff(self, first: str, second: str) -> tuple[float, float]:
        """Rewards (units) of (player 1, player 2) for actions in {C, D}.

        Raises
        ------
        ValueError
            Unknown action.
        """
        for a in (first, second):
            if a not in self.actions:
                raise ValueError(f"unknown PD action {a!r}")
        cost_1, benefit_1 = self.cost_benefit(first == "C")
        cost_2, benefit_2 = self.cost_benefit(second == "C")
        return benefit_2 - cost_1, benefit_1 - cost_2

    def payoff_table(self) -> dict[Profile, tuple[float, ...]]:
        """Every profile in the engine's convention (action 0 = C, 1 = D, seat order) mapped to
        the two rewards: the table a :class:`~coopeval.games.base.Game` holds."""
        return {
            (i, j): self.payoff(self.actions[i], self.actions[j]) for i in range(2) for j in range(2)
        }


AMOUNT_UNITS: tuple[str, ...] = ("units", "percent")
"""How a donor states a continuous donation: in units (V&H, arXiv 2412.10270) or as a percentage
(Horibe et al., arXiv 2608.04507 §2)."""

PERCENT_BASES: tuple[str, ...] = ("current", "endowment")
"""What a stated percentage is a share of: the donor's current holdings (default) or the endowment."""

MOVES: tuple[str, ...] = ("donate", "punish", "refuse")
"""A continuous donor's moves: give, spend to punish (costly punishment) or refuse to play
(partner choice); docs/protocol/evolution.md#punishment-variants."""


@dataclass(frozen=True)
class ContinuousDonationGame:
    """The continuous donation game of the evolution study (Vallinder & Hughes, arXiv 2412.10270;
    Horibe et al., arXiv 2608.04507 §2, App. B.1; docs/protocol/evolution.md#donation-game).

    Every agent starts a game with ``endowment`` units and resources compound within a game. A
    donor holding ``h`` units gives ``0 ≤ x ≤ h``: it loses ``x`` and the recipient gains
    ``multiplier · x`` (b/c = 2). Under costly punishment the donor may instead spend ``x`` to
    remove ``punishment_loss · x`` from the recipient, floored at 0; refusing moves nothing.

    Parameters
    ----------
    endowment:
        Units each agent holds at the start of a game (default 10; > 0).
    multiplier:
        b/c, the recipient's gain per unit given (default 2; 1.5 and 3 in V&H's ablation; > 0).
    punishment_loss:
        Units removed from the recipient per unit spent punishing (default 2; ≥ 0).
    percent_base:
        What a percentage stated by the donor is a share of (:data:`PERCENT_BASES`): its
        ``current`` holdings (default, the trace's wording) or the ``endowment`` (the paper's
        worked example 0.387 × 10 × 2 = 7.74, arXiv 2608.04507 §3.2).

    Raises
    ------
    ValueError
        An unknown ``percent_base``.
    """

    endowment: float = param(10.0, "units", {"type": "number", "exclusiveMinimum": 0})
    multiplier: float = param(2.0, "", {"type": "number", "exclusiveMinimum": 0})
    punishment_loss: float = param(2.0, "", {"type": "number", "minimum": 0})
    percent_base: str = param("current", "", {"enum": list(PERCENT_BASES)})

    roles: ClassVar[tuple[str, str]] = ("donor", "recipient")
    simultaneous: ClassVar[bool] = False  # only the donor moves

    def __post_init__(self) -> None:
        if self.percent_base not in PERCENT_BASES:
            raise ValueError(f"percent_base must be one of {PERCENT_BASES}, not {self.percent_base!r}")

    def settle(self, move: str, amount: float, donor: float, recipient: float) -> tuple[float, float]:
        """(donor, recipient) holdings in units after ``move`` with ``amount`` units, from
        holdings ``donor`` and ``recipient``: donate ``(d − x, r + multiplier·x)``, punish
        ``(d − x, max(0, r − punishment_loss·x))``, refuse ``(d, r)``.

        Raises
        ------
        ValueError
            An unknown move (:data:`MOVES`), or an amount outside ``[0, donor]``.
        """
        if move not in MOVES:
            raise ValueError(f"unknown action kind {move!r}; known: {', '.join(MOVES)}")
        if move == "refuse":
            return donor, recipient
        if not 0.0 <= amount <= donor:
            raise ValueError(f"a donor holding {donor} units cannot give {amount}")
        if move == "donate":
            return donor - amount, recipient + self.multiplier * amount
        return donor - amount, max(0.0, recipient - self.punishment_loss * amount)

    def percent_base_units(self, holdings: float) -> float:
        """The units a stated percentage is a share of, for a donor holding ``holdings``: those
        holdings, or the endowment under ``percent_base="endowment"``."""
        return holdings if self.percent_base == "current" else self.endowment

    def units_for_percent(self, percent: float, holdings: float) -> float:
        """Units ``x = p/100 · base`` of a stated percentage ``p`` (base:
        :meth:`percent_base_units`), before any cap at the holdings (Horibe et al., arXiv
        2608.04507 §2)."""
        return percent * (self.percent_base_units(holdings) / 100.0)

    @staticmethod
    def percent_of_holdings(amount: float, holdings: float) -> float:
        """``amount`` as a percentage of ``holdings`` (what the behavioural trace states,
        arXiv 2608.04507 App. B.2); 0 when the donor holds nothing."""
        return 100.0 * amount / holdings if holdings > 0 else 0.0
