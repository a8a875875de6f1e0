"""The CoopEval study's part of the config schema, with its lists filled from the registries.

``config.schema.yaml`` (package data beside this module) holds the keys, types, defaults and
descriptions; the mechanism and game names (enums and defaults), the ``mechanism_params`` and
the ``game_params`` objects come from :mod:`.mechanisms.catalog` and :mod:`coopeval.games`, and the
deviation-rating rules from :mod:`coopeval.evaluation.dr_rules`, so each is declared once.
"""

from __future__ import annotations

from typing import Any

import coopeval.games as game_registry
from coopeval.core.packaged import packaged_yaml
from coopeval.evaluation.dr_rules import DR_RULES
from coopeval.studies.coopeval.mechanisms import catalog


def config_schema_part() -> dict[str, Any]:
    """``{"properties": {...}, "required": [...]}`` of the CoopEval keys, built afresh from the
    registries as they are now (plugin games and mechanisms included, last)."""
    part: dict[str, Any] = packaged_yaml("coopeval.studies.coopeval", "config.schema.yaml")
    props = part["properties"]
    mechanisms, games = list(catalog.MECHANISM_INFO), list(game_registry.GAME_FACTORIES)
    props["agents"]["items"]["properties"]["mechanisms"]["items"]["enum"] = mechanisms
    props["mechanisms"]["items"]["enum"] = mechanisms
    # Defaults are the shipped lists: a plugin's game or mechanism runs only where a config names it.
    props["mechanisms"]["default"] = list(catalog.SHIPPED_MECHANISMS)
    props["variants"]["items"]["properties"]["mechanism"]["enum"] = mechanisms
    props["mechanism_params"]["properties"] = {m.name: m.params_schema() for m in catalog.MECHANISMS}
    props["games"]["items"]["enum"] = games
    props["game_params"]["properties"] = {g.game.key: g.params_schema() for g in game_registry.GAMES if g.params}
    props["variants"]["items"]["properties"]["game_params"].update(
        additionalProperties=False, properties=dict(props["game_params"]["properties"])
    )
    props["games"]["default"] = list(game_registry.SHIPPED_GAMES)
    props["judge"]["properties"]["include_games"]["items"]["enum"] = games
    props["judge"]["properties"]["include_games"]["default"] = games
    props["evaluation"]["properties"]["dr_rule"]["enum"] = list(DR_RULES)
    props["evaluation"]["properties"]["dr_rule"]["default"] = DR_RULES[0]
    return part

