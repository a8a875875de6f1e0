"""The design-quality table (docs/protocol/tables.md step 6, docs/protocol/design-checks.md#ns-wd): per mechanism with designs, the share of
submitted mediator / contract designs that pass NS and WD, averaged over games."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import polars as pl

from coopeval.games import Game
from coopeval.games.designs import design_checks
from coopeval.studies.coopeval.mechanisms import catalog
from coopeval.studies.coopeval.mechanisms.catalog import MECHANISM_INFO
from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE
from coopeval.studies.coopeval.tables.stats import in_order, ranked_rows, standard_error

__all__ = ["design_rows"]


def design_rows(
    designs: pl.DataFrame,
    games: Sequence[str],
    game_of: Callable[[str], Game],
    agent_order: Sequence[str],
    is_llm: Callable[[str], bool] | None = None,
) -> list[dict[str, object]]:
    """Ranked rows of the design-quality table (docs/protocol/tables.md step 6, docs/protocol/design-checks.md#ns-wd).

    Per game, the share (in %) of designs, pooled over runs and seats, that pass NS / WD; a
    cell is the mean over ``games`` ± s.e. across games, or, with one game, that game's share ±
    binomial s.e. NS/WD come from the ``ns``/``wd`` columns of a ``design_quality`` frame or are
    computed with :func:`coopeval.games.designs.design_checks`. The LLM Average is over the
    agents ``is_llm`` accepts (default: every agent); with none, the table has no LLM Average row.
    """
    usable = designs.filter(pl.col("game").is_in(list(games)))
    if "status" in usable.columns:
        usable = usable.filter(pl.col("status").is_null() | (pl.col("status") == "ok"))
    precomputed = "ns" in usable.columns and "wd" in usable.columns  # a ``design_quality`` table
    passes: dict[tuple[str, str, str, str], list[bool]] = {}
    for row in usable.iter_rows(named=True):
        kind = MECHANISM_INFO[row["mechanism"]].design_kind if row["mechanism"] in MECHANISM_INFO else None
        if kind is None or row["design_kind"] != kind:
            continue
        if precomputed:
            checks = {"NS": bool(row["ns"]), "WD": bool(row["wd"])}
        else:
            checks = design_checks(game_of(row["game"]), kind, row["design"])
        for metric in ("NS", "WD"):
            passes.setdefault((row["mechanism"], metric, row["agent"], row["game"]), []).append(checks[metric])
    rows: list[dict[str, object]] = []
    mechanisms = in_order(sorted({k[0] for k in passes}), catalog.MECHANISM_ORDER)
    agents = in_order(sorted({k[2] for k in passes}), agent_order)
    for mech in mechanisms:
        for metric in ("NS", "WD"):
            rates: dict[str, dict[str, float]] = {}
            counts: dict[str, dict[str, int]] = {}
            for agent in agents:
                for game in games:
                    got = passes.get((mech, metric, agent, game))
                    if got:
                        rates.setdefault(agent, {})[game] = float(np.mean(got))
                        counts.setdefault(agent, {})[game] = len(got)
            if not rates:
                continue
            members = [a for a in rates if is_llm is None or is_llm(a)]
            avg_games = [g for g in games if members and all(g in rates[a] for a in members)]
            llm = {g: float(np.mean([rates[a][g] for a in members])) for g in avg_games}
            cells: dict[str, dict[str, object]] = {}
            for agent, by_game in [*rates.items(), (LLM_AVERAGE, llm)]:
                if not by_game:
                    continue
                xs = [by_game[g] for g in games if g in by_game]
                if len(xs) >= 2:
                    se = standard_error(xs)
                elif agent != LLM_AVERAGE:
                    (g,) = [g for g in games if g in by_game]
                    p, n = by_game[g], counts[agent][g]
                    se = math.sqrt(p * (1 - p) / n)  # per-game variant: binomial s.e. (docs/protocol/tables.md step 6)
                else:
                    se = None
                cells[agent] = {
                    "mechanism": mech,
                    "game": "All" if len(xs) != 1 else next(g for g in games if g in by_game),
                    "metric": metric,
                    "mean": 100.0 * float(np.mean(xs)),
                    "se": None if se is None else 100.0 * se,
                    "n": len(xs),
                }
            rows.extend(ranked_rows(cells, metric, agents))
    return rows
