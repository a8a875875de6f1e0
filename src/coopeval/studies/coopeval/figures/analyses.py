"""Altair charts of the analyses (:mod:`coopeval.studies.coopeval.analysis`) and the judge's label shares.

Every builder takes a small aggregated frame and refuses more than Altair's 5,000 inline rows
(docs/protocol/engineering.md#figures): aggregate first, never lift the limit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import polars as pl

from coopeval.studies.coopeval.figures.core import _check_rows

__all__ = [
    "action_probability_chart",
    "conditional_chart",
    "design_quality_chart",
    "justification_heatmap_chart",
    "justification_radar_chart",
    "note_chart",
    "radar_points",
    "voting_chart",
]


def note_chart(text: str) -> Any:
    """A one-line chart saying why a figure has no data (every declared output must exist)."""
    import altair as alt

    return (
        alt.Chart(pl.DataFrame({"note": [text]}))
        .mark_text(size=13)
        .encode(text="note:N")
        .properties(width=520, height=60)
    )


def action_probability_chart(frame: pl.DataFrame, x: str, title: str) -> Any:
    """Mean stated probability of each action as stacked bars (one bar per ``x`` value:
    ``mechanism`` for the pooled figure, ``agent`` for the per-model one), one panel per game,
    each panel with its own action colours."""
    import altair as alt

    data = _check_rows(frame, "action_probabilities")
    panels = []
    for game in sorted(data["game"].unique().to_list()):
        part = data.filter(pl.col("game") == game)
        panels.append(
            alt.Chart(part, title=game)
            .mark_bar()
            .encode(
                x=alt.X(f"{x}:N", title=None),
                y=_share_axis("probability", "mean stated probability"),
                color=alt.Color("action:N", sort=alt.SortField("token"), title=f"{game} action"),
                order=alt.Order("token:N"),
                tooltip=[x, "game", "action", alt.Tooltip("probability:Q", format=".3f"), "n"],
            )
            .properties(width=max(80, 22 * part[x].n_unique()), height=160)
        )
    rows = [alt.hconcat(*panels[i : i + 3]) for i in range(0, len(panels), 3)]
    return alt.vconcat(*rows).resolve_scale(color="independent").properties(title=title)


def _share_axis(field: str, title: str) -> Any:
    """The y channel of a share (quantitative ``field``) on a fixed [0, 1] scale, so that panels
    and figures compare."""
    import altair as alt

    return alt.Y(f"{field}:Q", title=title, scale=alt.Scale(domain=[0, 1]))


def _faceted_bars(
    data: pl.DataFrame, facet: Any, title: str, *, size: tuple[int, int], independent_y: bool = False, **encoding: Any
) -> Any:
    """Bars with the channels ``encoding``, one panel of ``size`` (width, height in px) per value
    of the ``facet`` column (an ``alt.Column``), each with its own y scale if ``independent_y``."""
    import altair as alt

    width, height = size
    chart = alt.Chart(data).mark_bar().encode(**encoding).properties(width=width, height=height).facet(column=facet)
    if independent_y:
        chart = chart.resolve_scale(y="independent")
    return chart.properties(title=title)


def conditional_chart(frame: pl.DataFrame, title: str) -> Any:
    """Realised action frequencies given the co-players' previous actions: stacked bars per
    condition (they sum to 1), one panel per agent."""
    import altair as alt

    return _faceted_bars(
        _check_rows(frame, "conditional"),
        alt.Column("agent:N", title=None),
        title,
        size=(140, 160),
        x=alt.X("condition:N", title="co-player's previous action"),
        y=_share_axis("frequency", "frequency of own action"),
        color=alt.Color("action:N", title="own action"),
        tooltip=[
            "agent",
            "condition",
            "action",
            alt.Tooltip("frequency:Q", format=".3f"),
            alt.Tooltip("probability:Q", format=".3f", title="mean stated probability"),
            "count",
            "n",
        ],
    )


def voting_chart(frame: pl.DataFrame, title: str) -> Any:
    """Approvals per proposal, selection, signing and delegation rates per agent (one panel per
    measure, each with its own y scale)."""
    import altair as alt

    return _faceted_bars(
        _check_rows(frame, "voting"),
        alt.Column("measure:N", title=None, sort=["approvals per proposal", "selected", "signed", "delegated"]),
        title,
        size=(160, 150),
        independent_y=True,
        x=alt.X("agent:N", title=None),
        y=alt.Y("value:Q", title=None),
        color=alt.Color("agent:N", legend=None),
        tooltip=["agent", "measure", alt.Tooltip("value:Q", format=".3f"), "n"],
    )


def design_quality_chart(frame: pl.DataFrame, title: str) -> Any:
    """NS and WD rates per agent, one panel per game; tooltips carry the binomial s.e."""
    import altair as alt

    return _faceted_bars(
        _check_rows(frame, "design_quality"),
        alt.Column("game:N", title=None),
        title,
        size=(180, 150),
        x=alt.X("agent:N", title=None),
        y=_share_axis("rate", "share of designs"),
        color=alt.Color("criterion:N"),
        xOffset="criterion:N",
        tooltip=[
            "game",
            "agent",
            "criterion",
            alt.Tooltip("rate:Q", format=".3f"),
            alt.Tooltip("se:Q", format=".3f"),
            "n_designs",
        ],
    )


def justification_heatmap_chart(
    frame: pl.DataFrame, x: str, labels: Sequence[str], title: str, column: str | None = None
) -> Any:
    """Label share heatmap: rows = labels (taxonomy order), columns = ``x``; optional facet."""
    import altair as alt

    data = _check_rows(frame, "justification_heatmap")
    base = alt.Chart(data).encode(
        x=alt.X(f"{x}:N", title=None),
        y=alt.Y("label:N", sort=list(labels), title=None),
    )
    heat = base.mark_rect().encode(
        color=alt.Color("share:Q", scale=alt.Scale(domain=[0, 1], scheme="blues"), title="share"),
        tooltip=[x, "label", alt.Tooltip("share:Q", format=".1%"), "count", "denominator"],
    )
    text = base.mark_text(fontSize=9).encode(
        text=alt.Text("share:Q", format=".0%"),
        color=alt.condition(alt.datum.share > 0.5, alt.value("white"), alt.value("black")),
    )
    chart = (heat + text).properties(
        width=max(60, 45 * max(1, data[x].n_unique())), height=16 * len(labels)
    )
    if column is not None:
        return chart.facet(column=alt.Column(f"{column}:N", title=None)).properties(title=title)
    return chart.properties(title=title)


def radar_points(frame: pl.DataFrame, group: str, labels: Sequence[str]) -> pl.DataFrame:
    """Cartesian coordinates of a radar chart: label i at angle 2πi/L clockwise from the top,
    radius = share; each group's polygon is closed by repeating its first point (``order`` L)."""
    n = len(labels)
    index = {label: i for i, label in enumerate(labels)}
    rows = []
    for row in frame.iter_rows(named=True):
        i = index[row["label"]]
        angle = 2 * math.pi * i / n
        point = {
            group: row[group],
            "label": row["label"],
            "share": row["share"],
            "x": row["share"] * math.sin(angle),
            "y": row["share"] * math.cos(angle),
        }
        rows.append({**point, "order": i})
        if i == 0:
            rows.append({**point, "order": n})
    schema = {
        group: pl.String,
        "label": pl.String,
        "share": pl.Float64,
        "x": pl.Float64,
        "y": pl.Float64,
        "order": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema).sort(group, "order")


