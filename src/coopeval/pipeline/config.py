"""Config loading and validation, before any model call.

The JSON Schema is composed of the engine part (``config.schema.yaml`` beside this module) and
each study's part (:meth:`~coopeval.studies.base.Study.config_schema`), with defaults and
``additionalProperties: false``; it is the single source of truth. :func:`validate_config`
fills defaults, then runs each configured study's checks of what a schema cannot express
(known bots, unique agent names, variant parameters). Errors name the offending field and say
how to fix it. The package reads no repository path: the schema ships as package data.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from coopeval.core.errors import ConfigError
from coopeval.core.packaged import packaged_yaml
from coopeval.core.validation import raise_config_errors, validator_with_defaults
from coopeval.pipeline.plugins import load_plugins
from coopeval.pipeline.studies import STUDIES, configured_studies

__all__ = [
    "EFFECTIVE_CONFIG_PATH",
    "ConfigError",
    "config_schema",
    "config_summary",
    "effective_config_yaml",
    "load_config",
    "merge_overlay",
    "validate_config",
]


def config_schema() -> dict[str, Any]:
    """The whole config schema: the engine part plus every registered study's part.

    Raises
    ------
    ValueError
        If two parts declare the same top-level key.
    """
    schema: dict[str, Any] = packaged_yaml("coopeval.pipeline", "config.schema.yaml")
    studies = schema["properties"]["studies"]
    studies["items"]["enum"] = list(STUDIES)
    studies["default"] = [name for name, study in STUDIES.items() if study.default_enabled]
    required = list(schema.get("required", []))
    for study in STUDIES.values():
        part = study.config_schema()
        clash = set(part["properties"]) & set(schema["properties"])
        if clash:
            raise ValueError(f"study {study.name} redeclares config keys {sorted(clash)}")
        schema["properties"].update(part["properties"])
        required += part.get("required", [])
    schema["required"] = required
    return schema


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
        try:
            data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError as exc:
            raise ConfigError(f"config file {p} is not valid YAML: {exc}") from None
        if not isinstance(data, Mapping):
            raise ConfigError(f"config file {p} must hold a mapping at the top level")
        config = merge_overlay(config, data)
    return validate_config(config)


def validate_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Import the config's ``plugins`` (:func:`~coopeval.pipeline.plugins.load_plugins`), then
    validate ``config`` against the schema, fill defaults, and run semantic checks.

    Returns a new dict; the input is not modified.

    Raises
    ------
    ConfigError
        Naming the field (e.g. ``agents[1].style``), the problem and the fix.
    """
    load_plugins(config)
    schema = config_schema()
    instance = copy.deepcopy(dict(config))
    _refuse_non_finite(instance)
    validator = validator_with_defaults(schema)
    raise_config_errors(sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path)), _allowed_keys)
    for study in configured_studies(instance):
        study.check_config(instance)
    # A second pass fills defaults inside objects that were created by the first pass.
    for _ in validator.iter_errors(instance):
        pass
    return instance


def _non_finite(value: Any, where: str) -> Iterator[tuple[str, float]]:
    if isinstance(value, float) and not math.isfinite(value):
        yield where, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _non_finite(item, f"{where}.{key}" if where else str(key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _non_finite(item, f"{where}[{index}]")


def _refuse_non_finite(config: Mapping[str, Any]) -> None:
    """Refuse NaN and infinities anywhere (YAML's ``.nan``/``.inf``): JSON Schema's ``number``
    admits them, yet no parameter means anything with them (``max_usd: .nan`` would switch the
    budget off; a NaN discount cannot be hashed into a cell id)."""
    found = [f"config {where}: {value} is not a finite number; write a finite value" for where, value in _non_finite(config, "")]
    if found:
        raise ConfigError("\n".join(found))


def _allowed_keys(error: Any, where: str) -> str | None:
    if error.validator != "additionalProperties":
        return None
    allowed = ", ".join(sorted((error.schema.get("properties") or {}).keys()))
    return f"config {where}: {error.message}. Allowed keys here: {allowed}."


EFFECTIVE_CONFIG_PATH = "results/config.effective.yaml"
"""Where the workflow writes the merged, validated config of the run (defaults filled)."""


def effective_config_yaml(config: Mapping[str, Any], sources: Iterable[str | Path] = ()) -> str:
    """The merged, validated config as YAML (keys in schema order), headed by the files merged.

    ``sources`` are the config files in merge order (the default first, overlays after).
    """
    head = "# The effective config of the last run: merged from " + (", ".join(str(s) for s in sources) or "(no files)")
    head += " (in this order), defaults filled.\n"
    return head + yaml.safe_dump(json.loads(json.dumps(dict(config))), sort_keys=False, allow_unicode=True)


def config_summary(config: Mapping[str, Any], cells_by_study: Mapping[str, Sequence[Any]], sources: Iterable[str | Path] = ()) -> str:
    """A few lines for the start of a run: config files, studies with their cell counts, and
    the CoopEval roster (agents, games, mechanisms, replicates) when that study runs.

    ``cells_by_study`` maps study name → its cells (see :func:`coopeval.pipeline.studies.all_cells`).
    """
    from coopeval.agents.registry import agent_name

    lines = [f"coopeval config: {', '.join(str(s) for s in sources) or '(no files)'} → {EFFECTIVE_CONFIG_PATH}"]
    lines.append("  studies: " + ", ".join(f"{name} ({len(cells)} cells)" for name, cells in cells_by_study.items()))
    if "coopeval" in cells_by_study:
        lines.append(f"  agents ({len(config['agents'])}): " + ", ".join(agent_name(a) for a in config["agents"]))
        lines.append(f"  games ({len(config['games'])}): " + ", ".join(config["games"]))
        lines.append(f"  mechanisms ({len(config['mechanisms'])}): " + ", ".join(config["mechanisms"]))
        lines.append(f"  replicates: {config['replicates']}, seed: {config['seed']}")
    return "\n".join(lines)
