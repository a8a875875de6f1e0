"""Validation of the ``evolution:`` config section, before any call (issue 11 §9).

The JSON Schema in ``config.schema.yaml`` (beside this module) is the source of truth; this
module fills its defaults and reports errors naming the key, e.g. ``config evolution.n_agents:
13 is not a multiple of 2``. :func:`run_settings` turns a validated section, protocol and
variant into the flat parameters of :class:`~coopeval.studies.evolution.settings.EvolutionSettings`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from coopeval.core.errors import ConfigError
from coopeval.core.packaged import packaged_yaml
from coopeval.core.validation import first_duplicate, raise_config_errors, validator_with_defaults

VH_ONLY_VARIANTS = ("costly_punishment", "partner_choice")


def _schema() -> dict[str, Any]:
    schema: dict[str, Any] = packaged_yaml("coopeval.studies.evolution", "config.schema.yaml")
    return schema


def config_schema_part() -> dict[str, Any]:
    """The study's part of the composed config schema: the ``evolution`` section with its
    defaults (``{"properties": {"evolution": …}, "required": []}``)."""
    return {"properties": dict(_schema()["properties"]), "required": []}


def validate_evolution_config(config: Mapping[str, Any]) -> dict[str, Any]:
    """Return a copy of ``config`` whose ``evolution`` section is validated and defaulted.

    Raises
    ------
    ConfigError
        Naming the key: odd or small ``n_agents``, an unknown protocol, variant, punishment or
        percent base, an unknown key, a bad bot name, duplicate variant names.
    """
    schema = _schema()
    instance = {"evolution": copy.deepcopy(dict(config.get("evolution") or {}))}
    validator = validator_with_defaults(schema)
    for _ in range(2):  # the second pass fills defaults inside objects created by the first
        raise_config_errors(sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path)), _explain)
    section = instance["evolution"]
    _semantic_checks(section)
    return {**dict(config), "evolution": section}


def _explain(error: Any, where: str) -> str | None:
    """The section's own wording of a schema error (variants, the population size)."""
    if error.validator == "oneOf" and isinstance(error.instance, str):
        return f"config {where}: unknown variant {error.instance!r}; use none, costly_punishment, partner_choice or a mapping with a name."
    if error.validator == "oneOf" and isinstance(error.instance, Mapping):
        detail = min(error.context or [], key=lambda e: len(list(e.absolute_path)) * -1, default=None)
        sub = f" ({detail.message})" if detail is not None else ""
        return f"config {where}: invalid variant{sub}."
    if error.validator == "multipleOf":
        return f"config {where}: the population size must be even, got {error.instance}."
    return None


def _semantic_checks(section: Mapping[str, Any]) -> None:
    from coopeval.agents.registry import entry_error, is_scripted
    from coopeval.studies.evolution.bots import is_evo_bot, make_evo_bot

    for index, entry in enumerate(section["models"]):
        model = str(entry["model"])
        if is_scripted(model):
            if not is_evo_bot(model):
                raise ConfigError(
                    f"config evolution.models[{index}].model: {model!r} is not an evolution bot; use bot/evo-constant-<p>, "
                    "bot/evo-reciprocal or bot/evo-zero."
                )
            try:
                make_evo_bot(model)
            except KeyError as exc:
                raise ConfigError(f"config evolution.models[{index}].model: {exc.args[0]}") from None
        elif (problem := entry_error(model, entry.get("params"))) is not None:
            raise ConfigError(f"config evolution.models[{index}].{problem}.")
    names = [variant_name(v) for v in section["variants"]]
    if (pair := first_duplicate(names)) is not None:
        raise ConfigError(f"config evolution.variants[{pair[1]}]: the variant name {names[pair[1]]!r} is used twice.")
    # One label per protocol: the same model may appear once per protocol with its own params
    # (e.g. the V&H reference's temperature for one model only, issue 21 item 4).
    labels = [f"{model_label(e)}\x00{protocol}" for e in section["models"] for protocol in e.get("protocols", section["protocols"])]
    owners = [i for i, e in enumerate(section["models"]) for _ in e.get("protocols", section["protocols"])]
    if (pair := first_duplicate(labels)) is not None:
        earlier, later = owners[pair[0]], owners[pair[1]]
        label, protocol = labels[pair[1]].split("\x00")
        raise ConfigError(
            f"config evolution.models[{later}]: duplicates models[{earlier}] ({label}) under protocol {protocol}; "
            "add a label or restrict one entry's protocols."
        )


