"""The explorer's charts: Vega-Lite specs written with Altair, filled in the page with rows of the site's data.

A chart is a *kind* (a Vega-Lite spec whose data is the named dataset ``rows``, the columns
its table shows, a note and, for charts whose marks can coincide, ``at``: the fields that place a
mark, so that a click where several marks coincide lists them all), written once into ``data/index.js``, and *instances*
``{"kind", "title", "rows"}``: a study-wide chart's rows in a data file of their own
(``data/charts/<n>.js``, listed in the index, loaded by the study's leaderboard page), a
per-cell chart in the cell's data file. The page (``charts.js``) puts an instance's rows into the spec's ``datasets``, draws
it with the Vega, Vega-Lite and vega-embed scripts shipped in the site (``assets/vendor.json``)
and shows the same rows as a table behind a toggle. Every row carries ``href``, the page a click
on its mark opens (a cell, an episode's round, a filtered list of cells).

Charts (docs/explorer.md#charts):

- leaderboards, one per study and metric: mean ± 95 % interval and tie group per agent
  (:mod:`coopeval.explorer.overview`);
- CoopEval, per cell: the probability each agent put on the game's cooperative action per round
  (mean over its match-ups; arXiv 2604.15267 §3), and the replicator trajectory of the cell's
  metagame (population share per agent and step, drawn to a little past where it settles; docs/protocol/evaluation.md);
- gossip: the share of cooperative actions and the tones of honest gossip per round, condition
  and testbed (arXiv 2602.07777 §4; :func:`coopeval.studies.gossip.summary.cooperation_by_round`);
- evolution: mean final resources and donation fraction per generation, protocol and variant
  (arXiv 2412.10270 §3).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote

import duckdb

from coopeval.explorer.aggregate import AGGREGATE_LABEL, RAW_LABEL
from coopeval.explorer.extras import SETTLED_WITHIN
from coopeval.explorer.overview import NORMAL
from coopeval.explorer.queries import rows

__all__ = ["chart_kinds", "cooperation_rows", "href", "pairs_kind", "study_charts", "trajectory_chart"]



def href(**params: object) -> str:
    """The page's hash for ``params`` (as the page's ``hash()`` writes it: encodeURIComponent)."""
    keep = "-_.!~*'()"
    return "#" + "&".join(quote(k, safe="") + "=" + quote(str(v), safe=keep) for k, v in params.items() if v is not None and v != "")


PALETTE = (
    "#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d", "#bab0ac", "#ff9da6",
    "#1f3b73", "#8c510a", "#2ca02c", "#7f0000", "#17becf", "#6a3d9a", "#bcbd22", "#000000", "#ff7f0e", "#1b9e77",
)
"""Twenty distinct colours (Vega's tableau10, then ten more of other hues or lightness): a colour
scale draws each value of its field in its own colour; a board field with more values gets
:func:`palette` of its length instead (a colour names one value, never two)."""


def palette(n: int) -> list[str]:
    """``n`` distinct colours: :data:`PALETTE`, then colours spread by the golden angle in hue
    with three lightness levels, each different from every earlier one."""
    out = list(PALETTE[:n])
    k = 0
    while len(out) < n:
        hue, light = (k * 137.508) % 360.0, (0.30, 0.48, 0.66)[k % 3]
        k += 1
        candidate = _hsl(hue, 0.62, light)
        if candidate not in out:
            out.append(candidate)
    return out


def _hsl(hue: float, saturation: float, lightness: float) -> str:
    import colorsys

    r, g, b = colorsys.hls_to_rgb(hue / 360.0, lightness, saturation)
    return "#" + "".join(f"{round(255 * v):02x}" for v in (r, g, b))


def colour(field: str, title: str | None = None) -> Any:
    """The colour encoding of ``field`` over :data:`PALETTE` (a colour names one value)."""
    import altair as alt

    return alt.Color(f"{field}:N", scale=alt.Scale(range=list(PALETTE)), title=title or field)


VALIDATE = False
"""Whether each spec is checked against the Vega-Lite schema as it is written (tests/explorer/test_charts.py
checks every kind; skipping it at build time saves a second or more of every build)."""


def _spec(chart: Any) -> dict[str, Any]:
    spec: dict[str, Any] = chart.to_dict(validate=VALIDATE)
    spec.pop("datasets", None)
    return spec


def _rows_data() -> Any:
    import altair as alt

    return alt.NamedData(name="rows")


COLUMNS = 3
"""Panels per row of a faceted chart."""

BOARD_STEP = 12
"""Height in pixels of one point's row in a leaderboard chart (an agent's band holds one such row per colour)."""

PANEL_HEIGHT = 900
"""Pixels: a leaderboard panel whose rows (one per point, :data:`BOARD_STEP` each) would be taller
than this (about a screen) opens on one agent (:func:`board_filters`)."""

BOARD_AXES: dict[str, tuple[str, str, str]] = {
    "coopeval": ("agent", "mechanism", "game"),
    "gossip": ("model", "condition", "testbed"),  # drawn with y = condition, colour = model (16 conditions, few models)
    "evolution": ("model", "protocol", "variant"),
}
"""Study → (the axis of the compared agents, colour, facet) of its leaderboard chart."""


def colour_domains(boards: dict[str, dict[str, Any]]) -> dict[str, dict[str, list[Any]]]:
    """Per study, each board field's values (sorted): the fixed domain of every colour scale over that
    field in the study's charts, so that a value has one colour in every chart and under every filter
    (the page puts it in the spec: charts.js)."""
    out = {}
    for study, board in boards.items():
        out[study] = {f: sorted({r[f] for r in board["rows"] if r.get(f) is not None}, key=str) for f in BOARD_AXES[study]}
    return out


def colour_ranges(domains: dict[str, dict[str, list[Any]]]) -> dict[str, dict[str, list[str]]]:
    """Per study, a colour range for each field of :func:`colour_domains` with more values than
    :data:`PALETTE` has colours (:func:`palette` of the domain's length; the page puts it in the
    spec beside the domain), so that no two values of one legend share a colour (23 mechanism
    variants get 23 colours)."""
    out: dict[str, dict[str, list[str]]] = {}
    for study, fields in domains.items():
        wide = {f: palette(len(values)) for f, values in fields.items() if len(values) > len(PALETTE)}
        if wide:
            out[study] = wide
    return out


def board_filters(boards: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per study, the board page's filters: ``fields``, the board rows' fields a reader can narrow
    to one value (setting, environment, agent: the leaderboard chart's colour, panel and rows), which
    also narrow the study's other charts whose rows have them; and ``opens_on``, the panel a board
    with more panels than fit in one row opens on (the row over the games where there is one, else
    the first), so that its chart starts at one panel's height instead of several stacked; and, where
    one panel would be taller than a screen (:data:`PANEL_HEIGHT`: more rows than fit, e.g. a gossip
    testbed of 12 models × 16 conditions), the first agent (model) too, the agent filter then being
    the page's model picker ("all" draws every model)."""
    out = {}
    for study, board in boards.items():
        agent, colour_, facet = BOARD_AXES[study]
        panels = list(dict.fromkeys(r[facet] for r in board["rows"]))
        opens_on = {}
        if len(panels) > COLUMNS:
            overall = [p for p in (AGGREGATE_LABEL, RAW_LABEL) if p in panels]
            opens_on[facet] = (overall or panels)[0]
        per_panel: dict[Any, int] = {}
        for r in board["rows"]:
            per_panel[r[facet]] = per_panel.get(r[facet], 0) + 1
        if per_panel and max(per_panel.values()) * BOARD_STEP > PANEL_HEIGHT:  # e.g. 12 gossip models × 16 conditions
            opens_on[agent] = sorted({r[agent] for r in board["rows"] if r.get(agent) is not None}, key=str)[0]
        out[study] = {"fields": [colour_, facet, agent], "opens_on": opens_on}
    return out


