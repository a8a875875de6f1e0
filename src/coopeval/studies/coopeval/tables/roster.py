"""The tables' agent columns from a config roster: order and labels.

The column order of the result tables is the order of the config's ``agents`` list and a
column's label is the entry's ``table_label`` (default: the agent type string ``model(style)``),
so the paper's six models and their short labels live in ``config/paper.yaml``, not in code.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from coopeval.agents.registry import agent_name, is_llm
from coopeval.studies.coopeval.tables.frames import AgentColumns

__all__ = ["roster_file_agents", "table_agents"]


def table_agents(agents: Sequence[Mapping[str, Any]]) -> AgentColumns:
    """The table columns of config ``agents`` entries (each with ``model`` and optionally
    ``style``, ``label``, ``table_label``): type strings in roster order, their labels, and which
    are LLM agents (:func:`coopeval.agents.registry.is_llm` of the entry's ``model``).

    Duplicate type strings keep their first position.
    """
    order: list[str] = []
    labels: dict[str, str] = {}
    llm: dict[str, bool] = {}
    for entry in agents:
        name = agent_name(entry)
        llm.setdefault(name, is_llm(str(entry["model"])))
        if name not in order:
            order.append(name)
        if entry.get("table_label"):
            labels.setdefault(name, str(entry["table_label"]))
    return AgentColumns(tuple(order), labels, llm)


def roster_file_agents(path: str | Path) -> AgentColumns:
    """:func:`table_agents` of the ``agents`` list of a config file (e.g. ``config/paper.yaml``,
    whose roster is the released data's).

    Raises
    ------
    ValueError
        Naming the file, if it has no ``agents`` list.
    """
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    agents = data.get("agents") if isinstance(data, Mapping) else None
    if not isinstance(agents, list):
        raise ValueError(f"{path}: no `agents` list; pass a config whose agents give the tables' columns (e.g. config/paper.yaml)")
    return table_agents(agents)
