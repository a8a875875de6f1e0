"""The four testbeds: parameters and stage payoffs (spec §2, §6).

All amounts are resource units ("units"). Rewards are the immediate changes of an agent's
resources in one interaction; resources never limit a donation (spec §2: "informational only"),
but the trust game's investment is bounded by the investor's current resources (spec §6).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

TESTBEDS = ("donation", "pd", "trust", "market")
"""Testbed keys of the config (``gossip.testbeds``)."""

HORIZONS = ("infinite", "finite")


@dataclass(frozen=True)
class DonationGame:
    """Donation game (spec §2): the donor cooperates (pays ``c``; the recipient gains ``b``) or
    defects (both 0). ``n`` agents, ``n(n − 1)/2`` rounds, discount ``gamma``."""

    key: ClassVar[str] = "donation"
    actions: ClassVar[tuple[str, str]] = ("cooperate", "defect")
    n: int = 9
    b: float = 5.0
    c: float = 1.0
    gamma: float = 0.99
    horizon: str = "infinite"
    initial_resources: float = 10.0

    @property
    def n_rounds(self) -> int:
        """n(n − 1)/2 (36 for n = 9), an integer (the reference prints "36.0")."""
        return self.n * (self.n - 1) // 2

    def payoff(self, action: str) -> tuple[float, float]:
        """(donor reward, recipient reward) of ``action`` ∈ {cooperate, defect}: (−c, b) or (0, 0).

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
class PrisonersDilemma:
    """Simultaneous PD built from the donation game (spec §6): each player pays ``c`` to give
    the other ``b``. CC (b − c, b − c) = (4, 4), CD (−c, b), DC (b, −c), DD (0, 0)."""

    key: ClassVar[str] = "pd"
    actions: ClassVar[tuple[str, str]] = ("C", "D")
    n: int = 5
    b: float = 5.0
    c: float = 1.0
    gamma: float = 0.99
    horizon: str = "infinite"
    initial_resources: float = 10.0

    @property
    def n_rounds(self) -> int:
        """Every pair once: n(n − 1)/2 (10 for n = 5)."""
        return self.n * (self.n - 1) // 2

    def payoff(self, first: str, second: str) -> tuple[float, float]:
        """Rewards of (player 1, player 2) for actions in {C, D}.

        Raises
        ------
        ValueError
            Unknown action.
        """
        for a in (first, second):
            if a not in self.actions:
                raise ValueError(f"unknown PD action {a!r}")
        give_1 = first == "C"
        give_2 = second == "C"
        return (
            (self.b if give_2 else 0.0) - (self.c if give_1 else 0.0),
            (self.b if give_1 else 0.0) - (self.c if give_2 else 0.0),
        )


@dataclass(frozen=True)
class TrustGame:
    """Investment (trust) game (spec §6): the investor sends I ∈ [0, resources]; the responder
    receives ``multiplier``·I and returns R ∈ [0, multiplier·I]. Rewards: investor −I + R,
    responder multiplier·I − R. Resources carry over between rounds."""

    key: ClassVar[str] = "trust"
    n: int = 5
    multiplier: float = 3.0
    gamma: float = 0.99
    horizon: str = "finite"
    initial_resources: float = 5.0

    @property
    def n_rounds(self) -> int:
        """Every pair once: n(n − 1)/2 (10 for n = 5)."""
        return self.n * (self.n - 1) // 2

    def payoff(self, invest: float, back: float) -> tuple[float, float]:
        """(investor reward, responder reward) = (−I + R, multiplier·I − R).

        Raises
        ------
        ValueError
            I < 0 or R outside [0, multiplier·I].
        """
        if invest < 0 or not 0 <= back <= self.multiplier * invest + 1e-9:
            raise ValueError(f"invalid trust moves I = {invest}, R = {back}")
        return -invest + back, self.multiplier * invest - back


@dataclass(frozen=True)
class Market:
    """Transaction market / product-choice game (spec §6): the seller picks quality H or L, the
    buyer simultaneously c, s or none. Seller reward = price − cost, buyer reward = value − price:
    Hc (2, 3), Hs (0, 2), Lc (3, 0), Ls (1, 1), none (0, 0)."""

    key: ClassVar[str] = "market"
    seller_actions: ClassVar[tuple[str, str]] = ("H", "L")
    buyer_actions: ClassVar[tuple[str, str, str]] = ("c", "s", "none")
    n_sellers: int = 6
    n_buyers: int = 6
    gamma: float = 0.99
    horizon: str = "infinite"
    initial_resources: float = 10.0
    price_c: float = 3.0
    price_s: float = 1.0
    cost_h: float = 1.0
    cost_l: float = 0.0
    value_hc: float = 6.0
    value_hs: float = 3.0
    value_lc: float = 3.0
    value_ls: float = 2.0

    @property
    def n(self) -> int:
        """All agents, sellers first."""
        return self.n_sellers + self.n_buyers

    @property
    def n_rounds(self) -> int:
        """Every seller–buyer pair once (36)."""
        return self.n_sellers * self.n_buyers

    def payoff(self, quality: str, choice: str) -> tuple[float, float]:
        """(seller reward, buyer reward) for quality ∈ {H, L} and choice ∈ {c, s, none}.

        Raises
        ------
        ValueError
            Unknown action.
        """
        if quality not in self.seller_actions or choice not in self.buyer_actions:
            raise ValueError(f"unknown market actions {quality!r}, {choice!r}")
        if choice == "none":
            return 0.0, 0.0
        price = self.price_c if choice == "c" else self.price_s
        cost = self.cost_h if quality == "H" else self.cost_l
        value = {
            ("H", "c"): self.value_hc,
            ("H", "s"): self.value_hs,
            ("L", "c"): self.value_lc,
            ("L", "s"): self.value_ls,
        }[(quality, choice)]
        return price - cost, value - price


Testbed = DonationGame | PrisonersDilemma | TrustGame | Market


def make_testbed(key: str, **params: object) -> Testbed:
    """The testbed ``key`` with ``params`` overriding its defaults.

    Raises
    ------
    ValueError
        Unknown key (naming the known ones) or unknown parameter.
    """
    classes = {"donation": DonationGame, "pd": PrisonersDilemma, "trust": TrustGame, "market": Market}
    if key not in classes:
        raise ValueError(f"unknown testbed {key!r}; known: {', '.join(TESTBEDS)}")
    try:
        return classes[key](**params)  # type: ignore[arg-type]
    except TypeError as exc:
        raise ValueError(f"testbed {key!r}: {exc}") from None