def variant_name(variant: str | Mapping[str, Any]) -> str:
    """``"none"`` → ``"default"``; other strings are their own name; mappings their ``name``."""
    if isinstance(variant, str):
        return "default" if variant == "none" else variant
    return str(variant["name"])


def variant_protocols(variant: str | Mapping[str, Any]) -> tuple[str, ...]:
    """Protocols a variant runs for (punishment variants default to V&H only)."""
    if isinstance(variant, str):
        return ("vh",) if variant in VH_ONLY_VARIANTS else ("vh", "horibe")
    if "protocols" in variant:
        return tuple(variant["protocols"])
    return ("vh",) if variant.get("punishment", "none") in VH_ONLY_VARIANTS else ("vh", "horibe")


def model_label(entry: Mapping[str, Any]) -> str:
    """The model's label in tables: its ``label`` or its model string."""
    return str(entry.get("label") or entry["model"])


def per_protocol(value: int | Mapping[str, int], protocol: str, missing: int) -> int:
    """A per-protocol config value: an integer for every protocol, or ``{protocol: n}`` with
    ``missing`` for a protocol not listed."""
    return int(value.get(protocol, missing)) if isinstance(value, Mapping) else int(value)


def run_settings(section: Mapping[str, Any], protocol: str, variant: str | Mapping[str, Any]) -> dict[str, Any]:
    """Flat :class:`EvolutionSettings` parameters of one (protocol, variant) of a validated
    section (``None`` = protocol default)."""
    overrides = {"punishment": variant} if isinstance(variant, str) else {k: v for k, v in variant.items() if k not in ("name", "protocols")}
    compat = section["compat"]
    matrix = section["matrix"]
    temperatures = section["temperatures"]
    params: dict[str, Any] = {
        "protocol": protocol,
        "n_agents": section["n_agents"],
        "generations": section["generations"],
        "endowment": float(section["endowment"]),
        "multiplier": float(section["multiplier"]),
        "punishment_loss": float(section["punishment_loss"]),
        "trace_length": section["trace_length"],
        "punishment": "none",
        "percent_base": section["percent_base"],
        "amount_unit": section["amount_unit"],
        "selection": section["selection"],
        "word_limit": section["word_limit"] if protocol == "horibe" else None,
        "strategy_temperature": temperatures["strategy"],
        "gameplay_temperature": temperatures["gameplay"],
        "invasion_per_generation": per_protocol(section["invasion"]["per_generation"], protocol, 0),
        "invasion_first_generation": section["invasion"]["first_generation"],
        "matrix_per_generation": per_protocol(matrix["per_generation"], protocol, 0),
        "matrix_first_generation": matrix["first_generation"],
        "matrix_samples": matrix["samples"],
        "matrix_temperature": matrix["temperature"],
        "matrix_x_c": float(matrix["x_c"]),
        "matrix_resources": float(matrix["resources"]),
        "matrix_round": matrix["round"],
        "monotonicity_constant_rows": matrix["monotonicity_constant_rows"],
        "score_rule": "game2_double" if compat["vh_score_game2_only"] and protocol == "vh" else "sum",
        "show_scores": not compat["vh_no_scores"],
        "generation_names": bool(compat["vh_generation_names"]),
        "no_system": bool(compat["vh_gemini_no_system"]),
        "horibe_observation_unstated": bool(compat["horibe_observation_unstated"]),
        "local_strategy_chars": section["local"]["strategy_chars"],
        "local_reasoning_chars": section["local"]["reasoning_chars"],
        "local_justification_chars": section["local"]["justification_chars"],
    }
    for key, value in overrides.items():
        params[key] = float(value) if key == "multiplier" else value
    return params
