"""CoopEval's config checks beyond the schema (run by :func:`coopeval.pipeline.config.validate_config`)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator

from coopeval.agents.registry import agent_name, entry_error, is_scripted
from coopeval.core.errors import ConfigError
from coopeval.core.hashing import canonical_json
from coopeval.core.prompts import BASE_VARIANT, check_prompt_variants
from coopeval.studies.coopeval.mechanisms.catalog import mechanism_info

SECRET_PARAM_KEYS = frozenset({"api_key", "apikey", "key", "token", "access_token", "secret", "authorization"})
"""Parameter names that would put a credential into params (rejected)."""


def check_config(config: Mapping[str, Any]) -> None:
    """What the schema cannot check: known models and valid agent options (provider registry),
    no API key in params, unique agent names, variants of listed mechanisms with valid parameters
    (and game parameters of listed games),
    a ``prompts_dir`` (relative to the working directory) that holds templates, and configured
    prompt variants that exist in it.

    Raises
    ------
    ConfigError
        Naming the field, the problem and the fix.
    """
    if is_scripted(str(config["judge"]["model"])):
        raise ConfigError(
            f"config judge.model: {config['judge']['model']!r} is a scripted bot, which cannot judge; "
            "use a language model, e.g. local/smollm2-135m."
        )
    if (problem := entry_error(str(config["judge"]["model"]), config["judge"].get("params"))) is not None:
        raise ConfigError(f"config judge.{problem}.")
    names: dict[str, int] = {}
    for index, agent in enumerate(config["agents"]):
        model = agent["model"]
        if (problem := entry_error(model, agent.get("params"))) is not None:
            raise ConfigError(f"config agents[{index}].{problem}.")
        secrets = sorted(k for k in agent.get("params", {}) if k.lower() in SECRET_PARAM_KEYS)
        if secrets:
            raise ConfigError(
                f"config agents[{index}].params.{secrets[0]}: API keys must not be in the config (params are "
                "recorded in Snakemake metadata and cache keys); export the provider's key variable instead, "
                "e.g. OPENAI_API_KEY."
            )
        name = agent_name(agent)
        if name in names:
            raise ConfigError(
                f"config agents[{index}]: duplicates agents[{names[name]}] ({name}); give one of them a distinct label."
            )
        names[name] = index
    folder = Path(config["prompts_dir"])
    if not any(folder.glob("*.txt")):
        raise ConfigError(
            f"config prompts_dir: {str(folder)!r} holds no prompt templates (*.txt; relative paths are read from "
            f"the working directory, {Path.cwd()}); leave it out for the shipped resources/prompts or point it at a copy of that folder."
        )
    wordings = list(config.get("prompt_variants", [BASE_VARIANT]))
    if wordings != [BASE_VARIANT]:
        check_prompt_variants(wordings, Path(config["prompts_dir"]), "coopeval")
    seen: set[tuple[str, str]] = set()
    for index, variant in enumerate(config.get("variants", [])):
        mechanism, name = variant["mechanism"], variant["name"]
        where = f"config variants[{index}]"
        if mechanism not in config["mechanisms"]:
            raise ConfigError(f"{where}.mechanism: {mechanism} is not listed in mechanisms; add it there or remove the variant.")
        if (mechanism, name) in seen:
            raise ConfigError(f"{where}.name: {name!r} is used twice for {mechanism}; variant names must be unique per mechanism.")
        seen.add((mechanism, name))
        for game in variant.get("game_params", {}):
            if game not in config["games"]:
                raise ConfigError(f"{where}.game_params.{game}: {game} is not listed in games; add it there or remove its parameters.")
        mechanism_schema = mechanism_info(mechanism).params_schema()
        for error in Draft202012Validator(mechanism_schema).iter_errors(variant["params"]):
            field = ".".join(str(p) for p in error.absolute_path)
            allowed = ", ".join(sorted(mechanism_schema.get("properties", {}))) or "none"
            raise ConfigError(
                f"{where}.params{'.' + field if field else ''}: {error.message}. Allowed keys for {mechanism}: {allowed}."
            )
    _check_distinct_variants(config)


def _check_distinct_variants(config: Mapping[str, Any]) -> None:
    """Refuse two variants of one mechanism with the same settings on a game (the same cells twice,
    with the same decision ids: :func:`coopeval.studies.coopeval.cells.settings_position`)."""
    seen: dict[tuple[str, str, str], str] = {}
    for variant in config.get("variants", []):
        mechanism = variant["mechanism"]
        params = {**mechanism_info(mechanism).defaults(), **config.get("mechanism_params", {}).get(mechanism, {}), **variant["params"]}
        for game in config["games"]:
            game_params = {**config.get("game_params", {}).get(game, {}), **variant.get("game_params", {}).get(game, {})}
            key = (mechanism, game, canonical_json([params, game_params]))
            if key in seen:
                raise ConfigError(
                    f"config variants: {mechanism} variants {seen[key]!r} and {variant['name']!r} have the same settings on"
                    f" {game} (the same cells twice, with the same decision ids); remove one or change its params."
                )
            seen[key] = str(variant["name"])

