"""The ``gossip:`` config section: defaults, validation and condition resolution (issue 10 item 8).

:func:`validate_gossip_config` fills the defaults of ``config.schema.yaml`` and then checks what
a schema cannot, before any model call; every error is a :class:`GossipConfigError` whose message
names the offending key (``gossip.conditions[2]``, ``gossip.testbed_params.donation.n``, …).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from coopeval.agents.registry import agent_name, entry_error, is_scripted
from coopeval.core.errors import ConfigError
from coopeval.core.validation import field_path, first_duplicate, validator_with_defaults
from coopeval.studies.gossip.conditions import (
    BUILTIN_CONDITIONS,
    GAMMA_SWEEP,
    Condition,
    gamma_conditions,
)
from coopeval.studies.gossip.schedules import ScheduleError, align_sweep, random_alternating
from coopeval.studies.gossip.testbeds import REGISTRY, make_testbed

SCHEMA_PATH = Path(__file__).with_name("config.schema.yaml")


class GossipConfigError(ConfigError):
    """An invalid ``gossip:`` section; the message names the key (a
    :class:`~coopeval.core.errors.ConfigError`, so the workflow reports it before any call)."""


def load_schema() -> dict[str, Any]:
    """The JSON schema of the section: ``config.schema.yaml`` with the testbed enum and each
    testbed's ``testbed_params`` schema filled in from the registry (:data:`.testbeds.REGISTRY`)."""
    schema = dict(yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8")))
    props = schema["properties"]
    props["testbeds"]["items"] = {"enum": list(REGISTRY)}
    props["testbed_params"]["properties"] = {key: entry.config_schema() for key, entry in REGISTRY.items()}
    return schema


def _path(error: Any) -> str:
    return field_path(error, "gossip")


def _validator(schema: Mapping[str, Any]) -> Any:
    return validator_with_defaults(schema)


def applies(condition: Condition, testbed: str) -> bool:
    """Whether ``condition`` has cells on ``testbed``: attacker conditions only on the testbeds
    whose registry entry has ``attackers`` (Max exists in the reference for the donation game and
    the PD only, docs/protocol/gossip.md#scope, #greedy-defector; the collusive attackers are specified for the donation game, docs/protocol/gossip.md#collusive-attackers,
    and we add the PD). They are skipped elsewhere, so one condition list serves all."""
    return condition.attacker == "none" or REGISTRY[testbed].attackers


def resolve_conditions(section: Mapping[str, Any]) -> list[Condition]:
    """The conditions named in ``section["conditions"]``, in order (``gamma_sweep`` expands).

    Raises
    ------
    GossipConfigError
        Unknown name or bad flags, naming ``gossip.conditions[i]`` / ``gossip.condition_defs.<name>``.
    """
    defs: dict[str, Condition] = {}
    for name, flags in (section.get("condition_defs") or {}).items():
        try:
            defs[name] = Condition.from_json({**dict(flags), "name": name})
        except (TypeError, ValueError) as exc:
            raise GossipConfigError(f"gossip.condition_defs.{name}: {exc}") from None
    out: list[Condition] = []
    for i, name in enumerate(section["conditions"]):
        if name == GAMMA_SWEEP:
            out.extend(gamma_conditions(section["gamma_grid"]))
        elif name in defs:
            out.append(defs[name])
        elif name in BUILTIN_CONDITIONS:
            out.append(BUILTIN_CONDITIONS[name])
        else:
            known = sorted({*BUILTIN_CONDITIONS, *defs, GAMMA_SWEEP})
            raise GossipConfigError(f"gossip.conditions[{i}]: unknown condition {name!r}; known: {', '.join(known)}")
    names = [c.name for c in out]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise GossipConfigError(f"gossip.conditions: condition(s) {', '.join(duplicates)} listed twice")
    return out


def validate_gossip_config(section: Mapping[str, Any] | None) -> dict[str, Any]:
    """Fill defaults and validate the ``gossip:`` section; return the completed copy.

    Raises
    ------
    GossipConfigError
        Naming the key: schema violations (unknown testbed, tone set, matching policy, unknown
        parameter), unknown conditions, an attacker condition that applies to none of the
        testbeds (see :func:`applies`), an ``n`` for which the schedule cannot exist or that
        leaves too few honest agents, an unknown model or invalid agent options, two
        models with the same name (label).
    """
    data = copy.deepcopy(dict(section or {}))
    errors = sorted(_validator(load_schema()).iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        e = errors[0]
        raise GossipConfigError(f"{_path(e)}: {e.message}")
    conditions = resolve_conditions(data)
    for key in data["testbeds"]:
        params = dict(data["testbed_params"].get(key, {}))
        where = f"gossip.testbed_params.{key}"
        try:
            testbed = make_testbed(key, **params)
        except ValueError as exc:
            raise GossipConfigError(f"{where}: {exc}") from None
        n = testbed.n
        if REGISTRY[key].schedule == "alternating":
            try:
                if data["matching"] == "align_sweep":
                    align_sweep(n)
                else:
                    import numpy as np

                    random_alternating(n, np.random.default_rng(0))
            except ScheduleError as exc:
                raise GossipConfigError(f"{where}.n: {exc}") from None
        for cond in conditions:
            if not applies(cond, key):
                continue
            if cond.attacker == "collusive" and n < 4:
                raise GossipConfigError(f"{where}.n: the collusive attackers need n >= 4 (two attackers, two honest agents), not {n}")
            if cond.attacker == "max" and n < 2:
                raise GossipConfigError(f"{where}.n: Max needs at least one other agent")
    for cond in conditions:
        if not any(applies(cond, key) for key in data["testbeds"]):
            raise GossipConfigError(
                f"gossip.conditions: {cond.name!r} has attackers, which exist for "
                f"{', '.join(k for k, e in REGISTRY.items() if e.attackers)} only; "
                f"the testbeds are {', '.join(data['testbeds'])}"
            )
    for i, entry in enumerate(data["models"]):
        model = str(entry["model"])
        if is_scripted(model):
            from coopeval.studies.gossip.bots import GOSSIP_BOT_MODELS

            if model not in GOSSIP_BOT_MODELS:
                raise GossipConfigError(
                    f"gossip.models[{i}].model: unknown gossip bot {model!r}; use one of {', '.join(GOSSIP_BOT_MODELS)}"
                )
        elif (problem := entry_error(model, entry.get("params"))) is not None:
            raise GossipConfigError(f"gossip.models[{i}].{problem}")
    names = [agent_name(entry) for entry in data["models"]]
    if (pair := first_duplicate(names)) is not None:  # one name would pool two populations in every table
        earlier, later = pair
        raise GossipConfigError(
            f"gossip.models[{later}]: duplicates gossip.models[{earlier}] ({names[later]}); give one of them a distinct label"
        )
    return data