def _board_kind(study: str, label: str, axes: tuple[str, str, str]) -> dict[str, Any]:
    import altair as alt

    y, color, facet = axes
    tooltip: list[Any] = [f"{facet}:N", f"{color}:N", f"{y}:N", alt.Tooltip("value:Q", format=".3f"), alt.Tooltip("lo:Q", format=".3f"),
                          alt.Tooltip("hi:Q", format=".3f"), "interval:N", "group:N", "mark:N", "n:Q"]  # fmt: skip
    if study == "gossip":  # a colour per model, a row per condition: the conditions outnumber any palette
        y, color = color, y
    base = alt.Chart().encode(y=alt.Y(f"{y}:N", title=None), yOffset=alt.YOffset(f"{color}:N"), color=colour(color), tooltip=tooltip)
    interval = base.mark_rule().encode(x=alt.X("lo:Q", title=label), x2="hi:Q")
    point = base.mark_point(filled=True, size=50, cursor="pointer").encode(x=alt.X("value:Q", title=label))
    # each panel its own x scale and axis: games' payoff ranges differ (Matching Pennies -1..1 beside Trust 0..11)
    chart = (
        alt.layer(interval, point, data=_rows_data()).properties(width=260, height=alt.Step(BOARD_STEP))
        .facet(facet=alt.Facet(f"{facet}:N", title=None), columns=COLUMNS)
        .resolve_scale(x="independent").resolve_axis(x="independent")
    )  # fmt: skip
    fields = [[facet, facet], [color, color], [y, y], ["value", label], ["lo", "95 % low"], ["hi", "95 % high"], ["interval", "interval"],
              ["group", "tie group"], ["mark", "mark"], ["n", "cells"]]  # fmt: skip
    note = (f"{label} per {y}: point = the table's value, line = its interval (which one: the interval column; none where a"
            " single cell has no spread); tie group as in the table. Click a point for its cells.")  # fmt: skip
    return {"spec": _spec(chart), "fields": fields, "note": note}


