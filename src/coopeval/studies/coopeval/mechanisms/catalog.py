"""The mechanism registry: every fact about a mechanism, declared once in its
:class:`MechanismInfo` entry: type name, display labels, row order (the entry order), its
parameters (a frozen dataclass with defaults, bounds and units in the descriptions), traits,
play cost, the implementing class and the released data's folder stem.

The config schema (enums, ``mechanism_params``), the Snakemake wildcard constraint, the cell
defaults, the rules (which cells have designs), the tables (labels, order), the figures (which
charts exist), the reference importer (folder stems) and :func:`~coopeval.studies.coopeval.mechanisms.get_mechanism`
all read this table. A plugin adds a mechanism with :func:`register_mechanism` (one call at
import): the dicts are updated in place and the tuples rebound, so code that needs plugin
mechanisms reads the dicts, the functions or ``catalog.<NAME>`` at call time.
Parameters and defaults: CoopEval (arXiv 2604.15267) docs/protocol/mechanisms.md and docs/protocol/mechanisms.md#repetition, #reputation, #mediation, #contracting, docs/protocol/tournament.md#tournament-driver.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from coopeval.core.errors import registry_entry


def _param(default: Any, description: str, **bounds: Any) -> Any:
    """A dataclass field whose metadata carries its JSON-schema bounds and description."""
    return field(default=default, metadata={"description": description, **bounds})


@dataclass(frozen=True)
class NoParams:
    """A mechanism without parameters (NoMechanism, Mediation)."""


@dataclass(frozen=True)
class RepetitionParams:
    """Repeated play with the same co-players (docs/protocol/mechanisms.md#repetition)."""

    num_rounds: int = _param(15, "Rounds T of every match-up.", minimum=1)
    discount: float = _param(0.8, "Continuation probability δ (also the score's discount, docs/protocol/tournament.md#delta-weighted-score).", exclusiveMinimum=0, maximum=1)
    lookup_depth: int = _param(3, "Past rounds k shown in the prompt.", minimum=1)


@dataclass(frozen=True)
class ReputationFirstOrderParams(RepetitionParams):
    """Reputation− (docs/protocol/mechanisms.md#reputation): each co-player's own last k moves."""

    max_recursion_depth: int = _param(1, "Depth of the reputation tree (1 = first order).", minimum=1)


@dataclass(frozen=True)
class ReputationParams(RepetitionParams):
    """Reputation+ (docs/protocol/mechanisms.md#reputation): higher-order reputation trees."""

    max_recursion_depth: int = _param(3, "Depth of the reputation tree (follows k in the ablations).", minimum=1)


@dataclass(frozen=True)
class ContractingParams:
    """Contracting (docs/protocol/tournament.md#tournament-driver)."""

    value_bounds: tuple[int, int] | None = _param(
        None, "Optional inclusive [low, high] bounds on contract values (off by default)."
    )


@dataclass(frozen=True)
class MechanismInfo:
    """The declared traits of one mechanism.

    Attributes
    ----------
    name:
        Type name (the reference's, used in every table), e.g. ``"ReputationFirstOrder"``.
    label:
        Display label in tables and figures, e.g. ``"Reputation−"``.
    params:
        The parameter dataclass (fields with defaults and schema bounds).
    design_kind:
        ``"mediator"`` or ``"contract"`` for mechanisms whose agents submit designs (docs/protocol/design-checks.md#ns-wd),
        else ``None``.
    population_game:
        True for Reputation± (agents meet a population, no metagame: no Fitness or DR, docs/protocol/mechanisms.md#reputation).
    conditional:
        True where past moves are shown, so conditional action frequencies are meaningful.
    play_cost_weight:
        Relative cost per seat of a cell (others 1): Reputation+ prompts carry depth-3 history
        trees (850–2,400 tokens for the embedded model), Reputation− and Repetition 15 rounds.
    implementation:
        The class that plays the mechanism, as ``"module:Class"`` (imported lazily by
        :func:`coopeval.studies.coopeval.mechanisms.mechanism_class`).
    reference_stem:
        The mechanism's part of the released data's experiment-folder names (docs/protocol/reference-data.md#layout), e.g.
        ``"reputation_first_order"``.
    tex_label:
        The label in LaTeX tables (default: :attr:`label`, escaped).
    prompt_prefix:
        The mechanism's prompt templates are ``<prefix>.txt`` and ``<prefix>_*.txt`` in the
        prompts folder (``resources/prompts``); empty for a mechanism without its own section.
    """

    name: str
    label: str
    params: type
    implementation: str
    reference_stem: str
    design_kind: str | None = None
    population_game: bool = False
    conditional: bool = False
    play_cost_weight: int = 1
    tex_label: str | None = None
    prompt_prefix: str = ""

    @property
    def delegates_actions(self) -> bool:
        """Whether adopted designs play the agents' moves (a mediator, docs/protocol/mechanisms.md#mediation)."""
        return self.design_kind == "mediator"

    @property
    def has_designs(self) -> bool:
        """Whether agents submit mediator or contract designs."""
        return self.design_kind is not None

    def defaults(self) -> dict[str, Any]:
        """Default parameters (those with a non-``None`` default)."""
        return {f.name: f.default for f in dataclasses.fields(self.params) if f.default is not None}

    def parse_params(self, params: Mapping[str, Any]) -> Any:
        """The parameter dataclass of ``params`` (defaults filled in).

        Raises
        ------
        TypeError
            For a key the mechanism does not have.
        """
        return self.params(**dict(params))

    def params_schema(self) -> dict[str, Any]:
        """The JSON-schema object of the parameters (defaults, bounds, descriptions)."""
        properties: dict[str, Any] = {}
        for f in dataclasses.fields(self.params):
            meta = dict(f.metadata)
            if f.type in ("int", int):
                prop: dict[str, Any] = {"type": "integer"}
            elif f.type in ("float", float):
                prop = {"type": "number"}
            else:  # (int, int) bounds
                prop = {"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 2}
            prop.update(meta)
            if f.default is not None:
                prop["default"] = f.default
            properties[f.name] = prop
        return {"type": "object", "additionalProperties": False, "properties": properties}


_MODULE = "coopeval.studies.coopeval.mechanisms"

MECHANISMS: tuple[MechanismInfo, ...] = (
    MechanismInfo("NoMechanism", "NoMechanism", NoParams, f"{_MODULE}.repetition:NoMechanism", "no_mechanism"),
    MechanismInfo(
        "Repetition", "Repetition", RepetitionParams, f"{_MODULE}.repetition:Repetition", "repetition",
        conditional=True, play_cost_weight=2, prompt_prefix="repetition",
    ),
    MechanismInfo(
        "ReputationFirstOrder", "Reputation−", ReputationFirstOrderParams,
        f"{_MODULE}.reputation:ReputationFirstOrder", "reputation_first_order",
        population_game=True, conditional=True, play_cost_weight=2, tex_label="Reputation$-$",
        prompt_prefix="reputation",
    ),
    MechanismInfo(
        "Reputation", "Reputation+", ReputationParams, f"{_MODULE}.reputation:Reputation", "reputation",
        population_game=True, conditional=True, play_cost_weight=4, tex_label="Reputation$+$",
        prompt_prefix="reputation",
    ),
    MechanismInfo(
        "Mediation", "Mediation", NoParams, f"{_MODULE}.mediation:Mediation", "mediation", design_kind="mediator",
        prompt_prefix="mediation",
    ),
    MechanismInfo(
        "Contracting", "Contracting", ContractingParams, f"{_MODULE}.contracting:Contracting", "contracting",
        design_kind="contract", prompt_prefix="contracting",
    ),
)
"""In the paper's row order."""

# The indexes below are derived from MECHANISMS by _index_mechanisms (at import and after each
# registration): the dicts are updated in place, the tuples rebound.
MECHANISM_INFO: dict[str, MechanismInfo] = {}
"""Type name → entry, in row order."""
MECHANISM_ORDER: tuple[str, ...] = ()
"""Type names in row order."""
MECHANISM_LABELS: dict[str, str] = {}
"""Type name → display label."""
DESIGN_MECHANISMS: tuple[str, ...] = ()
"""Mechanisms whose agents submit mediator or contract designs."""
POPULATION_MECHANISMS: frozenset[str] = frozenset()
"""Mechanisms whose agents meet a population (no metagame: no Fitness or DR)."""
CONDITIONAL_MECHANISMS: tuple[str, ...] = ()
"""Mechanisms that show past moves (conditional action frequencies are meaningful)."""
DELEGATING_MECHANISMS: tuple[str, ...] = ()
"""Mechanisms whose adopted designs play the agents' moves (a mediator)."""
REFERENCE_STEMS: dict[str, str] = {}
"""Released-data folder stem → type name (docs/protocol/reference-data.md#layout)."""


def _index_mechanisms() -> None:
    """Derive every index above from :data:`MECHANISMS`."""
    global MECHANISM_ORDER, DESIGN_MECHANISMS, POPULATION_MECHANISMS, CONDITIONAL_MECHANISMS, DELEGATING_MECHANISMS
    MECHANISM_INFO.update((m.name, m) for m in MECHANISMS)
    MECHANISM_LABELS.update((m.name, m.label) for m in MECHANISMS)
    REFERENCE_STEMS.update((m.reference_stem, m.name) for m in MECHANISMS)
    MECHANISM_ORDER = tuple(MECHANISM_INFO)
    DESIGN_MECHANISMS = tuple(m.name for m in MECHANISMS if m.has_designs)
    POPULATION_MECHANISMS = frozenset(m.name for m in MECHANISMS if m.population_game)
    CONDITIONAL_MECHANISMS = tuple(m.name for m in MECHANISMS if m.conditional)
    DELEGATING_MECHANISMS = tuple(m.name for m in MECHANISMS if m.delegates_actions)


_index_mechanisms()
SHIPPED_MECHANISMS: tuple[str, ...] = MECHANISM_ORDER
"""The mechanisms this package ships: the config's default ``mechanisms``. A plugin's mechanism
joins the indexes above but plays only where a config names it."""


def register_mechanism(info: MechanismInfo) -> None:
    """Add a mechanism (a plugin's) after the built-in ones, in every registry above (config
    schema enums and ``mechanism_params``, the ``{mechanism}`` wildcard constraint, table order).
    ``info.implementation`` names its class as ``"module:Class"``, imported when a cell plays.

    Raises
    ------
    ValueError
        If its type name or ``reference_stem`` is already registered (give it new ones).
    """
    global MECHANISMS
    if info.name in MECHANISM_INFO or info.reference_stem in REFERENCE_STEMS:
        raise ValueError(f"mechanism {info.name!r} (stem {info.reference_stem!r}) is already registered; give the new mechanism another name and reference_stem")
    MECHANISMS = (*MECHANISMS, info)
    _index_mechanisms()


def mechanism_name_pattern() -> str:
    """A regular expression matching exactly the registered type names (a Snakemake wildcard
    constraint for ``{mechanism}``), e.g. ``NoMechanism|Repetition|…``."""
    return "|".join(MECHANISM_INFO)


def mechanism_info(name: str) -> MechanismInfo:
    """The traits of a mechanism type name.

    Raises
    ------
    KeyError
        Naming the known mechanisms.
    """
    return registry_entry(MECHANISM_INFO, name, "mechanism", "mechanisms", known=MECHANISM_ORDER)
