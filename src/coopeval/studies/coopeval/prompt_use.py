"""Which prompt templates a CoopEval cell can render (issue 20): its mechanism's declaration
(:meth:`~coopeval.studies.coopeval.mechanisms.base.Mechanism.prompt_templates`, given the cell's
mechanism parameters) and the style line of each model-backed agent. The cell id hashes exactly
these, and :func:`~coopeval.studies.coopeval.play.play_cell` plays with a library restricted to
them, so a template rendered without being declared fails the cell instead of escaping its id.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coopeval.agents.registry import is_scripted
from coopeval.studies.coopeval.mechanisms import mechanism_class
from coopeval.studies.coopeval.mechanisms.catalog import mechanism_info


def agent_styles(spec: Mapping[str, Any]) -> frozenset[str]:
    """The styles (``IO``/``CoT``) of the cell's model-backed agents (scripted bots get none)."""
    return frozenset(str(a.get("style", "IO")) for a in spec["agents"] if not is_scripted(str(a["model"])))


def cell_templates(spec: Mapping[str, Any]) -> frozenset[str]:
    """The templates the cell ``spec`` (``mechanism``, ``mechanism_params``, ``agents``) can render.

    Raises
    ------
    KeyError
        Unknown mechanism, naming the known ones.
    """
    name = str(spec["mechanism"])
    return mechanism_class(name).prompt_templates(mechanism_info(name), dict(spec.get("mechanism_params") or {})) | {f"style_{s}" for s in agent_styles(spec)}
