"""The group-size figure (docs/protocol/games.md#public-goods): contribution rates per
(mechanism, N, agent) from hand-made decisions, the N a config plays, and the chart renders."""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.core.charts import save_chart
from coopeval.studies.coopeval.figures.catalog import core_figures, group_sizes, has_ablation
from coopeval.studies.coopeval.figures.group_size import group_size_chart, group_size_frame


def _decisions() -> tuple[pl.DataFrame, pl.DataFrame]:
    rows = [
        # N = 3, replicate 1 (cell a): A contributes 2 of 2, B 0 of 2
        ("a", "A", 0), ("a", "A", 0), ("a", "B", 1), ("a", "B", 1),
        # N = 3, replicate 2 (cell b): A contributes 1 of 2
        ("b", "A", 0), ("b", "A", 1),
        # N = 5 (cell c): A 1 of 4, B 1 of 1
        ("c", "A", 0), ("c", "A", 1), ("c", "A", 1), ("c", "A", 1), ("c", "B", 0),
    ]
    decisions = pl.DataFrame(
        [{"cell_id": c, "mechanism": "NoMechanism", "game": "PublicGoods", "agent": a, "kind": "action", "status": "ok", "action": x}
         for c, a, x in rows]
        + [{"cell_id": "c", "mechanism": "NoMechanism", "game": "PublicGoods", "agent": "A", "kind": "action", "status": "failed", "action": None},
           {"cell_id": "a", "mechanism": "NoMechanism", "game": "PrisonersDilemma", "agent": "A", "kind": "action", "status": "ok", "action": 1}]
    )
    cells = pl.DataFrame({"cell_id": ["a", "b", "c"], "players": [3, 3, 5]})
    return decisions, cells


def test_contribution_rates_by_hand() -> None:
    frame = group_size_frame(*_decisions())
    got = {(r["players"], r["agent"]): (r["contribution_rate"], r["decisions"]) for r in frame.to_dicts()}
    assert got == {
        (3, "A"): (pytest.approx((1.0 + 0.5) / 2), 4),  # mean over the two replicates
        (3, "B"): (0.0, 2),
        (3, "all agents"): (pytest.approx((0.5 + 0.5) / 2), 6),  # cell a 2/4, cell b 1/2
        (5, "A"): (0.25, 4),
        (5, "B"): (1.0, 1),
        (5, "all agents"): (pytest.approx(2 / 5), 5),
    }


def test_chart_renders(tmp_path) -> None:
    paths = save_chart(group_size_chart(group_size_frame(*_decisions())), tmp_path / "group_size", ["svg"])
    assert paths[0].read_text().lstrip().startswith("<svg")


def test_the_figure_is_drawn_for_two_or_more_group_sizes() -> None:
    n5 = {"mechanism": "NoMechanism", "name": "n5", "params": {}, "game_params": {"public_goods": {"players": 5}}}
    config = {"games": ["public_goods"], "game_params": {}, "variants": [n5]}
    assert group_sizes(config) == [3, 5]
    assert group_sizes({**config, "game_params": {"public_goods": {"players": 5}}}) == [5]
    assert group_sizes({**config, "games": ["prisoners_dilemma"]}) == []
    assert not has_ablation([n5]) and has_ablation([{**n5, "params": {"discount": 0.7}}])
    stems = [e.stem for e in core_figures(["NoMechanism"], ["public_goods"], False, True)]
    assert stems[:2] == ["mean_fitness", "group_size"]
