"""The four testbeds: parameters with units and stage payoffs (docs/protocol/gossip.md#donation-game, #testbeds), and the registry
that declares each testbed once (:data:`REGISTRY`).

All amounts are resource units ("units"). Rewards are the immediate changes of an agent's
resources in one interaction; resources never limit a donation (docs/protocol/gossip.md#donation-game: "informational only"),
but the trust game's investment is bounded by the investor's current resources (docs/protocol/gossip.md#testbeds).

A parameter is a dataclass field declared with :func:`param`: its default, unit and (when the
config may set it) JSON schema; the ``gossip.testbed_params`` schema is derived from them.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Any, ClassVar

HORIZONS = ("infinite", "finite")


def param(default: Any, unit: str, schema: dict[str, Any] | None = None) -> Any:
    """A testbed parameter: ``default``, its ``unit`` ("" if dimensionless) and the JSON schema
    of its config value (None: fixed, not settable in ``gossip.testbed_params``)."""
    return field(default=default, metadata={"unit": unit, "schema": schema})


_N = {"type": "integer", "minimum": 2, "maximum": 12}
_GAMMA = {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1}
_HORIZON = {"enum": list(HORIZONS)}
_NUMBER = {"type": "number"}


@dataclass(frozen=True)
class _EveryPairOnce:
    """``n`` agents meeting every other agent once: n(n − 1)/2 rounds."""

    n: int

    @property
    def n_rounds(self) -> int:
        """n(n − 1)/2 (36 for n = 9, 10 for n = 5), an integer (the reference prints "36.0")."""
        return self.n * (self.n - 1) // 2


@dataclass(frozen=True)
class _Giving(_EveryPairOnce):
    """The parameters of a giving game: paying ``c`` gives the partner ``b`` (docs/protocol/gossip.md#donation-game, #testbeds)."""

    n: int = param(9, "agents", _N)
    b: float = param(5.0, "units", _NUMBER)
    c: float = param(1.0, "units", _NUMBER)
    gamma: float = param(0.99, "", _GAMMA)
    horizon: str = param("infinite", "", _HORIZON)
    initial_resources: float = param(10.0, "units", _NUMBER)


@dataclass(frozen=True)
class DonationGame(_Giving):
    """Donation game (docs/protocol/gossip.md#donation-game): the donor cooperates (pays ``c``; the recipient gains ``b``) or
    defects (both 0). ``n`` agents (9), ``n(n − 1)/2`` rounds, discount ``gamma``."""

    key: ClassVar[str] = "donation"
    actions: ClassVar[tuple[str, str]] = ("cooperate", "defect")

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
class PrisonersDilemma(_Giving):
    """Simultaneous PD built from the donation game (docs/protocol/gossip.md#testbeds): each player pays ``c`` to give
    the other ``b``. CC (b − c, b − c) = (4, 4), CD (−c, b), DC (b, −c), DD (0, 0); ``n`` = 5."""

    key: ClassVar[str] = "pd"
    actions: ClassVar[tuple[str, str]] = ("C", "D")
    n: int = param(5, "agents", _N)

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
class TrustGame(_EveryPairOnce):
    """Investment (trust) game (docs/protocol/gossip.md#testbeds): the investor sends I ∈ [0, resources]; the responder
    receives ``multiplier``·I and returns R ∈ [0, multiplier·I]. Rewards: investor −I + R,
    responder multiplier·I − R. Resources carry over between rounds."""

    key: ClassVar[str] = "trust"
    n: int = param(5, "agents", _N)
    multiplier: float = param(3.0, "", {"type": "number", "exclusiveMinimum": 0})
    gamma: float = param(0.99, "", _GAMMA)
    horizon: str = param("finite", "", _HORIZON)
    initial_resources: float = param(5.0, "units", {"type": "number", "minimum": 0})

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
    """Transaction market / product-choice game (docs/protocol/gossip.md#testbeds): the seller picks quality H or L, the
    buyer simultaneously c, s or none. Seller reward = price − cost, buyer reward = value − price:
    Hc (2, 3), Hs (0, 2), Lc (3, 0), Ls (1, 1), none (0, 0)."""

    key: ClassVar[str] = "market"
    seller_actions: ClassVar[tuple[str, str]] = ("H", "L")
    buyer_actions: ClassVar[tuple[str, str, str]] = ("c", "s", "none")
    n_sellers: int = param(6, "agents", {"type": "integer", "minimum": 1, "maximum": 6})
    n_buyers: int = param(6, "agents", {"type": "integer", "minimum": 1, "maximum": 6})
    gamma: float = param(0.99, "", _GAMMA)
    horizon: str = param("infinite", "", _HORIZON)
    initial_resources: float = param(10.0, "units")
    price_c: float = param(3.0, "units")
    price_s: float = param(1.0, "units")
    cost_h: float = param(1.0, "units")
    cost_l: float = param(0.0, "units")
    value_hc: float = param(6.0, "units")
    value_hs: float = param(3.0, "units")
    value_lc: float = param(3.0, "units")
    value_ls: float = param(2.0, "units")

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


@dataclass(frozen=True)
class TestbedEntry:
    """Everything the study knows about one testbed, declared once.

    Attributes
    ----------
    key:
        Config name (``gossip.testbeds``); also the name of its round module
        (``rounds/<key>.py``) and the prefix of its prompt templates (``<key>_*.txt``).
    title:
        Display title in figures and tables.
    game:
        The payoff class; its :func:`param` fields are the testbed's parameters.
    roles:
        What the two agents of a round are (first, second): donor/recipient, player/player,
        investor/responder, seller/buyer.
    acting:
        The roles asked for an action each round (one model decision each).
    witnesses:
        The roles publishing an assessment each round when gossip is on.
    cooperative_action:
        The action token counted as cooperation in figures (None: the trust game's amounts).
    schedule:
        ``alternating`` (``gossip.matching``: align_sweep or random_alternating, roles switch),
        ``circle`` (PD: the circle method under align_sweep, else random alternating) or
        ``bipartite`` (market: every seller–buyer pair once, seeded order).
    attackers:
        Whether Max and the collusive attackers exist for it (docs/protocol/gossip.md#scope, #greedy-defector, #collusive-attackers).
    templates:
        Its prompt templates rendered in every cell (besides ``<key>_overview`` and ``<key>_title``).
    gossip_templates:
        Its prompt templates rendered only when gossip is on (besides ``<key>_who_posts``).
    """

    key: str
    title: str
    game: type[Testbed]
    roles: tuple[str, str]
    acting: tuple[str, ...]
    witnesses: tuple[str, ...]
    cooperative_action: str | None
    schedule: str
    attackers: bool
    templates: tuple[str, ...]
    gossip_templates: tuple[str, ...]

    def parameters(self) -> dict[str, tuple[Any, str]]:
        """``name -> (default, unit)`` of every parameter."""
        return {f.name: (f.default, f.metadata.get("unit", "")) for f in fields(self.game) if f.default is not MISSING}

    def config_schema(self) -> dict[str, Any]:
        """JSON schema of ``gossip.testbed_params.<key>``: the settable parameters, each with
        its unit as description."""
        props = {}
        for f in fields(self.game):
            schema = f.metadata.get("schema")
            if schema is not None:
                unit = f.metadata.get("unit", "")
                props[f.name] = {**schema, **({"description": unit} if unit else {})}
        return {"type": "object", "additionalProperties": False, "properties": props}


REGISTRY: dict[str, TestbedEntry] = {
    e.key: e
    for e in (
        TestbedEntry(
            "donation", "Donation game", DonationGame, ("donor", "recipient"), ("donor",), ("recipient",), "cooperate",
            "alternating", True,
            templates=(
                "situation", "choice", "deed_cooperated", "deed_defected", "their_cooperated", "their_defected",
                "memory_donor", "memory_recipient",
            ),
            gossip_templates=("witness", "seen_cooperated", "seen_defected", "=post_theirs_then", "=post_mine_then"),
        ),
        TestbedEntry(
            "pd", "Prisoner's dilemma", PrisonersDilemma, ("player", "player"), ("player", "player"), ("player", "player"), "C",
            "circle", True,
            templates=("situation", "choice", "memory"),
            gossip_templates=("witness", "=post_mine", "=post_theirs_about_me"),
        ),
        TestbedEntry(
            "trust", "Trust game", TrustGame, ("investor", "responder"), ("investor", "responder"), ("investor", "responder"), None,
            "alternating", False,
            templates=(
                "investor_situation", "investor_choice", "responder_situation", "responder_choice", "memory_investor",
                "memory_responder",
            ),
            gossip_templates=("investor_witness", "responder_witness", "=post_mine", "=post_theirs_about_me"),
        ),
        TestbedEntry(
            "market", "Market", Market, ("seller", "buyer"), ("seller", "buyer"), ("buyer",), "H",
            "bipartite", False,
            templates=("seller_situation", "seller_choice", "buyer_situation", "buyer_choice", "memory_seller", "memory_buyer"),
            gossip_templates=("witness", "=post_theirs", "=post_mine"),
        ),
    )
}
"""The testbeds in display order (figures, tables, schema enum). Template names are relative to
the testbed (``situation`` is ``<key>_situation.txt``); a leading ``=`` names a shared template."""

TESTBEDS: tuple[str, ...] = tuple(REGISTRY)
"""Testbed keys of the config (``gossip.testbeds``), in display order."""


COOPERATIVE_ACTIONS: tuple[str, ...] = tuple(e.cooperative_action for e in REGISTRY.values() if e.cooperative_action)
"""The action tokens counted as cooperation (``cooperate``, ``C``, ``H``)."""


def testbed_entry(key: str) -> TestbedEntry:
    """The registry entry of ``key``.

    Raises
    ------
    ValueError
        Unknown key, naming the known ones.
    """
    if key not in REGISTRY:
        raise ValueError(f"unknown testbed {key!r}; known: {', '.join(TESTBEDS)}")
    return REGISTRY[key]


def make_testbed(key: str, **params: object) -> Testbed:
    """The testbed ``key`` with ``params`` overriding its defaults.

    Raises
    ------
    ValueError
        Unknown key (naming the known ones) or unknown parameter.
    """
    game = testbed_entry(key).game
    try:
        return game(**params)  # type: ignore[arg-type]
    except TypeError as exc:
        raise ValueError(f"testbed {key!r}: {exc}") from None