def _board_rows(study: str, board: dict[str, Any], key: str) -> list[dict[str, Any]]:
    y, color, facet = BOARD_AXES[study]
    out = []
    for r in board["rows"]:
        value, ci, *bounds = r[key]
        if value is None or not math.isfinite(value):  # the table shows an infinite or undefined value; a chart cannot place it
            continue
        lo, hi = bounds if bounds else (value - ci, value + ci) if ci is not None else (value, value)
        row = {facet: r[facet], color: r[color], y: r[y], "value": value, "lo": lo, "hi": hi,
               "interval": r.get("interval", NORMAL) if bounds or ci is not None else "none", "group": r.get(f"{GROUP_OF.get(key, key)}_group"),
               "mark": r.get(f"{key}_mark"), "n": r["n"]}  # fmt: skip
        row["href"] = _board_href(study, r, bool(board.get("variants")))
        out.append(row)
    return out


GROUP_OF = {"dr_rank": "dr"}
"""A board metric → the metric whose tie-group letters it shows (one DR group for DR rank and DR rating)."""


def mechanism_variant(label: str, variants: bool) -> tuple[str, str | None]:
    """A CoopEval board row's mechanism label → (the cells' mechanism, their variant): "Repetition (n5)"
    → ("Repetition", "n5"); a label without a variant is the default cells' when the store's cells
    have variants (``variants``), else (label, None)."""
    if label.endswith(")") and " (" in label:
        mechanism, _, variant = label[:-1].partition(" (")
        return mechanism, variant
    return label, "default" if variants else None


def _board_href(study: str, r: dict[str, Any], variants: bool = False) -> str:
    """The cells behind a leaderboard row: the cells page filtered to its setting (CoopEval: mechanism
    and variant), environment and agent."""
    if study == "coopeval":
        mechanism, variant = mechanism_variant(str(r["mechanism"]), variants)
        game = None if r["game"] in (AGGREGATE_LABEL, RAW_LABEL) else r["game"]
        return href(view="cells", study=study, mechanism=mechanism, variant=variant, game=game, agent=r["agent"])
    if study == "gossip":
        return href(view="cells", study=study, mechanism=r["condition"], game=r["testbed"], agent=r["model"])
    return href(view="cells", study=study, mechanism=f"evolution/{r['protocol']}", agent=r["model"])


LABEL = "@metric@"
"""Stands for the metric's label in a study's leaderboard chart template."""


def board_charts(boards: dict[str, dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, list[str]]]:
    """Kinds and instances of the leaderboard charts, one per study and metric with a finite value,
    and per study why a metric has none (:func:`_undrawn`: a chart is never dropped without a word)."""
    kinds: dict[str, Any] = {}
    templates: dict[str, str] = {}
    instances = []
    undrawn: dict[str, list[str]] = {}
    for study, board in boards.items():
        for column in board["columns"]:
            if not column["metric"]:
                continue
            found = _board_rows(study, board, column["key"])
            if not found:
                undrawn.setdefault(study, []).append(_undrawn(study, board, column))
                continue
            kind = f"board:{study}:{column['key']}"
            if study not in templates:  # one Altair chart per study; each metric's label put in its copy
                templates[study] = json.dumps(_board_kind(study, LABEL, BOARD_AXES[study]))
            kinds[kind] = json.loads(templates[study].replace(LABEL, json.dumps(column["label"])[1:-1]))
            instances.append({"kind": kind, "study": study, "title": f"{study}: {column['label']}", "rows": found})
    return kinds, instances, undrawn


def _undrawn(study: str, board: dict[str, Any], column: dict[str, Any]) -> str:
    """Why a leaderboard metric has no chart: none of its values is finite. Says which: every value
    undefined (NaN: the table's reason), infinite (the table shows Infinity), or blank (the reasons
    the table gives)."""
    key = column["key"]
    values = [r[key][0] for r in board["rows"] if r[key][0] is not None]
    reasons = sorted({str(r[f"{key}_why"]) for r in board["rows"] if r.get(f"{key}_why")})
    if values and all(math.isinf(v) for v in values):
        why = "every value is infinite (the table shows Infinity; a chart cannot place it)"
    elif values and all(math.isinf(v) or math.isnan(v) for v in values):
        why = "every value is undefined (NaN) or infinite (the table shows them)"
    else:
        why = "no row has a value" + (f" ({'; '.join(reasons)})" if reasons else "")
    return f"{study}: {column['label']}: no chart, since {why}."


