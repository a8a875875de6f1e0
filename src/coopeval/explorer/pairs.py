"""The model-against-model page's data: the store's paired comparisons, each linked to the cells behind it.

Every row of the ``comparisons`` table (docs/comparisons.md; the workflow's paired differences
Δ = a − b with their interval, p after the family's correction and minimum detectable effect)
becomes one row of ``data/pairs.js``; the page (``pairs.js``, ``#view=pairs&a=<agent>&b=<agent>``)
keeps the rows of the two agents picked, turned so that Δ is always the first minus the second,
and draws them with the ``pairs`` chart kind (:func:`pairs_kind`) beside their table.
"""

from __future__ import annotations

from typing import Any

import duckdb

from coopeval.explorer.queries import columns, rows

__all__ = ["pair_rows", "pairs_kind", "scope_href"]

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


def pairs_kind() -> dict[str, Any]:
    """The chart of one pair of agents: Δ = first − second per scope (a row per mechanism and
    game, testbed and condition, protocol and variant), its interval as a line, a panel per study
    and metric with its own x scale; filled where significant after the correction."""
    import altair as alt

    from coopeval.explorer.charts import _rows_data, _spec

    tooltip: list[Any] = ["study:N", "metric:N", "scope:N", alt.Tooltip("delta:Q", format=".3f"), alt.Tooltip("ci_low:Q", format=".3f"),
               alt.Tooltip("ci_high:Q", format=".3f"), alt.Tooltip("p_adjusted:Q", format=".4f"), "significant:N", alt.Tooltip("mde:Q", format=".3f")]  # fmt: skip
    base = alt.Chart().encode(y=alt.Y("scope:N", title=None), tooltip=tooltip)
    zero = alt.Chart().mark_rule(color="#888", strokeDash=[3, 3]).encode(x=alt.datum(0))
    interval = base.mark_rule().encode(x=alt.X("ci_low:Q", title="Δ = first − second"), x2="ci_high:Q")
    point = base.mark_point(size=60, cursor="pointer").encode(
        x=alt.X("delta:Q"), fill=alt.Fill("significant:N", scale=alt.Scale(domain=["yes", "no"], range=["#4c78a8", "white"])), stroke=alt.value("#4c78a8")
    )
    chart = (
        alt.layer(zero, interval, point, data=_rows_data()).properties(width=300)
        .facet(facet=alt.Facet("panel:N", title=None), columns=2)
        .resolve_scale(x="independent", y="independent").resolve_axis(x="independent")
    )  # fmt: skip
    fields = [["panel", "study · metric"], ["scope", "scope"], ["delta", "Δ"], ["ci_low", "95 % low"], ["ci_high", "95 % high"],
              ["p_adjusted", "p (corrected)"], ["correction", "correction"], ["significant", "significant"], ["mde", "MDE"], ["n_clusters", "clusters"]]  # fmt: skip
    note = ("Paired differences of the store's comparisons table (docs/comparisons.md): Δ = first − second per scope, the line its"
            " 95 % interval, filled where p after the family's correction is below 0.05; MDE = the minimum detectable effect."
            " Click a point for the cells behind it.")  # fmt: skip
    return {"spec": _spec(chart), "fields": fields, "note": note, "at": ["panel", "scope", "delta"]}
