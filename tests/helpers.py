"""The one test helper to play a configured cell of any study, in the spirit of Axelrod-Python's
``versus_test``.

:func:`play_study` works for every study through the :class:`~coopeval.studies.base.Study`
contract: the config is validated as the workflow does
(:func:`coopeval.pipeline.config.validate_config` fills the defaults and checks the keys), the
study's ``cells`` give the cell spec and its id, and the cell is played with the study's prompt
templates. ``agents`` maps the name a configured model has in the study's tables (the
``agent`` column of CoopEval and gossip, the ``model`` column of evolution) to a scripted
stand-in that plays in its place; every other model is built as in a real run. Assert on the
returned tables, e.g.::

    tables = play_study("gossip", {"gossip": {"testbeds": ["pd"], "conditions": ["align"],
                                              "models": [{"model": "fake/gossip"}]}},
                        agents={"fake/gossip(IO)": FakeGossipLLM()})

For CoopEval, :func:`play_bots` is the shorthand that also writes the roster: a test names a
mechanism, a game and its players, bot names (``"tit-for-tat"`` or ``"bot/tit-for-tat"``) or
agent objects (test-only bots, :class:`coopeval.agents.mock.MockLLM`). Agent objects play as
given; only registered bots and mock models are written into the config, which names the cell.
Its tables: ``decisions``, ``llm_calls``, ``matchups``, ``designs``, ``votes``, ``selections``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.agents.bots import BOTS, make_bot
from coopeval.agents.maker import CallStats
from coopeval.agents.protocol import Agent
from coopeval.agents.registry import agent_name, make_agent
from coopeval.cache.response_cache import ResponseCache
from coopeval.core.prompts import PromptLibrary
from coopeval.pipeline.config import validate_config
from coopeval.pipeline.studies import get_study, prompts_dir
from coopeval.studies.base import PlayInputs, Study
from coopeval.studies.coopeval.cells import build_cells
from coopeval.studies.coopeval.play import play_cell
from coopeval.studies.evolution.agents import run_agents
from coopeval.studies.evolution.bots import AlwaysZero
from coopeval.studies.evolution.config import model_label
from coopeval.studies.evolution.runner import RunAgents
from coopeval.studies.evolution.study import EvolutionStudy
from tests.shared_data import PROMPTS_DIR

REPO = Path(__file__).resolve().parents[1]
PROMPTS = PromptLibrary(PROMPTS_DIR)

Player = str | Agent
Tables = dict[str, pl.DataFrame]
StandIns = Mapping[str, Any]
"""Table name of a configured model → the agent playing in its place (for evolution also a
:class:`~coopeval.studies.evolution.runner.RunAgents`)."""

PLACEHOLDER_ROSTER = [{"model": "bot/always-cooperate"}]
"""The CoopEval ``agents`` the schema requires even when another study runs alone; unused."""


def study_cells(study: str, config: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The cells the workflow builds for ``study`` alone from the raw ``config`` (overlay keys
    as in a config file; ``studies`` is set to ``[study]``; ``prompts_dir`` defaults to the
    repository's, whatever the working directory)."""
    raw = {"agents": PLACEHOLDER_ROSTER, "prompts_dir": str(PROMPTS_DIR), **config, "studies": [study]}
    return get_study(study).cells(validate_config(raw))


def _seated(spec: Mapping[str, Any], agents: StandIns) -> list[Agent]:
    return [agents.get(agent_name(entry)) or make_agent(entry) for entry in spec["agents"]]


def _play_coopeval(study: Study, spec: Mapping[str, Any], inputs: PlayInputs, agents: StandIns) -> tuple[Tables, CallStats]:
    if not agents:
        return study.play(spec, inputs)
    return play_cell(spec, inputs.cache, inputs.prompts, inputs.journal, agents=_seated(spec, agents))


def _play_gossip(study: Study, spec: Mapping[str, Any], inputs: PlayInputs, agents: StandIns) -> tuple[Tables, CallStats]:
    return study.play(spec, inputs, agents=dict(agents) or None)  # type: ignore[call-arg]


def _play_evolution(study: Study, spec: Mapping[str, Any], inputs: PlayInputs, agents: StandIns) -> tuple[Tables, CallStats]:
    def factory(entry: Mapping[str, Any], settings: Any) -> RunAgents:
        stand_in = agents.get(model_label(entry))
        if stand_in is None:
            return run_agents(entry, settings)
        return stand_in if isinstance(stand_in, RunAgents) else RunAgents(stand_in, stand_in, stand_in, AlwaysZero())

    return EvolutionStudy(agent_factory=factory).play(spec, inputs)


_PLAYERS: dict[str, Callable[[Study, Mapping[str, Any], PlayInputs, StandIns], tuple[Tables, CallStats]]] = {
    "coopeval": _play_coopeval,
    "gossip": _play_gossip,
    "evolution": _play_evolution,
}
"""How each study takes stand-in agents (the Study contract has no common injection point)."""