def justification_radar_chart(
    frame: pl.DataFrame, group: str, labels: Sequence[str], title: str
) -> Any:
    """Radar of label shares, one closed polygon per ``group`` value (e.g. per mechanism), with
    grid rings at 25 % steps and the labels around the outside."""
    import altair as alt

    points = _check_rows(radar_points(frame, group, labels), "justification_radar")
    top = max(0.25, math.ceil(float(frame["share"].max() or 0.0) * 4) / 4)
    n = len(labels)
    rings = pl.DataFrame(
        [
            {
                "ring": r / 4 * top,
                "order": k,
                "x": r / 4 * top * math.sin(2 * math.pi * k / n),
                "y": r / 4 * top * math.cos(2 * math.pi * k / n),
            }
            for r in range(1, 5)
            for k in range(n + 1)
        ]
    )
    outer = pl.DataFrame(
        [
            {
                "label": label,
                "x": 1.06 * top * math.sin(2 * math.pi * i / n),
                "y": 1.06 * top * math.cos(2 * math.pi * i / n),
            }
            for i, label in enumerate(labels)
        ]
    )
    scale = alt.Scale(domain=[-1.9 * top, 1.9 * top])
    axis = {"x": alt.X("x:Q", scale=scale, axis=None), "y": alt.Y("y:Q", scale=scale, axis=None)}
    grid = (
        alt.Chart(rings)
        .mark_line(color="#cccccc", strokeWidth=0.8)
        .encode(**axis, detail="ring:N", order="order:Q")
    )
    side = (
        pl.when(pl.col("x") > 1e-6 * top)
        .then(pl.lit("left"))
        .when(pl.col("x") < -1e-6 * top)
        .then(pl.lit("right"))
        .otherwise(pl.lit("center"))
    )
    outer = outer.with_columns(side.alias("align"))
    text = alt.layer(
        *(
            alt.Chart(outer.filter(pl.col("align") == align))
            .mark_text(fontSize=10, align=align)
            .encode(**axis, text="label:N")
            for align in ("left", "right", "center")
        )
    )
    polygons = (
        alt.Chart(points)
        .mark_line(point=True, strokeWidth=1.6)
        .encode(
            **axis,
            color=alt.Color(f"{group}:N"),
            order="order:Q",
            tooltip=[group, "label", alt.Tooltip("share:Q", format=".1%")],
        )
    )
    return (
        (grid + polygons + text)
        .properties(width=520, height=520, title=f"{title}; outer ring = {top:.0%}")
        .configure_view(stroke=None)
    )
