"""The parameters of one evolution cell, read from its spec (docs/protocol/evolution.md#reproduction-switches; issue 11).

Every field is part of the cell hash. Protocol defaults (``None`` in the config) resolve here:
V&H amounts in units, truncation selection, no temperature sent (the provider's default, as
the V&H reference did for every model but Claude, arXiv 2412.10270 reference notebook); Horibe
amounts in percent, roulette selection, temperatures 0.8 (strategies) and 0.3 (gameplay), Horibe
et al. arXiv 2608.04507 §B.1. Matrix probes default to the gameplay temperature (§B.4). A
temperature in a model entry's ``params`` wins over all of these (:func:`~coopeval.studies.evolution.agents.role_agent`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from typing import Any

from coopeval.games.donation import PERCENT_BASES, ContinuousDonationGame
from coopeval.studies.evolution.formats import PUNISHMENT_VARIANTS, UNITS
from coopeval.studies.evolution.matrix import CONSTANT_ROW_RULES
from coopeval.studies.evolution.schedule import check_population_size
from coopeval.studies.evolution.selection import SCORE_RULES

PROTOCOLS = ("vh", "horibe")
SELECTIONS = ("truncation_top_half", "roulette")
_GAME = ContinuousDonationGame()  # the stage game's defaults (endowment 10, multiplier 2, punishment loss 2)

PROTOCOL_DEFAULTS: dict[str, dict[str, Any]] = {
    "vh": {"amount_unit": "units", "selection": "truncation_top_half"},
    "horibe": {"amount_unit": "percent", "selection": "roulette", "strategy_temperature": 0.8, "gameplay_temperature": 0.3},
}


@dataclass(frozen=True)
class EvolutionSettings:
    """Resolved parameters of one run (units: resources in units, temperatures as sent;
    ``None`` = no temperature sent, the provider's default).

    ``score_rule``: ``"sum"`` (game 1 + game 2 final resources, default) or ``"game2_double"``
    (``compat.vh_score_game2_only``: 2 × game-2 resources, the reference's bug, docs/protocol/evolution.md#vh-generation-loop).
    ``show_scores``: V&H later-generation prompts include the survivors' scores (default; the
    reference promises them but sends none: ``compat.vh_no_scores``). ``generation_names``:
    show ``{generation}_{index}`` names (V&H reference) instead of neutral ids. ``no_system``:
    omit the rules text (``compat.vh_gemini_no_system``). ``horibe_observation_unstated``: the
    Horibe rules text does not say what a donor observes (``compat.horibe_observation_unstated``,
    the system prompt as printed in arXiv 2608.04507 App. E; by default it is stated, because the
    paper's evolved strategies condition on that chain, §B.2, §B.4).
    """

    protocol: str
    n_agents: int = 12
    generations: int = 10
    endowment: float = _GAME.endowment
    multiplier: float = _GAME.multiplier
    punishment_loss: float = _GAME.punishment_loss
    trace_length: int = 3
    punishment: str = "none"
    percent_base: str = _GAME.percent_base
    amount_unit: str = "units"
    selection: str = "truncation_top_half"
    word_limit: int | None = None
    strategy_temperature: float | None = None
    gameplay_temperature: float | None = None
    invasion_per_generation: int = 10
    invasion_first_generation: int = 1
    matrix_per_generation: int = 10
    matrix_first_generation: int = 1
    matrix_samples: int = 1
    matrix_temperature: float | None = None
    matrix_x_c: float = 50.0
    matrix_resources: float = 10.0
    matrix_round: int = 4
    monotonicity_constant_rows: str = "exclude"
    score_rule: str = "sum"
    show_scores: bool = True
    generation_names: bool = False
    no_system: bool = False
    horibe_observation_unstated: bool = False
    local_strategy_chars: int = 400
    local_reasoning_chars: int = 160
    local_justification_chars: int = 160

    def __post_init__(self) -> None:
        check_population_size(self.n_agents)
        checks = {
            "protocol": (self.protocol, PROTOCOLS),
            "punishment": (self.punishment, PUNISHMENT_VARIANTS),
            "percent_base": (self.percent_base, PERCENT_BASES),
            "amount_unit": (self.amount_unit, UNITS),
            "selection": (self.selection, SELECTIONS),
            "monotonicity_constant_rows": (self.monotonicity_constant_rows, CONSTANT_ROW_RULES),
            "score_rule": (self.score_rule, SCORE_RULES),
        }
        for key, (value, allowed) in checks.items():
            if value not in allowed:
                raise ValueError(f"evolution.{key}: {value!r} is not one of {allowed}")
        if self.generations < 1 or self.trace_length < 1:
            raise ValueError("evolution.generations and evolution.trace_length must be >= 1")

    @property
    def donation_game(self) -> ContinuousDonationGame:
        """The stage game these settings play: the engine's continuous donation game with this
        endowment, multiplier, punishment loss and percent base."""
        return ContinuousDonationGame(self.endowment, self.multiplier, self.punishment_loss, self.percent_base)

    @staticmethod
    def from_params(params: Mapping[str, Any]) -> EvolutionSettings:
        """Settings from a cell's ``params`` (unknown keys raise ``TypeError``; ``None`` values
        take the protocol default)."""
        protocol = str(params["protocol"])
        defaults = PROTOCOL_DEFAULTS.get(protocol, {})
        known = {f.name for f in fields(EvolutionSettings)}
        unknown = sorted(set(params) - known)
        if unknown:
            raise TypeError(f"unknown evolution settings: {', '.join(unknown)}")
        values = {k: v for k, v in params.items() if v is not None}
        for key, value in defaults.items():
            values.setdefault(key, value)
        if protocol == "horibe":
            values.setdefault("word_limit", 350)
        if values.get("gameplay_temperature") is not None:
            values.setdefault("matrix_temperature", values["gameplay_temperature"])
        return EvolutionSettings(**values)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