def play_study_cell(
    study: str,
    spec: Mapping[str, Any],
    agents: StandIns | None = None,
    *,
    cache: ResponseCache | None = None,
    state_dir: str | Path | None = None,
) -> tuple[Tables, CallStats]:
    """Play one built cell spec of ``study`` (see :func:`study_cells`) with ``agents`` standing
    in for configured models; return its tables and call counters. ``cache`` is a response cache
    (None: no caching); ``state_dir`` the study's resumable state (evolution checkpoints)."""
    target = get_study(study)
    library = PromptLibrary(prompts_dir(target, {"prompts_dir": PROMPTS_DIR}))
    inputs = PlayInputs(cache, library, state_dir=None if state_dir is None else str(state_dir))
    return _PLAYERS[study](target, spec, inputs, agents or {})


def play_study(
    study: str,
    config: Mapping[str, Any],
    agents: StandIns | None = None,
    *,
    cell: int | None = None,
    cache: ResponseCache | None = None,
    state_dir: str | Path | None = None,
) -> Tables:
    """Play one cell of ``study`` built from ``config`` and return its tables (``versus_test``).

    ``cell`` is the index among the config's cells; None requires the config to give exactly
    one. Other keywords as in :func:`play_study_cell`.

    Raises
    ------
    AssertionError
        If ``cell`` is None and the config gives no cell or several (their labels are listed).
    """
    cells = study_cells(study, config)
    if cell is None:
        labels = [get_study(study).label(c) for c in cells]
        assert len(cells) == 1, f"{study}: the config gives {len(cells)} cells {labels}; pass cell=<index>"
        cell = 0
    return play_study_cell(study, cells[cell], agents, cache=cache, state_dir=state_dir)[0]


def _config_entry(player: Player) -> dict[str, Any] | None:
    """The ``agents`` config entry of a player, or None for a test-only agent object."""
    if isinstance(player, str):
        return {"model": player if player.startswith("bot/") else f"bot/{player}"}
    model = str(player.model)
    if model.startswith("bot/"):
        return {"model": model} if model.removeprefix("bot/") in BOTS else None
    return {"model": model, "style": player.style, "params": dict(player.params)}


def _agent(player: Player) -> Agent:
    return make_bot(player) if isinstance(player, str) else player


def make_cell(
    mechanism: str,
    game: str = "prisoners_dilemma",
    players: Sequence[Player] = ("always-cooperate", "always-defect"),
    *,
    seed: int = 42,
    config: Mapping[str, Any] | None = None,
    compat: Mapping[str, Any] | None = None,
    **params: Any,
) -> dict[str, Any]:
    """The cell spec the workflow builds for one (mechanism, game) and roster.

    ``params`` are the mechanism's parameters (e.g. ``num_rounds=4``); ``config`` adds other
    top-level config keys (e.g. ``{"retry_failed": 1}``); ``compat`` overrides compatibility
    flags in the built spec.
    """
    entries = [e for e in (_config_entry(p) for p in players) if e is not None]
    raw: dict[str, Any] = {"agents": entries, "games": [game], "mechanisms": [mechanism], "seed": seed, **(config or {})}
    if params:
        raw["mechanism_params"] = {mechanism: dict(params)}
    (spec,) = build_cells(validate_config(raw), repo_root=REPO)
    if compat:
        spec = {**spec, "compat": {**spec["compat"], **compat}}
    return spec


def play_spec(
    spec: Mapping[str, Any], players: Sequence[Player] | None = None, cache: ResponseCache | None = None
) -> tuple[dict[str, pl.DataFrame], CallStats]:
    """Play a built cell spec; ``players`` None (or bot names only) means the agents the spec
    names, played through :func:`play_study_cell`; agent objects play as given, in seat order."""
    if players is None or all(isinstance(p, str) for p in players):
        return play_study_cell("coopeval", spec, cache=cache)
    return play_cell(spec, cache, PROMPTS, agents=[_agent(p) for p in players])


def play_bots(
    mechanism: str,
    game: str = "prisoners_dilemma",
    bots: Sequence[Player] = ("always-cooperate", "always-defect"),
    *,
    cache: ResponseCache | None = None,
    seed: int = 42,
    config: Mapping[str, Any] | None = None,
    compat: Mapping[str, Any] | None = None,
    **params: Any,
) -> dict[str, pl.DataFrame]:
    """Play one configured cell with ``bots`` and return its tables (Axelrod's ``versus_test``).

    Example: ``play_bots("Repetition", "prisoners_dilemma", ["tit-for-tat", "always-defect"],
    num_rounds=4)``. Keywords as in :func:`make_cell`; ``cache`` is a response cache (None:
    no caching). Use :func:`make_cell` and :func:`play_spec` for the call counters.
    """
    spec = make_cell(mechanism, game, bots, seed=seed, config=config, compat=compat, **params)
    tables, _stats = play_spec(spec, bots, cache)
    return tables
