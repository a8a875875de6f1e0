"""The model-against-model page's data: the store's paired comparisons, each linked to the cells behind it.

Every row of the ``comparisons`` table (docs/comparisons.md; the workflow's paired differences
Δ = a − b with their interval, p after the family's correction and minimum detectable effect)
becomes one row of ``data/pairs.js``; the page (``pairs.js``, ``#view=pairs&a=<agent>&b=<agent>``)
keeps the rows of the two agents picked, turned so that Δ is always the first minus the second,
and draws them with the ``pairs`` chart kind (:func:`coopeval.explorer.charts.pairs_kind`) beside their table.
"""

from __future__ import annotations

from typing import Any

import duckdb

from coopeval.explorer.queries import columns, rows

__all__ = ["pair_rows", "scope_href"]

FIELDS = ("study", "scope", "metric", "a", "b", "delta", "ci_low", "ci_high", "p_adjusted", "correction", "mde", "n_clusters")
"""The columns of ``comparisons`` the page shows (those a store has)."""


def scope_href(study: str, scope: str) -> str:
    """The cells behind a comparison's scope: CoopEval ``<mechanism>/<game>`` (``All``: every
    game), gossip ``<testbed>/<condition>/<matching>``, evolution ``<protocol>/<variant>``."""
    from coopeval.explorer.charts import href

    parts = scope.split("/")
    if study == "coopeval":
        mechanism, game = [*parts, ""][:2]
        return href(view="cells", study=study, mechanism=mechanism, game=None if game == "All" else game)
    if study == "gossip":
        return href(view="cells", study=study, mechanism=parts[1] if len(parts) > 1 else None, game=parts[0])
    return href(view="cells", study=study, mechanism=f"evolution/{parts[0]}")


def pair_rows(con: duckdb.DuckDBPyConnection, tables: set[str]) -> list[dict[str, Any]]:
    """Every ``comparisons`` row with ``href`` (its cells), ordered by study, scope and metric; none
    without the table."""
    if "comparisons" not in tables:
        return []
    present = [f for f in FIELDS if f in columns(con, "comparisons")]
    if not {"study", "scope", "metric", "a", "b", "delta"} <= set(present):
        return []
    found = rows(con, f"SELECT {', '.join(present)} FROM comparisons ORDER BY study, scope, metric, a, b")
    for r in found:
        r["href"] = scope_href(str(r["study"]), str(r["scope"]))
    return found
