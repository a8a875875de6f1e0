"""Config loading and validation, before any model call.

The JSON Schema in ``workflow/schemas/config.schema.yaml`` (with defaults and
``additionalProperties: false``) is the single source of truth; :func:`validate_config` fills
defaults, then checks what a schema cannot (known bots, unique agent names). Errors name the
offending field and say how to fix it.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

REPO_ROOT = Path(__file__).resolve().parents[3]
SCHEMA_PATH = REPO_ROOT / "workflow" / "schemas" / "config.schema.yaml"


SECRET_PARAM_KEYS = frozenset({"api_key", "apikey", "key", "token", "access_token", "secret", "authorization"})
"""Parameter names that would put a credential into params (rejected)."""


class ConfigError(ValueError):
    """A config value is unknown, ill-typed or inconsistent; the message names the field."""


def merge_overlay(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """Recursive dict merge as Snakemake applies ``--configfile`` overlays: mappings merge,
    everything else (lists included) is replaced."""
    merged = copy.deepcopy(dict(base))
    for key, value in overlay.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = merge_overlay(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def load_config(paths: Iterable[str | Path]) -> dict[str, Any]:
    """Load and merge YAML files in order (later files overlay earlier ones), then validate.

    Raises
    ------
    ConfigError
        If a file is missing, not a mapping, or the merged config is invalid.
    """
    config: dict[str, Any] = {}
    for path in paths:
        p = Path(path)
        if not p.exists():
            raise ConfigError(f"config file {p} does not exist")
        data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        if not isinstance(data, Mapping):
            raise ConfigError(f"config file {p} must hold a mapping at the top level")
        config = merge_overlay(config, data)
    return validate_config(config)


def _field_path(error: Any) -> str:
    parts = []
    for part in error.absolute_path:
        parts.append(f"[{part}]" if isinstance(part, int) else (("." if parts else "") + str(part)))
    return "".join(parts) or "(top level)"


def _validator_with_defaults(schema: Mapping[str, Any]) -> Any:
    from jsonschema import Draft202012Validator, validators

    def set_defaults(validator: Any, properties: Mapping[str, Any], instance: Any, schema: Any) -> Any:
        if isinstance(instance, dict):
            for name, sub in properties.items():
                if isinstance(sub, Mapping) and "default" in sub and name not in instance:
                    instance[name] = copy.deepcopy(sub["default"])
        yield from Draft202012Validator.VALIDATORS["properties"](validator, properties, instance, schema)

    cls = validators.extend(Draft202012Validator, {"properties": set_defaults})
    return cls(schema)


def validate_config(config: Mapping[str, Any], schema_path: Path = SCHEMA_PATH) -> dict[str, Any]:
    """Validate ``config`` against the schema, fill defaults, and run semantic checks.

    Returns a new dict; the input is not modified.

    Raises
    ------
    ConfigError
        Naming the field (e.g. ``agents[1].style``), the problem and the fix.
    """
    schema = yaml.safe_load(schema_path.read_text(encoding="utf-8"))
    instance = copy.deepcopy(dict(config))
    validator = _validator_with_defaults(schema)
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        lines = []
        for error in errors[:10]:
            where = _field_path(error)
            if error.validator == "additionalProperties":
                allowed = ", ".join(sorted((error.schema.get("properties") or {}).keys()))
                lines.append(f"config {where}: {error.message}. Allowed keys here: {allowed}.")
            elif error.validator == "enum":
                lines.append(f"config {where}: {error.instance!r} is not allowed; use one of {error.validator_value}.")
            else:
                lines.append(f"config {where}: {error.message}.")
        raise ConfigError("invalid configuration:\n  " + "\n  ".join(lines))
    _semantic_checks(instance)
    # A second pass fills defaults inside objects that were created by the first pass.
    for _ in validator.iter_errors(instance):
        pass
    return instance


def _semantic_checks(config: dict[str, Any]) -> None:
    from coopeval.agents.bots import BOTS
    from coopeval.agents.registry import agent_name

    names: dict[str, int] = {}
    for index, agent in enumerate(config["agents"]):
        model = agent["model"]
        if model.startswith("bot/") and model.removeprefix("bot/") not in BOTS:
            known = ", ".join("bot/" + b for b in BOTS)
            raise ConfigError(f"config agents[{index}].model: unknown bot {model!r}; known bots: {known}.")
        if not model.startswith("bot/") and "/" not in model:
            raise ConfigError(
                f"config agents[{index}].model: {model!r} is not a litellm model string; "
                "write provider/model, e.g. openrouter/openai/gpt-4o or local/smollm2-135m."
            )
        if model.startswith("local/"):
            from coopeval.agents.local import LOCAL_MODELS

            if model.removeprefix("local/") not in LOCAL_MODELS:
                known = ", ".join("local/" + m for m in LOCAL_MODELS)
                raise ConfigError(f"config agents[{index}].model: unknown embedded model {model!r}; known: {known}.")
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
    params_schema = yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))["properties"]["mechanism_params"]["properties"]
    seen: set[tuple[str, str]] = set()
    for index, variant in enumerate(config.get("variants", [])):
        mechanism, name = variant["mechanism"], variant["name"]
        where = f"config variants[{index}]"
        if mechanism not in config["mechanisms"]:
            raise ConfigError(f"{where}.mechanism: {mechanism} is not listed in mechanisms; add it there or remove the variant.")
        if (mechanism, name) in seen:
            raise ConfigError(f"{where}.name: {name!r} is used twice for {mechanism}; variant names must be unique per mechanism.")
        seen.add((mechanism, name))
        from jsonschema import Draft202012Validator

        mechanism_schema = params_schema.get(mechanism, {})
        for error in Draft202012Validator(mechanism_schema).iter_errors(variant["params"]):
            field = ".".join(str(p) for p in error.absolute_path)
            allowed = ", ".join(sorted(mechanism_schema.get("properties", {}))) or "none"
            raise ConfigError(
                f"{where}.params{'.' + field if field else ''}: {error.message}. Allowed keys for {mechanism}: {allowed}."
            )

