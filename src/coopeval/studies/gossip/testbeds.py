"""The four testbeds: the engine's stage games (:mod:`coopeval.games.donation`,
:mod:`coopeval.games.trust`, :mod:`coopeval.games.market`) played by a population over a horizon
(docs/protocol/gossip.md#donation-game, #testbeds), and the registry that declares each testbed
once (:data:`REGISTRY`).

A testbed class is its stage game (whose parameters and payoffs the engine declares) plus the
population and horizon parameters the study adds here: ``n`` agents (or sellers and buyers),
discount ``gamma``, ``horizon`` and ``initial_resources``. All amounts are resource units
("units"). Rewards are the immediate changes of an agent's resources in one interaction;
resources never limit a donation (docs/protocol/gossip.md#donation-game: "informational only"),
but the trust game's investment is bounded by the investor's current resources
(docs/protocol/gossip.md#testbeds).

A parameter is a dataclass field declared with :func:`~coopeval.games.parameters.param`: its
default, unit and (when the config may set it) JSON schema; the ``gossip.testbed_params`` schema
is derived from them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from coopeval.games.donation import BinaryDonationGame, DonationPrisonersDilemma
from coopeval.games.market import ProductChoiceMarket
from coopeval.games.parameters import param, parameter_table, parameters_schema
from coopeval.games.roles import role_names
from coopeval.games.trust import SequentialTrustGame

HORIZONS = ("infinite", "finite")

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
    """The population of a giving game (docs/protocol/gossip.md#donation-game, #testbeds)."""

    n: int = param(9, "agents", _N)
    gamma: float = param(0.99, "", _GAMMA)
    horizon: str = param("infinite", "", _HORIZON)
    initial_resources: float = param(10.0, "units", _NUMBER)


@dataclass(frozen=True)
class DonationGame(BinaryDonationGame, _Giving):
    """The donation-game testbed (docs/protocol/gossip.md#donation-game): the engine's
    :class:`~coopeval.games.donation.BinaryDonationGame` (b = 5, c = 1) among ``n`` agents (9),
    ``n(n − 1)/2`` rounds, discount ``gamma``."""

    key: ClassVar[str] = "donation"


@dataclass(frozen=True)
class PrisonersDilemma(DonationPrisonersDilemma, _Giving):
    """The PD testbed (docs/protocol/gossip.md#testbeds): the engine's
    :class:`~coopeval.games.donation.DonationPrisonersDilemma` (CC (4, 4), CD (−1, 5), DC (5, −1),
    DD (0, 0)) among ``n`` = 5 agents."""

    key: ClassVar[str] = "pd"
    n: int = param(5, "agents", _N)


@dataclass(frozen=True)
class TrustGame(SequentialTrustGame, _EveryPairOnce):
    """The investment (trust) testbed (docs/protocol/gossip.md#testbeds): the engine's
    :class:`~coopeval.games.trust.SequentialTrustGame` (multiplier 3) among ``n`` = 5 agents
    starting with 5 units each; the investment is bounded by the investor's current resources,
    which carry over between rounds. The prompts and every decision's position call the trustee
    the ``responder`` (ALIGN's name: ``prompt_roles``); the store tables keep the game's
    ``investor``/``trustee``."""

    key: ClassVar[str] = "trust"
    prompt_roles: ClassVar[tuple[str, str]] = ("investor", "responder")
    n: int = param(5, "agents", _N)
    gamma: float = param(0.99, "", _GAMMA)
    horizon: str = param("finite", "", _HORIZON)
    initial_resources: float = param(5.0, "units", {"type": "number", "minimum": 0})


@dataclass(frozen=True)
class Market(ProductChoiceMarket):
    """The transaction-market testbed (docs/protocol/gossip.md#testbeds): the engine's
    :class:`~coopeval.games.market.ProductChoiceMarket` between ``n_sellers`` sellers and
    ``n_buyers`` buyers (6 each), every seller–buyer pair once."""

    key: ClassVar[str] = "market"
    n_sellers: int = param(6, "agents", {"type": "integer", "minimum": 1, "maximum": 6})
    n_buyers: int = param(6, "agents", {"type": "integer", "minimum": 1, "maximum": 6})
    gamma: float = param(0.99, "", _GAMMA)
    horizon: str = param("infinite", "", _HORIZON)
    initial_resources: float = param(10.0, "units")

    @property
    def n(self) -> int:
        """All agents, sellers first."""
        return self.n_sellers + self.n_buyers

    @property
    def n_rounds(self) -> int:
        """Every seller–buyer pair once (36)."""
        return self.n_sellers * self.n_buyers


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
        The testbed class (its stage game plus population parameters); its
        :func:`~coopeval.games.parameters.param` fields are the testbed's parameters and its
        stage game's ``roles`` name the two agents of a round (:attr:`roles`).
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
    acting: tuple[str, ...]
    witnesses: tuple[str, ...]
    cooperative_action: str | None
    schedule: str
    attackers: bool
    templates: tuple[str, ...]
    gossip_templates: tuple[str, ...]

    @property
    def roles(self) -> tuple[str, str]:
        """What the two agents of a round are (first, second), as distinct names
        (:func:`~coopeval.games.roles.role_names` of the stage game's ``roles``): donor/recipient,
        player_1/player_2, investor/trustee, seller/buyer. The store names the columns of the
        testbed's rounds view after them (:mod:`coopeval.studies.gossip.records`)."""
        return role_names(self.game)

    @property
    def simultaneous(self) -> bool:
        """Whether the two agents move at the same time (PD, market), as the stage game declares."""
        return self.game.simultaneous

    @property
    def prompt_roles(self) -> tuple[str, str]:
        """The roles as the prompts and the decisions' positions name them: the stage game's
        ``roles`` unless the testbed class renames them (``prompt_roles``: the trust game's
        ``responder``); the PD's two agents are both ``player``."""
        renamed: tuple[str, str] | None = getattr(self.game, "prompt_roles", None)
        return renamed if renamed is not None else self.game.roles

    def parameters(self) -> dict[str, tuple[Any, str]]:
        """``name -> (default, unit)`` of every parameter."""
        return parameter_table(self.game)

    def config_schema(self) -> dict[str, Any]:
        """JSON schema of ``gossip.testbed_params.<key>``: the settable parameters, each with
        its unit as description."""
        return parameters_schema(self.game)


REGISTRY: dict[str, TestbedEntry] = {
    e.key: e
    for e in (
        TestbedEntry(
            "donation", "Donation game", DonationGame, ("donor",), ("recipient",), "cooperate",
            "alternating", True,
            templates=(
                "situation", "choice", "deed_cooperated", "deed_defected", "their_cooperated", "their_defected",
                "memory_donor", "memory_recipient",
            ),
            gossip_templates=("witness", "seen_cooperated", "seen_defected", "=post_theirs_then", "=post_mine_then"),
        ),
        TestbedEntry(
            "pd", "Prisoner's dilemma", PrisonersDilemma, ("player", "player"), ("player", "player"), "C",
            "circle", True,
            templates=("situation", "choice", "memory"),
            gossip_templates=("witness", "=post_mine", "=post_theirs_about_me"),
        ),
        TestbedEntry(
            "trust", "Trust game", TrustGame, ("investor", "responder"), ("investor", "responder"), None,
            "alternating", False,
            templates=(
                "investor_situation", "investor_choice", "responder_situation", "responder_choice", "memory_investor",
                "memory_responder",
            ),
            gossip_templates=("investor_witness", "responder_witness", "=post_mine", "=post_theirs_about_me"),
        ),
        TestbedEntry(
            "market", "Market", Market, ("seller", "buyer"), ("buyer",), "H",
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