SHAPES = (
    "circle", "square", "triangle-up", "diamond", "cross", "triangle-down", "triangle-right", "triangle-left",
    "M-1,-1H1V1H-1Z M-0.5,-0.5V0.5H0.5V-0.5Z", "M0,-1L1,1H-1Z M0,-0.3L0.4,0.6H-0.4Z", "M-1,-0.3H1V0.3H-1Z", "M-0.3,-1H0.3V1H-0.3Z",
    "M-1,-1L1,1M1,-1L-1,1", "M0,-1L0.3,-0.3L1,0L0.3,0.3L0,1L-0.3,0.3L-1,0L-0.3,-0.3Z", "M-1,0A1,1 0 1,0 1,0A1,1 0 1,0 -1,0M-0.4,0H0.4", "M-1,1L0,-1L1,1",
)
"""Sixteen distinct point shapes (Vega's eight, then SVG paths: a framed square, a hollow triangle, a bar,
a column, an x, a star, a ringed dot, a chevron): a shape scale tells sixteen series apart."""

DASHES = (
    (1, 0), (6, 3), (2, 2), (8, 3, 2, 3), (12, 4), (3, 6), (8, 2, 2, 2, 2, 2), (1, 4), (16, 4, 4, 4),
    (4, 1), (10, 2, 2, 2, 2, 2, 2, 2), (6, 6), (2, 5, 8, 5), (14, 2), (3, 3, 9, 3), (20, 5),
)
"""Sixteen distinct dash patterns (solid first): a dash scale tells sixteen series apart."""

WIDTHS = (5.0, 3.2, 1.8, 1.0)
"""Line widths of the series told apart by dash (cycled by Vega past four): a series drawn on one
that coincides with it is narrower, so both show."""

AGENT_KINDS = ("honest", "attackers")
"""The gossip chart's honest agents (drawn solid, a circle) and attackers (dashed, a triangle)."""


def _line_kind(x: str, x_title: str, y: str, y_title: str, color: str, keys: list[str], note: str, facet: str | None = None,
               domain: tuple[float, float] | None = None, counted: bool = True, dash: str | None = None) -> dict[str, Any]:  # fmt: skip
    """A line per value of ``color`` (and of ``dash``, drawn as the line's dash pattern and the
    points' shape, when given) in each panel of ``facet``: the fields that tell two series apart
    are all encoded, so no line joins the points of two series."""
    import altair as alt

    scale = alt.Scale(domain=list(domain)) if domain else alt.Undefined
    series: dict[str, Any] = {}
    if dash == "agents":  # the honest agents solid, the attackers dashed, whatever the rows hold
        series = {"strokeDash": alt.StrokeDash(f"{dash}:N", title="agents", scale=alt.Scale(domain=list(AGENT_KINDS), range=[list(DASHES[0]), list(DASHES[1])])),
                  "shape": alt.Shape(f"{dash}:N", title="agents", scale=alt.Scale(domain=list(AGENT_KINDS), range=["circle", "triangle-up"]))}  # fmt: skip
    elif dash:  # a dash pattern and a point shape per value: sixteen told apart (Vega's defaults repeat after eight);
        # the first series drawn widest, each next one narrower on top, so that lines that coincide stay visible as several
        series = {"strokeDash": alt.StrokeDash(f"{dash}:N", legend=None, scale=alt.Scale(range=[list(d) for d in DASHES])),
                  "shape": alt.Shape(f"{dash}:N", scale=alt.Scale(range=list(SHAPES))),
                  "strokeWidth": alt.StrokeWidth(f"{dash}:O", legend=None, scale=alt.Scale(range=list(WIDTHS)))}  # fmt: skip
    chart = (
        alt.Chart(_rows_data())
        .mark_line(point=alt.OverlayMarkDef(filled=True, size=40, cursor="pointer"))
        .encode(x=alt.X(f"{x}:Q", title=x_title, axis=alt.Axis(tickMinStep=1, format="d")), y=alt.Y(f"{y}:Q", title=y_title, scale=scale), color=colour(color),
                tooltip=[*(f"{k}:N" if k != x else f"{k}:Q" for k in keys), alt.Tooltip(f"{y}:Q", format=".3f"), *(["n:Q"] if counted else [])], **series)
        .properties(width=300, height=180)
    )
    if facet:  # panels share the x scale (the same rounds or generations), each with its own labelled axis, not only the last row's
        chart = chart.facet(facet=alt.Facet(f"{facet}:N", title=None), columns=COLUMNS).resolve_axis(x="independent")
    fields = [[k, k] for k in keys if k not in (x, y)] + [[x, x_title], [y, y_title]] + ([["n", "n"]] if counted else [])
    return {"spec": _spec(chart), "fields": fields, "note": note, "at": [f for f in (facet, x, y) if f]}


