"""Which cells of a store the result tables hold: the default cells, and the cells of the variants
that change only the number of players N (issue 41 item 9; ``config/public_goods_n.yaml``).

The per-game table shows every N a game was played at as its own rows (column ``players``,
sections ``Public Goods (N = 5)``), like the ``group_size`` figure and the explorer. A variant
enters when its cells differ from the default cells of the same (mechanism, game) in ``players``
only: same ``mechanism_params`` (canonical JSON in the cell manifest), base prompt wording (no
``@<prompt variant>``). Ablation variants (other mechanism parameters) stay out, as do prompt
variants (their figures and the sensitivity report show them).

The aggregate and design-quality tables keep the default cells: the paper's aggregate
(arXiv 2604.15267 §6, docs/protocol/tables.md#aggregate) is over the four social dilemmas as
played there (Public Goods with N = 3), so further N do not change its numbers
(docs/protocol/tables.md#group-sizes).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from coopeval.games import get_game
from coopeval.studies.coopeval.cells import DEFAULT_VARIANT

__all__ = ["CellSet", "table_cell_sets"]

MANIFEST_KEYS = frozenset({"mechanism", "game", "mechanism_params", "players"})
"""The manifest columns (besides ``cell_id``, ``variant``) the selection compares."""


@dataclass(frozen=True)
class CellSet:
    """The cells of one set of per-game rows.

    Attributes
    ----------
    cell_ids:
        The cells (manifest ``cell_id``).
    players:
        (mechanism, game type name) → N of those cells.
    """

    cell_ids: tuple[str, ...]
    players: dict[tuple[str, str], int] = field(default_factory=dict)


def _type_name(key: str) -> str:
    """The type name of a manifest's game key (the metrics' ``game``); the key itself for a game
    not registered in this process."""
    try:
        return get_game(key).name
    except KeyError:
        return key


def table_cell_sets(cells: pl.DataFrame) -> tuple[CellSet, list[CellSet]]:
    """The default cells and the further group sizes of a cell manifest.

    Parameters
    ----------
    cells:
        The store's ``cells`` table (columns ``cell_id``, ``mechanism``, ``variant``, ``game``
        (config key), ``mechanism_params``, ``players``; a manifest with ``cell_id`` and
        ``variant`` only, e.g. an older store's, has no further group sizes and no ``players``).

    Returns
    -------
    (default, others)
        The cells whose variant is ``default``, and one :class:`CellSet` per further N (sorted):
        the variant cells that differ from the default cells of their (mechanism, game) in
        ``players`` only.

    Raises
    ------
    ValueError
        If two variants play the same (mechanism, game) at the same further N (the table would
        pool them); it names both: give them different ``players`` or drop one from ``variants``.
    """
    default_rows = cells.filter(pl.col("variant") == DEFAULT_VARIANT)
    if not set(cells.columns) >= MANIFEST_KEYS:
        return CellSet(tuple(default_rows["cell_id"].to_list())), []
    name = {key: _type_name(key) for key in cells["game"].unique().to_list()}
    default = CellSet(
        tuple(default_rows["cell_id"].to_list()),
        {
            (r["mechanism"], name[r["game"]]): int(r["players"])
            for r in default_rows.iter_rows(named=True)
            if r["players"] is not None
        },
    )
    base = {
        (r["mechanism"], r["game"]): (r["mechanism_params"], r["players"])
        for r in default_rows.iter_rows(named=True)
    }
    chosen: dict[int, dict[tuple[str, str], tuple[str, list[str]]]] = {}
    for r in cells.filter(
        (pl.col("variant") != DEFAULT_VARIANT) & ~pl.col("variant").str.contains("@", literal=True)
    ).iter_rows(named=True):
        reference = base.get((r["mechanism"], r["game"]))
        if (
            reference is None
            or r["players"] is None
            or reference[0] != r["mechanism_params"]
            or reference[1] == r["players"]
        ):
            continue
        key = (r["mechanism"], name[r["game"]])
        variant, ids = chosen.setdefault(int(r["players"]), {}).setdefault(key, (r["variant"], []))
        if variant != r["variant"]:
            raise ValueError(
                f"config variants: {variant!r} and {r['variant']!r} both play {r['mechanism']} {r['game']} with players"
                f" {r['players']}; the result tables hold one set of cells per N: give them different"
                " game_params players or drop one from variants"
            )
        ids.append(r["cell_id"])
    others = [
        CellSet(tuple(i for _, ids in by_cell.values() for i in ids), dict.fromkeys(by_cell, n))
        for n, by_cell in sorted(chosen.items())
    ]
    return default, others
