"""Helpers shared by the Mediation and Contracting transcript tests."""

from __future__ import annotations

import json
from typing import Any

import polars as pl

from coopeval.agents.bots import Bot, make_bot
from tests.helpers import play_bots


def play_design_cell(
    mechanism: str, roster: list[Bot], game: str, seed: int = 42, compat: dict[str, Any] | None = None
) -> dict[str, pl.DataFrame]:
    """Play one cell with ``roster`` (test-only bots included; the config only names the cell)."""
    return play_bots(mechanism, game, roster, seed=seed, compat=compat)


def bots(*names: str) -> list[Bot]:
    return [make_bot(n) for n in names]


def moves(tables: dict[str, pl.DataFrame], mid: str) -> pl.DataFrame:
    return tables["decisions"].filter((pl.col("matchup_id") == mid) & (pl.col("kind") == "action")).sort("seat")


def selection(tables: dict[str, pl.DataFrame], mid: str) -> dict[str, Any]:
    row = tables["selections"].filter(pl.col("matchup_id") == mid)
    assert row.height == 1
    return selection_payload(row.row(0, named=True))


def selection_payload(row: dict[str, Any]) -> dict[str, Any]:
    """A ``selections`` row as one dict (details merged in)."""
    return {
        **json.loads(row["details"]),
        "design_kind": row["design_kind"],
        "selected_index": row["selected_index"],
        "selected_designer": row["selected_designer"],
        "design": json.loads(row["design"]),
    }
