"""Cell specs: the play-cost priority that orders model jobs longest first."""

from __future__ import annotations

import pytest

from coopeval.pipeline.config import load_config
from coopeval.studies.coopeval.cells import build_cells, play_cost


@pytest.mark.parametrize(
    ("mechanism", "game", "cost"),
    [
        ("Reputation", "public_goods", 12),  # weight 4 x 3 players
        ("Reputation", "prisoners_dilemma", 8),
        ("ReputationFirstOrder", "trust_game", 4),
        ("Repetition", "public_goods", 6),
        ("NoMechanism", "prisoners_dilemma", 2),
        ("Contracting", "public_goods", 3),
    ],
)
def test_play_cost(mechanism: str, game: str, cost: int) -> None:
    assert play_cost({"mechanism": mechanism, "game": game, "game_params": {}}) == cost


def test_default_config_starts_with_reputation_plus_public_goods() -> None:
    cells = build_cells(load_config(["config/config.yaml"]))
    first = max(cells, key=play_cost)
    assert (first["mechanism"], first["game"]) == ("Reputation", "public_goods")
    assert sorted({play_cost(c) for c in cells}) == [2, 3, 4, 6, 8, 12]
