"""Snakemake wildcard constraints of the CoopEval rules, derived from the registries.

``{mechanism}`` matches exactly the type names of :mod:`coopeval.studies.coopeval.mechanisms.catalog`
and ``{game}`` exactly the config keys of :mod:`coopeval.games`, so a new mechanism or game needs
no edit of the workflow; ``{cell}`` is the 12-hex-digit cell id (:mod:`coopeval.core.hashing`).
"""

from __future__ import annotations

from coopeval.games import game_key_pattern
from coopeval.studies.coopeval.mechanisms.catalog import mechanism_name_pattern

CELL_ID_PATTERN = "[0-9a-f]{12}"
"""A cell id: the first 12 hex digits of the cell's content hash."""


def wildcard_constraints() -> dict[str, str]:
    """``{"cell": …, "mechanism": …, "game": …}``: regular expressions for Snakemake's
    ``wildcard_constraints`` (e.g. ``wildcard_constraints: **wildcard_constraints()``)."""
    return {"cell": CELL_ID_PATTERN, "mechanism": mechanism_name_pattern(), "game": game_key_pattern()}