def chart_kinds() -> dict[str, Any]:
    """The chart kinds that do not depend on the store (per cell, gossip, evolution)."""
    import altair as alt

    kinds = {
        "cooperation": _line_kind(
            "round", "round", "cooperation", "probability on the cooperative action", "agent", ["agent", "round"],
            "Probability each agent put on the game's cooperative action, per round: mean over its decisions of that round in"
            " every match-up of the cell. Click a point for that round of the agent's first match-up.", domain=(0, 1),
        ),
        "trajectory": _line_kind(
            "step", "replicator step", "share", "population share", "agent", ["agent", "step"],
            "Replicator dynamics of the cell's metagame (docs/protocol/evaluation.md): each agent's population share per step"
            " up to a little past the step from which every share stays at its final value (the title says which steps are drawn)."
            " Click a point for the agent's decisions in this cell.", domain=(0, 1), counted=False,
        ),
        "gossip_cooperation": _line_kind(
            "round", "round", "cooperation", "share of cooperative actions", "model", ["testbed", "condition", "model", "agents", "round"],
            "Share of cooperative actions of the acting role (donor, player 1, seller) per round, over the replicates of each"
            " condition: a panel per condition, a colour per model, and the honest agents (the model) apart from the attackers"
            " (Max, the collusive attackers: bots, the same beside every model) by the line's dash. Click a point for that"
            " round of the condition's first run.", facet="condition", domain=(0, 1), dash="agents",
        ),
        "evolution_resources": _line_kind(
            "generation", "generation", "mean_final", "mean final resources", "variant", ["protocol", "variant", "model", "generation"],
            "Mean final resources of each generation's games, mean over replicates: a panel per protocol, a colour per variant,"
            " a dash and point shape per model. Click a point for the first replicate's cell (lineage and strategies).", facet="protocol", dash="model",
        ),
        "evolution_donation": _line_kind(
            "generation", "generation", "donation_fraction", "donation fraction", "variant", ["protocol", "variant", "model", "generation"],
            "Share of resources donated in each generation (Σ donated / Σ donor resources), mean over replicates: a panel per"
            " protocol, a colour per variant, a dash and point shape per model. Click a point for the first replicate's cell.",
            facet="protocol", domain=(0, 1), dash="model",
        ),
    }
    tones = (
        alt.Chart(_rows_data())
        .mark_bar(cursor="pointer")
        .encode(x=alt.X("round:O", title="round", axis=alt.Axis(labelAngle=0, labelExpr=ROUND_LABELS, labelOverlap="greedy")), y=alt.Y("share:Q", title="share of honest gossip", stack="normalize"),
                color=alt.Color("tone:N", sort=[*_tones(), NO_TONE], scale=alt.Scale(domain=[*_tones(), NO_TONE], range=[*PALETTE[: len(_tones())], "#d9d9d9"])), tooltip=["testbed:N", "condition:N", "round:O", "tone:N", alt.Tooltip("share:Q", format=".3f"), "n:Q"])
        .properties(width=300, height=160)
        .facet(facet=alt.Facet("condition:N", title=None), columns=COLUMNS)
        .resolve_axis(x="independent")
    )
    kinds["pairs"] = pairs_kind()
    kinds["gossip_tones"] = {
        "spec": _spec(tones),
        "fields": [["testbed", "testbed"], ["condition", "condition"], ["round", "round"], ["tone", "tone"], ["share", "share"], ["n", "n"]],
        "note": "Tones of the honest witnesses' gossip per round (share of the toned messages of that round), per testbed and"
        f" condition; a grey bar ({NO_TONE}) is a round played without any toned honest gossip, no bar a round with no data."
        " Click a bar for that round of the condition's first run.",
    }
    return kinds


NO_TONE = "no toned gossip"
"""The tones chart's bar of a round played without any toned honest gossip (grey), unlike a round with no data (no bar)."""

ROUND_LABELS = "datum.value === 1 || datum.value % 5 === 0 ? datum.label : ''"
"""The labelled rounds of a bar chart's round axis (a band per round): the first and every fifth,
level, so that 36 rounds' labels neither overlap nor turn; every bar keeps its tick."""


def _tones() -> tuple[str, ...]:
    from coopeval.studies.gossip.tones import TONES

    return TONES


