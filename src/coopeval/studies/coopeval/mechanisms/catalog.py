"""Every fact about a mechanism, declared once: its parameters (a frozen dataclass with
defaults and bounds), display label, traits and play cost.

The config schema's ``mechanism_params`` part, the cell defaults, the rules (which cells have
designs), the tables (labels, order) and the figures (which charts exist) all read this table.
Parameters and defaults: CoopEval (arXiv 2604.15267) §4 and spec §4.2–4.6.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


def _param(default: Any, description: str, **bounds: Any) -> Any:
    """A dataclass field whose metadata carries its JSON-schema bounds and description."""
    return field(default=default, metadata={"description": description, **bounds})


@dataclass(frozen=True)
class NoParams:
    """A mechanism without parameters (NoMechanism, Mediation)."""


@dataclass(frozen=True)
class RepetitionParams:
    """Repeated play with the same co-players (spec §4.2)."""

    num_rounds: int = _param(15, "Rounds T of every match-up.", minimum=1)
    discount: float = _param(0.8, "Continuation probability δ (also the score's discount, spec §4.7).", exclusiveMinimum=0, maximum=1)
    lookup_depth: int = _param(3, "Past rounds k shown in the prompt.", minimum=1)


@dataclass(frozen=True)
class ReputationFirstOrderParams(RepetitionParams):
    """Reputation− (spec §4.3): each co-player's own last k moves."""

    max_recursion_depth: int = _param(1, "Depth of the reputation tree (1 = first order).", minimum=1)


@dataclass(frozen=True)
class ReputationParams(RepetitionParams):
    """Reputation+ (spec §4.3): higher-order reputation trees."""

    max_recursion_depth: int = _param(3, "Depth of the reputation tree (follows k in the ablations).", minimum=1)


@dataclass(frozen=True)
class ContractingParams:
    """Contracting (spec §4.6)."""

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
        ``"mediator"`` or ``"contract"`` for mechanisms whose agents submit designs (spec §8),
        else ``None``.
    population_game:
        True for Reputation± (agents meet a population, no metagame: no Fitness or DR, spec §4.3).
    conditional:
        True where past moves are shown, so conditional action frequencies are meaningful.
    play_cost_weight:
        Relative cost per seat of a cell (others 1): Reputation+ prompts carry depth-3 history
        trees (850–2,400 tokens for the embedded model), Reputation− and Repetition 15 rounds.
    """

    name: str
    label: str
    params: type
    design_kind: str | None = None
    population_game: bool = False
    conditional: bool = False
    play_cost_weight: int = 1

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


MECHANISMS: tuple[MechanismInfo, ...] = (
    MechanismInfo("NoMechanism", "NoMechanism", NoParams),
    MechanismInfo("Repetition", "Repetition", RepetitionParams, conditional=True, play_cost_weight=2),
    MechanismInfo(
        "ReputationFirstOrder", "Reputation−", ReputationFirstOrderParams,
        population_game=True, conditional=True, play_cost_weight=2,
    ),
    MechanismInfo(
        "Reputation", "Reputation+", ReputationParams, population_game=True, conditional=True, play_cost_weight=4
    ),
    MechanismInfo("Mediation", "Mediation", NoParams, design_kind="mediator"),
    MechanismInfo("Contracting", "Contracting", ContractingParams, design_kind="contract"),
)
"""In the paper's row order."""

MECHANISM_INFO: dict[str, MechanismInfo] = {m.name: m for m in MECHANISMS}
MECHANISM_ORDER: tuple[str, ...] = tuple(MECHANISM_INFO)
MECHANISM_LABELS: dict[str, str] = {m.name: m.label for m in MECHANISMS}
DESIGN_MECHANISMS: tuple[str, ...] = tuple(m.name for m in MECHANISMS if m.has_designs)
POPULATION_MECHANISMS: frozenset[str] = frozenset(m.name for m in MECHANISMS if m.population_game)
CONDITIONAL_MECHANISMS: tuple[str, ...] = tuple(m.name for m in MECHANISMS if m.conditional)


def mechanism_info(name: str) -> MechanismInfo:
    """The traits of a mechanism type name.

    Raises
    ------
    KeyError
        Naming the known mechanisms.
    """
    if name not in MECHANISM_INFO:
        raise KeyError(f"unknown mechanism {name!r}; known mechanisms: {', '.join(MECHANISM_ORDER)}")
    return MECHANISM_INFO[name]
