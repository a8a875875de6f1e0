"""What every part of an evolution run shares: its settings, positions, random streams and the
one call path (docs/protocol/evolution.md#storage "cache position"; engineering rules on RNG).

Every call goes through :meth:`DecisionMaker.decide` with the position ``{study, seed, run,
generation, context, game, round, pair, role, kind[, sample]}`` (cache key and provider seed);
random draws come from named streams ``rng_for(seed, "evolution", run_key, generation,
purpose, …)``, so a step's result never depends on how it was reached. Each call's attempts and
decision become rows of the shared ``llm_calls`` and ``decisions`` tables.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from coopeval.agents.maker import DecisionMaker, DecisionOutcome
from coopeval.agents.protocol import Agent
from coopeval.agents.recorder import record_decision
from coopeval.core.rng import rng_for, seed_int_for
from coopeval.games.donation import ContinuousDonationGame
from coopeval.studies.evolution.population import RunAgents
from coopeval.studies.evolution.prompting import EvolutionPrompts
from coopeval.studies.evolution.records import StepRecords
from coopeval.studies.evolution.selection import selection_score
from coopeval.studies.evolution.settings import EvolutionSettings


def temperature_of(agent: Agent) -> float | None:
    """The temperature an agent sends (``None`` for bots and for the provider's default)."""
    value = agent.params.get("temperature") if agent.cacheable else None
    return float(value) if value is not None else None


@dataclass(eq=False)
class RunContext:
    """The shared state of one run (protocol × model × variant × replicate).

    Attributes
    ----------
    settings:
        The run's resolved parameters (protocol, population size, generations, donation-game
        parameters and punishment variant; :class:`~coopeval.studies.evolution.settings.EvolutionSettings`).
    maker:
        The shared decision loop.
    prompts:
        The run's prompt renderer.
    agents:
        The run's agents.
    seed:
        The config seed (named RNG streams and provider seeds).
    run_key:
        Hash of everything that shapes the run's trajectory (not the number of generations):
        part of every position, so different runs never share an answer.
    base:
        Identifying columns of every row (cell_id, source, run, protocol, model, variant); copied.
    label:
        Prefix of progress lines on stderr.
    donation:
        The run's donation game (derived from ``settings``).
    shared_base:
        The shared tables' identifying columns of every row (derived from ``settings`` and ``base``).
    """

    settings: EvolutionSettings
    maker: DecisionMaker
    prompts: EvolutionPrompts
    agents: RunAgents
    seed: int
    run_key: str
    base: Mapping[str, Any]
    label: str = "evolution"
    donation: ContinuousDonationGame = field(init=False)
    shared_base: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self.base = dict(self.base)
        self.donation = self.settings.donation_game
        self.shared_base = {
            "cell_id": self.base.get("cell_id"),
            "source": "ours",
            "run": self.base.get("run"),
            "mechanism": f"evolution/{self.settings.protocol}",
            "game": "donor_game",
            "study": "evolution",  # the shared tables' study column, where the schema has it
        }

    def position(self, generation: int, context: str, game: int, round_: int, pair: int, role: str, kind: str, **extra: Any) -> dict[str, Any]:
        """The decision's position (docs/protocol/evolution.md#storage "cache position")."""
        return {
            "study": "evolution",
            "seed": self.seed,
            "run": self.run_key,
            "generation": generation,
            "context": context,
            "game": game,
            "round": round_,
            "pair": pair,
            "role": role,
            "kind": kind,
            **extra,
        }

    def score(self, game1: float, game2: float) -> float:
        """The run's selection score (:func:`~coopeval.studies.evolution.selection.selection_score`)."""
        return selection_score(game1, game2, self.settings.score_rule)

    def rng(self, generation: int, *purpose: str | int) -> np.random.Generator:
        """The named random stream of ``purpose`` in ``generation``."""
        return rng_for(self.seed, "evolution", self.run_key, generation, *purpose)

    async def call(
        self,
        records: StepRecords,
        agent: Agent,
        body: str,
        fmt: Any,
        pos: Mapping[str, Any],
        state: Mapping[str, Any],
    ) -> DecisionOutcome:
        """One decision through the shared loop; its attempt and decision rows are recorded."""
        provider_seed = seed_int_for(self.seed, *(str(v) if not isinstance(v, int) else v for v in pos.values()))
        outcome = await self.maker.decide(agent, body, fmt, pos, state=state, seed=provider_seed)
        matchup = f"g{pos['generation']}/{pos['context']}/game{pos['game']}"
        rows = record_decision(
            outcome,
            agent.name,
            str(fmt.kind),
            {**self.shared_base, "matchup_id": matchup, "round": pos["round"], "seat": int(pos["pair"]) + 1},
            {"match_id": json.dumps(dict(pos), sort_keys=True)},
        )
        for call in rows.calls:
            records.add("llm_calls", call)
        records.add("decisions", rows.decision)
        return outcome