def _first_runs(con: duckdb.DuckDBPyConnection, study: str) -> dict[str, str]:
    """Cell id → its first match-up (the episode a chart's point opens)."""
    found = rows(con, "SELECT cell_id, min(matchup_id) AS matchup FROM decisions WHERE study = ? GROUP BY cell_id", [study])
    return {str(r["cell_id"]): r["matchup"] for r in found}


def uncharted_testbeds(con: duckdb.DuckDBPyConnection, charted: Iterable[str]) -> list[str]:
    """Why a testbed of ``gossip_rounds`` has no cooperation-over-rounds chart (one sentence per
    testbed not in ``charted``): a testbed that declares no cooperative action (the trust game:
    the investor sends an amount, arXiv 2602.07777 §3) has no share of cooperative actions."""
    from coopeval.studies.gossip.testbeds import REGISTRY

    done = set(charted)
    out = []
    for (testbed,) in con.execute("SELECT DISTINCT testbed FROM gossip_rounds ORDER BY testbed").fetchall():
        if testbed in done:
            continue
        entry = REGISTRY.get(str(testbed))
        if entry is not None and entry.cooperative_action is None:
            first = entry.roles[0]
            out.append(f"{testbed}: no cooperation-over-rounds chart, since its {first} chooses an amount, not an action, so a round has"
                       " no cooperative action to count; its cooperation ratio per run is in the table above.")  # fmt: skip
        else:
            out.append(f"{testbed}: no cooperation-over-rounds chart, since no round of it has a recorded action.")
    return out


