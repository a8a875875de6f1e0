"""The one test helper to play a configured cell, in the spirit of Axelrod-Python's ``versus_test``.

A test names a mechanism, a game and its players; :func:`play_bots` builds the cell exactly as
the workflow does (:func:`coopeval.pipeline.config.validate_config` fills the defaults and
checks the keys, :func:`coopeval.studies.coopeval.cells.build_cells` gives the cell spec and its id)
and plays it with :func:`coopeval.studies.coopeval.play.play_cell`. Assert on the returned
tables (``decisions``, ``llm_calls``, ``matchups``, ``designs``, ``votes``, ``selections``).

Players are bot names (``"tit-for-tat"`` or ``"bot/tit-for-tat"``) or agent objects (test-only
bots, :class:`coopeval.agents.mock.MockLLM`). Agent objects play as given; only registered bots
and mock models are written into the config, which names the cell.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from tests.shared_data import PROMPTS_DIR
from coopeval.agents.bots import BOTS, make_bot
from coopeval.agents.maker import CallStats
from coopeval.agents.protocol import Agent
from coopeval.cache.response_cache import ResponseCache
from coopeval.core.prompts import PromptLibrary
from coopeval.studies.coopeval.cells import build_cells
from coopeval.pipeline.config import validate_config
from coopeval.studies.coopeval.play import play_cell

REPO = Path(__file__).resolve().parents[1]
PROMPTS = PromptLibrary(PROMPTS_DIR)

Player = str | Agent


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
    """Play a built cell spec; ``players`` None means the agents the spec names."""
    agents = None if players is None else [_agent(p) for p in players]
    return play_cell(spec, cache, PROMPTS, agents=agents)


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
