"""Designs: ``mediator_design.json`` / ``contract_design.json`` → ``designs`` and design ``decisions`` rows.

A mediator maps each number of delegating players ``k = 1..N`` to an action; a contract gives one
integer transfer per action (docs/protocol/reference-data.md#layout). Designs are stored in our token form (``"A<index>"``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coopeval.studies.coopeval.mechanisms.catalog import mechanism_info
from coopeval.studies.coopeval.reference.importer.config import ExperimentConfig
from coopeval.studies.coopeval.reference.importer.errors import ReleasedFileError
from coopeval.studies.coopeval.reference.importer.fields import (
    action_index,
    action_token,
    is_number,
    read_json,
    seated_agent,
)
from coopeval.studies.coopeval.reference.importer.rows import CellRows

__all__ = ["read_designs"]


def read_designs(
    folder: Path, cfg: ExperimentConfig, rows: CellRows
) -> dict[str, dict[str, Any]]:
    """Mediator or contract designs keyed by seated name (token form); also emits rows.

    Returns ``{"<type>#P<seat>": design}`` with a mediator design ``{"1": "A0", …, "N": …}`` or a
    contract design ``{"A0": transfer, …}``. Raises ReleasedFileError unless every seated agent
    of the roster has exactly one well-formed design.
    """
    game, n = cfg.game, cfg.game.n_players
    expected_names = {f"{a}#P{s}" for a in cfg.roster for s in range(1, n + 1)}
    if mechanism_info(cfg.mechanism_type).design_kind == "mediator":
        path = folder / "mediator_design.json"
        shape = '{"<type>#P<seat>": {"mediator": [[1, "<Enum>.<MEMBER>"], …, [N, …]], "trace_id", ["response"]}}'
        kind = "mediator"
    else:
        path = folder / "contract_design.json"
        shape = '{"<type>#P<seat>": {"contract": {"<Enum>.<MEMBER>": int, …}, "trace_id", ["response"]}}'
        kind = "contract"
    data = read_json(path, shape)
    if not isinstance(data, Mapping):
        raise ReleasedFileError(path, f"expected a JSON object {shape}")
    if set(data) != expected_names:
        missing, extra = sorted(expected_names - set(data)), sorted(set(data) - expected_names)
        raise ReleasedFileError(path, f"expected one design per seated agent; missing {missing}, unexpected {extra}")
    designs: dict[str, dict[str, Any]] = {}
    for name in sorted(data):
        agent, seat = seated_agent(name, cfg.roster, n, path, f"key {name!r}")
        entry = data[name]
        if not isinstance(entry, Mapping) or kind not in entry:
            raise ReleasedFileError(path, f"[{name!r}] lacks {kind!r}; expected {shape}")
        response = entry.get("response")
        if response is not None and not isinstance(response, str):
            raise ReleasedFileError(path, f"[{name!r}].response must be a string")
        design: dict[str, Any]
        if kind == "mediator":
            pairs = entry["mediator"]
            if not isinstance(pairs, list):
                raise ReleasedFileError(path, f"[{name!r}].mediator must be a list of [k, action] pairs")
            design = {}
            for pair in pairs:
                if (
                    not isinstance(pair, list)
                    or len(pair) != 2
                    or not isinstance(pair[0], int)
                    or isinstance(pair[0], bool)
                ):
                    raise ReleasedFileError(path, f"[{name!r}].mediator entry {pair!r}; expected [k, '<Enum>.<MEMBER>']")
                design[str(pair[0])] = action_token(action_index(game, pair[1], path, f"[{name!r}].mediator[{pair[0]}]"))
            if set(design) != {str(d) for d in range(1, n + 1)} or len(pairs) != n:
                raise ReleasedFileError(path, f"[{name!r}].mediator must map each k = 1..{n} exactly once")
            design = {str(d): design[str(d)] for d in range(1, n + 1)}
            decision_kind = "mediator_design"
        else:
            contract = entry["contract"]
            if not isinstance(contract, Mapping):
                raise ReleasedFileError(path, f"[{name!r}].contract must be an object {{'<Enum>.<MEMBER>': int}}")
            values: dict[int, Any] = {}
            for key, value in contract.items():
                values[action_index(game, key, path, f"[{name!r}].contract key")] = value
                if not is_number(value):
                    raise ReleasedFileError(path, f"[{name!r}].contract[{key!r}] is {value!r}; expected an integer")
            if set(values) != set(range(game.n_actions)):
                raise ReleasedFileError(path, f"[{name!r}].contract must give one value per action of {game.name}")
            design = {action_token(i): values[i] for i in range(game.n_actions)}
            decision_kind = "contract_design"
        designs[name] = design
        encoded = json.dumps(design, sort_keys=False)
        rows.add("designs", designer=name, agent=agent, seat=seat, design_kind=kind, design=encoded, status="ok")
        rows.add_decision(f"{rows.cell_id}/design/{name}", matchup_id=None, round=0, seat=seat, agent=agent,
                          kind=decision_kind, parsed=design, response=response)
    return designs