def gossip_charts(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Cooperation and tone per round of every (testbed, condition) of ``gossip_rounds``: one
    chart of each per testbed (a chart's rows are one data file, bounded by one testbed's conditions, models and rounds).
    Cooperation is counted for the honest agents and the attackers apart (``agents``), so the
    attackers' defections are never credited to the model."""
    from coopeval.studies.gossip.testbeds import COOPERATIVE_ACTIONS

    matchups = _first_runs(con, "gossip")
    cooperative = list(COOPERATIVE_ACTIONS)
    cooperation = rows(
        con,
        """SELECT testbed, condition, model, CASE WHEN first_kind = 'honest' THEN 'honest' ELSE 'attackers' END AS agents, round,
                  avg(CASE WHEN list_contains(?, first_action) THEN 1.0 ELSE 0.0 END) AS cooperation,
                  count(*) AS n, min(cell_id) AS cell_id
           FROM gossip_rounds WHERE status <> 'failed_action' AND first_action IS NOT NULL
           GROUP BY ALL ORDER BY testbed, condition, model, agents DESC, round""",
        [cooperative],
    )
    tones = rows(
        con,
        """WITH toned AS (SELECT testbed, condition, round, second_tone AS tone, cell_id FROM gossip_rounds
                          WHERE second_tone IS NOT NULL AND second_kind = 'honest')
           SELECT testbed, condition, round, tone, count(*) AS n, min(cell_id) AS cell_id,
                  count(*) / sum(count(*)) OVER (PARTITION BY testbed, condition, round) AS share
           FROM toned GROUP BY testbed, condition, round, tone
           UNION ALL  -- a round played without toned honest gossip: drawn as such, apart from a round with no data
           SELECT testbed, condition, round, ? AS tone, 0 AS n, min(cell_id) AS cell_id, 1.0 AS share FROM gossip_rounds g
           WHERE NOT EXISTS (SELECT 1 FROM toned t WHERE t.testbed = g.testbed AND t.condition = g.condition AND t.round = g.round)
           GROUP BY testbed, condition, round
           ORDER BY testbed, condition, round, tone""",
        [NO_TONE],
    )
    out = []
    for found, kind, title in ((cooperation, "gossip_cooperation", "gossip: cooperation over rounds"), (tones, "gossip_tones", "gossip: tones over rounds")):
        by_testbed: dict[str, list[dict[str, Any]]] = {}
        for r in found:
            cell = str(r.pop("cell_id"))
            r["href"] = href(view="ep", cell=cell, m=matchups.get(cell), round=r["round"])
            by_testbed.setdefault(str(r["testbed"]), []).append(r)
        out += [{"kind": kind, "study": "gossip", "title": f"{title} ({testbed})", "rows": part} for testbed, part in by_testbed.items()]
    return out


def evolution_charts(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    """Mean final resources and donation fraction per generation of every (protocol, variant, model)."""
    found = rows(
        con,
        """SELECT protocol, variant, model, generation, avg(mean_final) AS mean_final, avg(donation_fraction) AS donation_fraction,
                  count(*) AS n, min(cell_id) AS cell_id
           FROM evo_generations GROUP BY ALL ORDER BY protocol, variant, model, generation""",
    )
    out = []
    for metric, kind, title in (("mean_final", "evolution_resources", "evolution: mean final resources per generation"),
                                ("donation_fraction", "evolution_donation", "evolution: donation fraction per generation")):  # fmt: skip
        picked = [{k: r[k] for k in ("protocol", "variant", "model", "generation", metric, "n")} | {"href": href(view="cell", cell=r["cell_id"])}
                  for r in found if r[metric] is not None]  # fmt: skip
        if picked:
            out.append({"kind": kind, "study": "evolution", "title": title, "rows": picked})
    return out


def study_charts(con: duckdb.DuckDBPyConnection, boards: dict[str, dict[str, Any]], readable: Iterable[str]) -> dict[str, Any]:
    """``{"kinds": {...}, "charts": [...], "notes": {study: [...]}, "filters": {study: {...}}, "domains": {study: {...}}, "ranges": {study: {...}}}``
    of the index: every kind, the study-wide charts of the studies in ``readable`` (those whose tables the
    store has and this explorer reads), per study why a chart one might look for is not drawn,
    the board page's filters (:func:`board_filters`) and the colour scales' domains (:func:`colour_domains`) and,
    for a field with more values than :data:`PALETTE`, ranges (:func:`colour_ranges`)."""
    kinds = chart_kinds()
    board_kinds, charts, undrawn = board_charts(boards)
    kinds.update(board_kinds)
    studies = set(readable)
    notes: dict[str, list[str]] = {study: list(lines) for study, lines in undrawn.items()}
    if "gossip" in studies:
        found = gossip_charts(con)
        charts += found
        notes["gossip"] = notes.get("gossip", []) + uncharted_testbeds(con, {c["rows"][0]["testbed"] for c in found if c["kind"] == "gossip_cooperation"})
    if "evolution" in studies:
        charts += evolution_charts(con)
    domains = colour_domains(boards)
    return {"kinds": kinds, "charts": charts, "notes": {k: v for k, v in notes.items() if v}, "filters": board_filters(boards),
            "domains": domains, "ranges": colour_ranges(domains)}


def _cooperative_token(game: str, cache: dict[str, str | None]) -> str | None:
    if game not in cache:
        from coopeval.games import action_token, get_game

        try:
            cache[game] = action_token(get_game(game).cooperative_action)
        except (KeyError, TypeError, ValueError):  # a plugin game this installation lacks, or one needing parameters
            cache[game] = None
    return cache[game]


_TOKENS: dict[str, str | None] = {}


class CooperationTally:
    """Per agent and round of a CoopEval cell, the mean probability on the cooperative action,
    tallied one episode at a time (the builder drops each episode's decisions once written).

    A decision counts when it is an ``action`` decision whose parsed answer is a distribution
    over action tokens (``{"A0": 40, "A1": 60}``): its probability on the cooperative action
    (arXiv 2604.15267 §3; the game's ``cooperative_action``) is that token's weight over the
    weights' sum. A game without a known cooperative action tallies nothing.
    """

    def __init__(self, cell_id: str, game: str) -> None:
        self.cell_id = cell_id
        self.token = _cooperative_token(game, _TOKENS)
        self.sums: dict[tuple[str, int], list[float]] = {}
        self.first: dict[tuple[str, int], str] = {}

    def add(self, matchup: str, decisions: Iterable[dict[str, Any]]) -> None:
        """Tally the decisions of one match-up."""
        if self.token is None:
            return
        for d in decisions:
            if d.get("kind") != "action" or d.get("status") != "ok" or not d.get("parsed") or d.get("round") is None:
                continue
            p = _probability(str(d["parsed"]), self.token)
            if p is None:
                continue
            key = (str(d["agent"]), int(d["round"]))
            acc = self.sums.setdefault(key, [0.0, 0])
            acc[0] += p
            acc[1] += 1
            self.first.setdefault(key, matchup)

    def rows(self) -> list[dict[str, Any]]:
        """Rows ``{"agent", "round", "cooperation", "n", "href"}``; ``href`` opens the round in
        the first match-up where the agent made a counted decision."""
        return [
            {"agent": agent, "round": rnd, "cooperation": total / n, "n": int(n),
             "href": href(view="ep", cell=self.cell_id, m=self.first[(agent, rnd)], round=rnd)}
            for (agent, rnd), (total, n) in sorted(self.sums.items())
        ]  # fmt: skip


def cooperation_rows(cell_id: str, game: str, episodes: Iterable[tuple[str, list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    """:class:`CooperationTally` rows of ``episodes``, (match-up, decisions) pairs of one cell."""
    tally = CooperationTally(cell_id, game)
    for matchup, decisions in episodes:
        tally.add(matchup, decisions)
    return tally.rows()


def _probability(parsed: str, token: str) -> float | None:
    try:
        answer = json.loads(parsed)
    except ValueError:
        return None
    if not isinstance(answer, dict) or token not in answer:
        return None
    weights = [v for v in answer.values() if isinstance(v, int | float) and not isinstance(v, bool)]
    total = float(sum(weights))
    if len(weights) != len(answer) or total <= 0:
        return None
    return float(answer[token]) / total


def trajectory_chart(cell_id: str, found: list[dict[str, Any]]) -> dict[str, Any]:
    """The chart of a cell's replicator trajectory: the drawn steps (``trajectories`` rows, already
    cut and thinned by the query of :data:`coopeval.explorer.extras.TRAJECTORY`), each linking to
    the agent's decisions in the cell, under a title that says which steps are drawn and why."""
    links = {agent: href(view="cell", cell=cell_id, model=agent, apply="1") for agent in {r["agent"] for r in found}}
    first = found[0]
    settled, drawn, last = first["settled"], first["drawn_to"], first["last"]
    within = f"every share within {SETTLED_WITHIN:g} of its final value from step {settled} on"
    if drawn < last:
        span = f"steps 0–{drawn} of {last} drawn ({within}; the rest is flat)"
    else:
        span = f"every step, 0–{last}, drawn ({within})" if last else "a single step"
    return {"kind": "trajectory", "title": f"Replicator trajectory of the metagame: {span}",
            "rows": [{"agent": r["agent"], "step": r["step"], "share": r["share"], "href": links[r["agent"]]} for r in found]}  # fmt: skip


AXIS = "@axis@"
"""Stands for the x axis title of a ``pairs`` chart (the Δ and its unit; ``pairs.js`` puts it in)."""


def pairs_kind() -> dict[str, Any]:
    """The chart of one pair of agents on one metric and unit: Δ = first − second per scope (a row
    per mechanism and game, testbed, condition and matching, protocol and variant), its interval as
    a line; filled only where the comparison is significant (:func:`coopeval.comparison.evidence.verdict`),
    a diamond where it is stable under resampling at one replicate, a cross where it is untestable at
    its size. The x axis names the unit (:data:`AXIS`); scope labels are never cut."""
    import altair as alt

    from coopeval.comparison.evidence import VERDICTS

    tooltip: list[Any] = ["scope:N", alt.Tooltip("delta:Q", format=".3f"), alt.Tooltip("ci_low:Q", format=".3f"),
               alt.Tooltip("ci_high:Q", format=".3f"), alt.Tooltip("p_adjusted:Q", format=".4f"), "evidence:N",
               alt.Tooltip("mde:Q", format=".3f"), "n_clusters:Q"]  # fmt: skip
    base = alt.Chart().encode(y=alt.Y("scope:N", title=None, axis=alt.Axis(labelLimit=0)), tooltip=tooltip)
    zero = alt.Chart().mark_rule(color="#888", strokeDash=[3, 3]).encode(x=alt.datum(0))
    interval = base.mark_rule().encode(x=alt.X("ci_low:Q", title=AXIS), x2="ci_high:Q")
    point = base.mark_point(size=70, cursor="pointer").encode(
        x=alt.X("delta:Q"),
        fill=alt.Fill("evidence:N", title="evidence", scale=alt.Scale(domain=list(VERDICTS), range=["#4c78a8", "white", "#bab0ac", "white"])),
        shape=alt.Shape("evidence:N", title="evidence", scale=alt.Scale(domain=list(VERDICTS), range=["circle", "circle", "diamond", "cross"])),
        stroke=alt.value("#4c78a8"),
    )
    chart = alt.layer(zero, interval, point, data=_rows_data()).properties(width=300)
    fields = [["scope", "scope"], ["delta", "Δ"], ["ci_low", "95 % low"], ["ci_high", "95 % high"], ["p_adjusted", "p (corrected)"],
              ["correction", "correction"], ["evidence", "evidence"], ["why", "why"], ["mde", "MDE"], ["n_clusters", "clusters"], ["cells", "cells"]]  # fmt: skip
    note = ("Paired differences of the store's comparisons table (docs/comparisons.md): Δ = first − second per scope, the line its"
            " 95 % interval; filled where p after the family's correction is below 0.05 and the test could reach that at its size,"
            " a diamond where every cluster gives the same difference at one replicate (stable under resampling, not tested"
            " across replicates), a cross where too few clusters make any test moot; MDE = the minimum detectable effect."
            " Click a point for the two agents' cells behind it.")  # fmt: skip
    return {"spec": _spec(chart), "fields": fields, "note": note, "at": ["scope", "delta"]}
