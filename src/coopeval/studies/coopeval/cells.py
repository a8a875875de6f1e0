"""Experiment cells and their content hashes (docs/protocol/engineering.md#cells).

A cell is one (mechanism, game, replicate) with the full roster. Its spec holds everything
that determines its results — game and mechanism parameters, agent configurations, the seed,
the replicate, the prompt variant (docs/paraphrases.md; omitted for the base wording, so base
cells keep their ids), the content hash of exactly the prompt templates the cell can render in
that variant's wording (:mod:`.prompt_use`), the parser version, the compatibility
flags and the cache schema version — and its id is a short sha256 of the spec's canonical
JSON. A changed spec therefore gives a new Snakemake target; an unchanged spec maps to the
same target, whose rerun replays from the response cache for free.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.agents.registry import is_scripted
from coopeval.cache.response_cache import CACHE_SCHEMA_VERSION
from coopeval.core.errors import ConfigError
from coopeval.core.hashing import canonical_json, cell_hash, content_hash
from coopeval.core.prompts import BASE_VARIANT, PromptLibrary
from coopeval.core.schemas import register_tables
from coopeval.decisions.parsing import PARSER_VERSION
from coopeval.decisions.texts import answer_texts_hash
from coopeval.games import get_game
from coopeval.studies.coopeval.mechanisms.catalog import mechanism_info
from coopeval.studies.coopeval.prompt_use import cell_templates
from coopeval.studies.coopeval.rosters import is_sampled

DEFAULT_VARIANT = "default"
"""The mechanism variant of the cells at the config's own parameters (a manifest ``variant``,
:func:`manifest_variant`; the paper tables, headline figures and judge keep these cells)."""


def settings_position(spec: Mapping[str, Any]) -> dict[str, Any]:
    """What a cell's mechanism variant adds to each decision's position (so to its decision id,
    and its cache key; :class:`~coopeval.agents.maker.DecisionMaker`):
    ``{"settings": {"mechanism_params": …, "game_params": …}}``, the cell's full settings, for a
    cell of a named variant (config ``variants``); nothing for a default-variant cell, whose ids
    stay as they were. Two variants of one mechanism that differ only in a setting no prompt
    states (``num_rounds``) would otherwise give the same decision ids to different cells.
    The variant's name is not part of it (renaming a variant keeps its stored answers), and the
    action draws and provider seeds keep their streams (docs/protocol/engineering.md#randomness)."""
    if spec.get("variant", DEFAULT_VARIANT) == DEFAULT_VARIANT:
        return {}
    return {"settings": {"mechanism_params": dict(spec.get("mechanism_params") or {}), "game_params": dict(spec.get("game_params") or {})}}


def check_distinct_decisions(cells: list[dict[str, Any]]) -> None:
    """Refuse cells that would give the same decision ids (the ``store`` rule would fail with
    :class:`~coopeval.pipeline.store.DuplicateDecisionError` after every play job): two cells
    whose decisions share mechanism, game, replicate, seed, prompt variant and
    :func:`settings_position`, i.e. two variants of one mechanism with the same settings.

    Raises
    ------
    ConfigError
        Naming the key ``variants``, the two variants and the fix.
    """
    seen: dict[str, str] = {}
    for cell in cells:
        scope = canonical_json(
            [cell["mechanism"], cell["game"], cell["replicate"], cell["seed"], cell.get("prompt_variant", BASE_VARIANT), settings_position(cell)]
        )
        if scope in seen:
            raise ConfigError(
                f"config variants: {cell['mechanism']} variants {seen[scope]!r} and {cell['variant']!r} have the same settings on"
                f" {cell['game']} (the same cells twice, with the same decision ids); remove one or change its params."
            )
        seen[scope] = str(cell["variant"])


def agent_spec(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The hashed part of an agent entry (model, style, label, params)."""
    spec = {"model": entry["model"], "style": entry.get("style", "IO"), "params": dict(entry.get("params") or {})}
    if entry.get("label"):
        spec["label"] = entry["label"]
    return spec


def game_fingerprint(key: str, params: Mapping[str, Any]) -> str:
    """sha256 (16 hex chars) of what agents are told and paid: actions, payoff table, seat texts."""
    game = get_game(key, **params)
    payload = {
        "actions": list(game.actions),
        "payoffs": sorted([list(p), list(v)] for p, v in game.payoff_table.items()),
        "seat_rules": list(game.seat_rules),
        "cooperative": list(game.cooperative_profile),
        "nash": list(game.nash_profile),
    }
    return content_hash(payload, 16)


def play_cost(cell: Mapping[str, Any]) -> int:
    """Rough relative cost of playing ``cell``: mechanism weight x number of players.

    Used as the play job's Snakemake priority, so the longest cells start first
    (longest-processing-time scheduling) and none runs alone at the end of a run. Unitless;
    e.g. Reputation+ Public Goods 12, NoMechanism Prisoner's Dilemma 2. Raises ``KeyError`` for an
    unknown game key.
    """
    n_players = get_game(cell["game"], **cell.get("game_params", {})).n_players
    return mechanism_info(cell["mechanism"]).play_cost_weight * n_players


def matchup_sample(mechanism: str, game: str, game_params: Mapping[str, Any], n_agents: int, max_matchups: int | None) -> int | None:
    """The cell's ``max_matchups`` when it plays a roster sample (a match-up mechanism whose
    S^N rosters exceed the cap, :mod:`coopeval.studies.coopeval.rosters`), else None: the key
    enters the cell spec only then, so a cap that does not bind leaves every cell id unchanged.

    Raises
    ------
    ConfigError
        If the cap is below agents × seats (no seat-balanced sample fits).
    """
    n_seats = get_game(game, **game_params).n_players
    if mechanism_info(mechanism).population_game or not is_sampled(n_agents, n_seats, max_matchups):
        return None
    assert max_matchups is not None
    if max_matchups < n_agents * n_seats:
        raise ConfigError(
            f"config max_matchups: {max_matchups} is below agents × seats = {n_agents} × {n_seats} of {mechanism}"
            f" {game}; a seat-balanced sample needs at least {n_agents * n_seats} match-ups (or leave max_matchups out)."
        )
    return max_matchups


def build_cells(config: Mapping[str, Any], repo_root: Path | None = None) -> list[dict[str, Any]]:
    """All cells of a validated config, in mechanism → game → replicate order.

    Each returned dict is the cell spec plus ``cell_id``; a cell in a prompt variant other than
    ``base`` (config ``prompt_variants``) also carries ``prompt_variant``.
    """
    root = repo_root or Path.cwd()
    prompts_dir = Path(config["prompts_dir"])
    base = PromptLibrary(prompts_dir if prompts_dir.is_absolute() else root / prompts_dir)
    wordings = [(name, base.variant(name)) for name in config.get("prompt_variants", [BASE_VARIANT])]
    answer_texts = answer_texts_hash()
    cells = []
    runs: list[tuple[str, str, dict[str, Any], Mapping[str, Any]]] = []
    for mechanism in config["mechanisms"]:
        params = {**mechanism_info(mechanism).defaults(), **config.get("mechanism_params", {}).get(mechanism, {})}
        runs.append((mechanism, DEFAULT_VARIANT, params, {}))
        for variant in config.get("variants", []):
            if variant["mechanism"] == mechanism:
                runs.append((mechanism, variant["name"], {**params, **variant["params"]}, variant.get("game_params", {})))
    for mechanism, variant_name, params, variant_games in runs:
        agents = [agent_spec(a) for a in config["agents"] if mechanism in a.get("mechanisms", [mechanism])]
        if not agents:
            continue
        for game in config["games"]:
            game_params = {**config.get("game_params", {}).get(game, {}), **variant_games.get(game, {})}
            fingerprint = game_fingerprint(game, game_params)
            sample = matchup_sample(mechanism, game, game_params, len(agents), config.get("max_matchups"))
            for (wording, prompts), replicate in itertools.product(wordings, range(1, int(config["replicates"]) + 1)):
                spec: dict[str, Any] = {
                    "mechanism": mechanism,
                    "variant": variant_name,
                    "mechanism_params": params,
                    "game": game,
                    "game_params": game_params,
                    "game_fingerprint": fingerprint,
                    "agents": agents,
                    "replicate": replicate,
                    "seed": int(config["seed"]),
                    "prompt_hash": prompts.content_hash(cell_templates({"mechanism": mechanism, "mechanism_params": params, "agents": agents})),
                    "parser_version": PARSER_VERSION,
                    "answer_texts_hash": answer_texts,
                    "cache_schema_version": CACHE_SCHEMA_VERSION,
                    "compat": dict(config.get("compat", {})),
                    "retry_failed": int(config.get("retry_failed", 0)),
                }
                if wording != BASE_VARIANT:
                    spec["prompt_variant"] = wording
                if sample is not None:
                    spec["max_matchups"] = sample
                cells.append({**spec, "cell_id": cell_hash(spec)})
    check_distinct_decisions(cells)
    return cells


MANIFEST_SCHEMA: dict[str, pl.DataType] = {
    "cell_id": pl.String(),  # a string even when all digits (issue 13 kind 10c)
    "mechanism": pl.String(),
    "variant": pl.String(),
    "game": pl.String(),
    "replicate": pl.Int64(),
    "mechanism_params": pl.String(),  # canonical JSON
    "agents": pl.String(),  # display names, comma-separated, config order
    "players": pl.Int64(),  # seats of the cell's game (Public Goods: its game_params players, default 3)
}
"""Columns of ``results/cells.tsv`` (store table ``cells``), read back with exactly these types."""
register_tables({"cells": MANIFEST_SCHEMA})


def manifest_variant(cell: Mapping[str, Any]) -> str:
    """The manifest's ``variant`` of a cell: the mechanism variant (``default`` or an ablation's
    name), followed by ``@<prompt variant>`` for a cell not in the base wording (e.g.
    ``default@p1``). The paper tables and headline figures keep the cells whose variant is
    ``default`` (base wording, default parameters); the prompt sensitivity report compares the
    wordings (docs/paraphrases.md)."""
    wording = cell.get("prompt_variant", BASE_VARIANT)
    return str(cell["variant"]) if wording == BASE_VARIANT else f"{cell['variant']}@{wording}"


def cells_tsv(cells: list[dict[str, Any]]) -> str:
    """The cell manifest (``results/cells.tsv``): the columns of :data:`MANIFEST_SCHEMA`
    (``variant`` as :func:`manifest_variant`)."""
    lines = ["\t".join(MANIFEST_SCHEMA)]
    for c in cells:
        names = ",".join(a.get("label", a["model"]) + ("" if is_scripted(a["model"]) else f"({a['style']})") for a in c["agents"])
        params = canonical_json(c["mechanism_params"])
        players = get_game(c["game"], **c.get("game_params", {})).n_players
        lines.append(f"{c['cell_id']}\t{c['mechanism']}\t{manifest_variant(c)}\t{c['game']}\t{c['replicate']}\t{params}\t{names}\t{players}")
    return "\n".join(lines) + "\n"
