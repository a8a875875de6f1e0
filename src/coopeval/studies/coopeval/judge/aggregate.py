"""Label shares of the judge's justifications (docs/protocol/design-checks.md#label-shares).

A label's share in a group is the number of judged rows of the group that carry the label,
divided by **all judged rows of the group**. A row may carry several labels, so the shares of a
group do not sum to 1.

The reference's figures divide instead by the summed row counts of only those subgroups in
which the label occurs at all (``compat.judge_share_denominator``, docs/protocol/reference-data.md#compatibility-flags): a label seen in one
small subgroup then looks frequent (e.g. Reciprocity under NoMechanism 8.33 % instead of
0.16 %). :func:`label_shares` reproduces that with ``denominator="reference"``; the subgroups are
the group refined by the remaining dimensions of (mechanism, agent, game).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import polars as pl

__all__ = ["DIMENSIONS", "Denominator", "label_shares"]

DIMENSIONS = ("mechanism", "agent", "game")
"""The dimensions the reference's count files are split by (its subgroups for the compat mode)."""

Denominator = Literal["judged", "reference"]


def _ok_rows(judgements: pl.DataFrame) -> pl.DataFrame:
    if "status" in judgements.columns:
        return judgements.filter(pl.col("status") == "ok")
    return judgements


def label_shares(
    judgements: pl.DataFrame,
    by: Sequence[str],
    labels: Sequence[str],
    denominator: Denominator = "judged",
    subgroups: Sequence[str] | None = None,
    exclude_games: Sequence[str] = (),
) -> pl.DataFrame:
    """Share of judged rows carrying each label, per group.

    Parameters
    ----------
    judgements:
        Rows of the ``judgements`` table: a ``labels`` list column, a ``status`` column (only
        ``"ok"`` rows are judged rows; failed judgements count nowhere) and the ``by`` columns.
    by:
        Group columns, e.g. ``["mechanism"]``; empty for one overall group.
    labels:
        Every label to report, in display order (taxonomy order); labels never used get 0.
    denominator:
        ``"judged"`` (default, correct): all judged rows of the group. ``"reference"``: the
        summed judged rows of only the subgroups where the label occurs
        (``compat.judge_share_denominator``).
    subgroups:
        Only for ``"reference"``: the columns defining the subgroups (default: ``by`` plus the
        other columns of :data:`DIMENSIONS` present in the frame).
    exclude_games:
        Game type names whose rows are dropped first.

    Returns
    -------
    polars.DataFrame
        One row per (group, label): the ``by`` columns, ``label``, ``count`` (rows with the
        label), ``n_judged`` (judged rows in the group), ``denominator`` (what ``share`` was
        divided by) and ``share`` (0 when the denominator is 0). Sorted by group, then label
        order.

    Raises
    ------
    ValueError
        For an unknown ``denominator``.
    """
    if denominator not in ("judged", "reference"):
        raise ValueError(f"denominator must be 'judged' or 'reference', not {denominator!r}")
    by = list(by)
    rows = _ok_rows(judgements.filter(~pl.col("game").is_in(list(exclude_games))) if exclude_games else judgements)
    group_cols = by or ["_all"]
    if not by:
        rows = rows.with_columns(pl.lit("all").alias("_all"))
    if subgroups is None:
        subgroups = by + [d for d in DIMENSIONS if d in rows.columns and d not in by]
    sub = (
        list(dict.fromkeys([*group_cols, *subgroups])) if denominator == "reference" else group_cols
    )
    label_frame = pl.DataFrame(
        {"label": list(labels), "_order": list(range(len(labels)))},
        schema={"label": pl.String, "_order": pl.Int64},
    )

    totals = rows.group_by(sub).agg(pl.len().cast(pl.Int64).alias("_n"))
    exploded = (
        rows.select([*sub, "labels"])
        .explode("labels")
        .rename({"labels": "label"})
        .drop_nulls("label")
    )
    counts = exploded.group_by([*sub, "label"]).agg(pl.len().cast(pl.Int64).alias("_c"))
    # every (subgroup, label) pair, zero-filled
    grid = totals.join(label_frame.select("label"), how="cross").join(
        counts, on=[*sub, "label"], how="left"
    )
    grid = grid.with_columns(pl.col("_c").fill_null(0))
    group_n = rows.group_by(group_cols).agg(pl.len().cast(pl.Int64).alias("n_judged"))
    out = grid.group_by([*group_cols, "label"]).agg(
        pl.col("_c").sum().alias("count"),
        (pl.col("_n") * (pl.col("_c") > 0) if denominator == "reference" else pl.col("_n"))
        .sum()
        .alias("denominator"),
    )
    out = out.join(group_n, on=group_cols).join(label_frame, on="label")
    out = out.with_columns(
        pl.when(pl.col("denominator") > 0)
        .then(pl.col("count") / pl.col("denominator"))
        .otherwise(0.0)
        .alias("share")
    )
    out = out.sort([*group_cols, "_order"]).select(
        [*group_cols, "label", "count", "n_judged", "denominator", "share"]
    )
    out = out.with_columns(pl.col("count").cast(pl.Int64), pl.col("denominator").cast(pl.Int64))
    return out.drop("_all") if not by else out
