"""Across-replicate summaries and the layout of the paper's Tables 1–2 (docs/protocol/gossip.md#metrics, #published-numbers; issue 10
items 5 and 7).

Aggregation (docs/protocol/gossip.md#metrics): within a run, mean ± s.e. over agents (``gossip_run_metrics``); across
runs, the mean of the run means with the standard error std(ddof = 0)/√k over the k replicates.
With a single replicate the table shows the run's over-agent s.e. instead.

Gini: NaN when a run's mean G ≤ 0 (docs/protocol/gossip.md#metrics). The summary averages the finite Gini values and
counts the NaN runs (``gini_nan_runs``); the rendered tables print ``NaN†`` when every run used
is NaN, and mark partial cases with ``†``.

Failed runs (issue 36 item 3): a run whose every round failed (``all_rounds_failed``: each
round's action or assessment failed every attempt) measures nothing of its condition; it is left
out of every mean and counted in ``failed_runs``. Runs with some failed rounds are kept and
counted (``runs_with_failed_rounds``, and ``n_failed_rounds`` of ``n_rounds`` over the group);
the table marks such a row's condition with ``¶`` and its failed rounds.

Every across-run mean is NaN-aware on purpose (issue 25 kind 7): a run whose value is not finite
is left out and ``n_valid_<metric>`` (next to ``n_replicates``) counts the runs used; a cell
averaged over fewer runs than were played says how many it used (``0.52 ± 0.03 (3/5 runs)``,
issue 36 item 4). Domain diagnostics: ``negative_return_runs`` (runs with an agent whose
discounted return is negative) and ``gini_out_of_range_runs`` (runs whose Gini left [0, 1],
which negative returns allow); such a Gini cell is marked ``‡``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

from coopeval.studies.gossip.metrics import FAILED_ROUND_STATUSES
from coopeval.studies.gossip.testbeds import COOPERATIVE_ACTIONS

GROUP = ("testbed", "condition", "model", "gamma", "horizon", "matching")
METRICS = ("cooperation_ratio", "image_score", "return", "reward_per_round", "discounted_return")
TABLE_COLUMNS = {
    "cooperation_ratio": "Cooperation",
    "image_score": "Image score",
    "return": "Return",
    "reward_per_round": "Reward per round",
    "discounted_return": "Discounted return",
    "gini": "Gini",
}
GINI_FOOTNOTE = (
    "† Gini of discounted returns is undefined (NaN) in a run whose mean discounted return is ≤ 0, "
    "as under universal defection (0/0); the paper prints 0.00 for such rows. NaN†: undefined in "
    "every run used; a value marked † leaves the undefined runs out, and (k/n runs) says how many it used."
)
FEWER_RUNS_FOOTNOTE = (
    "(k/n runs): the mean used k of the n runs played; the others' value is undefined (NaN) or "
    "every one of their rounds failed (¶). The summary's n_valid columns count the runs used."
)
FAILED_ROUNDS_MARK = "¶"
FAILED_ROUNDS_FOOTNOTE = (
    "¶ (f/N rounds failed): f of the row's N rounds had a decision that failed every attempt (a failed "
    "action voids its round; a failed assessment leaves the round's payoffs without that message); a "
    "run whose every round failed is left out of the means."
)
OUT_OF_RANGE_MARK = "‡"
OUT_OF_RANGE_FOOTNOTE = (
    "‡ Gini outside [0, 1] in some run: some agents' discounted returns are negative, where the "
    "Gini formula is not bounded by 1."
)


def _finite(values: list[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def replicate_summary(run_metrics: pl.DataFrame) -> pl.DataFrame:
    """One row per (testbed, condition, model, γ, horizon, matching) from ``gossip_run_metrics``.

    Columns: the group keys, ``n_replicates`` (runs played); ``failed_runs`` (runs whose every
    round failed: left out of every mean), ``runs_with_failed_rounds``, ``n_failed_rounds`` and
    ``n_rounds`` (summed over the runs played); for every metric of :data:`METRICS` and
    ``gini``: ``<metric>`` (mean over the runs kept whose value is finite, NaN if none),
    ``<metric>_se`` and ``n_valid_<metric>`` (those runs); ``gini_nan_runs``,
    ``negative_return_runs`` and ``gini_out_of_range_runs`` over the runs kept (domain
    diagnostics; 0 when the runs predate those columns).
    """
    rows = []
    for keys, played in run_metrics.group_by(list(GROUP), maintain_order=True):
        row: dict[str, object] = dict(zip(GROUP, keys, strict=False))
        failed = _failed_runs(played)
        group = played.filter(~pl.Series(failed, dtype=pl.Boolean))
        k = played.height
        row["n_replicates"] = k
        row["failed_runs"] = sum(failed)
        row["runs_with_failed_rounds"] = _count_runs(played, "n_failed_rounds", lambda v: v > 0)
        row["n_failed_rounds"] = int(played["n_failed_rounds"].fill_null(0).sum()) if "n_failed_rounds" in played.columns else 0
        row["n_rounds"] = int(played["n_rounds"].fill_null(0).sum()) if "n_rounds" in played.columns else 0
        for metric in (*METRICS, "gini"):
            column = metric if metric == "gini" else f"{metric}_mean"
            values = _finite(group[column].to_list())
            mean = float(np.mean(values)) if values else math.nan
            if k > 1:
                se = float(np.std(values, ddof=0) / math.sqrt(len(values))) if values else math.nan
            elif metric != "gini" and group.height:
                se = float(group[f"{metric}_se"][0]) if group[f"{metric}_se"][0] is not None else math.nan
            else:
                se = math.nan
            row[metric] = mean
            row[f"{metric}_se"] = se
            row[f"n_valid_{metric}"] = len(values)
        row["gini_nan_runs"] = sum(1 for v in group["gini"].to_list() if v is None or not math.isfinite(v))
        row["negative_return_runs"] = _count_runs(group, "n_negative_returns", lambda v: v > 0)
        row["gini_out_of_range_runs"] = _count_runs(group, "gini_out_of_range", bool)
        rows.append(row)
    return pl.DataFrame(rows)


def _failed_runs(group: pl.DataFrame) -> list[bool]:
    """Per run: every round failed (``all_rounds_failed``; for runs stored before that column,
    ``n_failed_rounds == n_rounds``, which then counted failed actions only)."""
    if "all_rounds_failed" in group.columns:
        flags = group["all_rounds_failed"].to_list()
    else:
        flags = [None] * group.height
    if "n_failed_rounds" in group.columns and "n_rounds" in group.columns:
        counted = [bool(n) and f == n for f, n in zip(group["n_failed_rounds"].to_list(), group["n_rounds"].to_list(), strict=True)]
    else:
        counted = [False] * group.height
    return [bool(flag) if flag is not None else c for flag, c in zip(flags, counted, strict=True)]


def _count_runs(group: pl.DataFrame, column: str, hit: Callable[[Any], bool]) -> int:
    if column not in group.columns:
        return 0
    return sum(1 for v in group[column].to_list() if v is not None and hit(v))


def _cell(mean: float, se: float, digits: int = 2) -> str:
    if not math.isfinite(mean):
        return "NaN"
    if not math.isfinite(se) or se == 0:
        return f"{mean:.{digits}f}"
    return f"{mean:.{digits}f} ± {se:.{digits}f}"


def runs_used(used: int, played: int) -> str:
    """`` (k/n runs)`` when a mean used fewer runs than were played, else ``""`` (issue 36 item 4)."""
    return f" ({used}/{played} runs)" if used < played else ""


def paper_table(summary: pl.DataFrame, testbed: str = "donation") -> pl.DataFrame:
    """The layout of Tables 1–2: Model, Condition, then Cooperation, Image score, Return, Reward
    per round, Discounted return and Gini as ``mean ± s.e.`` strings.

    Marks: ``NaN†`` a Gini undefined in every run used, ``†`` one undefined in some, ``‡`` a
    Gini outside [0, 1] in some run; ``(k/n runs)`` any cell whose mean used k < n of the runs
    played (the others undefined, or failed in every round); ``¶ (f/N rounds failed)`` after the
    condition of a row whose runs had failed rounds."""
    rows = []
    for r in summary.filter(pl.col("testbed") == testbed).iter_rows(named=True):
        condition = str(r["condition"])
        if r.get("n_failed_rounds"):
            condition += f" {FAILED_ROUNDS_MARK} ({r['n_failed_rounds']}/{r['n_rounds']} rounds failed)"
        out = {"Model": r["model"], "Condition": condition}
        for metric, title in TABLE_COLUMNS.items():
            text = _cell(r[metric], r[f"{metric}_se"])
            if metric == "gini":
                if r["gini_nan_runs"]:
                    text += "†"
                if r.get("gini_out_of_range_runs"):
                    text += OUT_OF_RANGE_MARK
            out[title] = text + runs_used(int(r.get(f"n_valid_{metric}", r["n_replicates"])), int(r["n_replicates"]))
        rows.append(out)
    return pl.DataFrame(rows, schema={"Model": pl.String, "Condition": pl.String, **dict.fromkeys(TABLE_COLUMNS.values(), pl.String)})


def footnotes(table: pl.DataFrame) -> list[str]:
    """The footnotes a rendered table needs: always the NaN-Gini note, and the ``‡``,
    ``(k/n runs)`` and ``¶`` notes when a cell carries that mark."""
    cells = [str(v) for row in table.iter_rows() for v in row[2:]]
    conditions = [str(v) for v in table["Condition"].to_list()] if "Condition" in table.columns else []
    notes = [GINI_FOOTNOTE]
    if any(OUT_OF_RANGE_MARK in c for c in cells):
        notes.append(OUT_OF_RANGE_FOOTNOTE)
    if any(c.endswith(" runs)") for c in cells):
        notes.append(FEWER_RUNS_FOOTNOTE)
    if any(FAILED_ROUNDS_MARK in c for c in conditions):
        notes.append(FAILED_ROUNDS_FOOTNOTE)
    return notes


def to_markdown(table: pl.DataFrame) -> str:
    """GitHub Markdown with the NaN footnote."""
    header = "| " + " | ".join(table.columns) + " |"
    rule = "|" + "|".join("---" for _ in table.columns) + "|"
    lines = [header, rule] + ["| " + " | ".join(str(v) for v in row) + " |" for row in table.iter_rows()]
    return "\n".join(lines) + "\n\n" + "\n\n".join(footnotes(table)) + "\n"


def to_latex(table: pl.DataFrame) -> str:
    """A booktabs tabular with the NaN footnote."""

    def esc(text: str) -> str:
        return (
            text.replace("\\", r"\textbackslash{}").replace("&", r"\&").replace("%", r"\%").replace("_", r"\_")
            .replace("±", r"$\pm$").replace("†", r"$^\dagger$").replace("‡", r"$^\ddagger$").replace("¶", r"\P{}")
        )

    spec = "ll" + "r" * (len(table.columns) - 2)
    lines = [rf"\begin{{tabular}}{{{spec}}}", r"\toprule", " & ".join(esc(c) for c in table.columns) + r" \\", r"\midrule"]
    lines += [" & ".join(esc(str(v)) for v in row) + r" \\" for row in table.iter_rows()]
    lines += [r"\bottomrule", r"\end{tabular}", "", *(esc(note) for note in footnotes(table))]
    return "\n".join(lines) + "\n"


def without_failed_runs(rounds: pl.DataFrame) -> pl.DataFrame:
    """``gossip_rounds`` without the runs whose every round failed (as :func:`replicate_summary`
    leaves them out of the means; issue 36 item 3): their actions, if any, were played without
    the condition's messages."""
    failed = pl.col("status").is_in(list(FAILED_ROUND_STATUSES)).all().over(["cell_id", "run"])
    return rounds.filter(~failed)


def cooperation_by_interaction_index(rounds: pl.DataFrame, target_kind: str = "max") -> pl.DataFrame:
    """Cooperation toward agents of ``target_kind`` (``max`` or ``attacker``) by the target's own
    interaction index (docs/protocol/gossip.md#greedy-defector, Fig. 8). ``rounds`` is
    ``gossip_rounds``; the target is the round's second agent (the donation game's recipient).
    One row per (model, condition, target_index) with ``cooperation`` = share of honest first
    agents' cooperative actions and ``n`` decisions; runs whose every round failed are left out."""
    ok = without_failed_runs(rounds).filter(
        (pl.col("status") != "failed_action") & (pl.col("second_kind") == target_kind) & (pl.col("first_kind") == "honest")
    )
    return (
        ok.group_by(["model", "condition", pl.col("second_index").alias("target_index")])
        .agg(pl.col("first_action").is_in(list(COOPERATIVE_ACTIONS)).mean().alias("cooperation"), pl.len().alias("n"))
        .sort(["model", "condition", "target_index"])
    )


def tone_distribution(rounds: pl.DataFrame) -> pl.DataFrame:
    """Share of each tone given the first agent's action (the donor's, player 1's, the seller's;
    docs/protocol/gossip.md#ablations, Fig. 5). ``rounds`` is ``gossip_rounds``; ``tone`` is the
    second agent's assessment of the first. One row per (model, testbed, action, tone) with
    ``n`` and ``share`` within (model, testbed, action). Honest witnesses only; rounds without a
    tone are left out."""
    toned = rounds.filter(pl.col("second_tone").is_not_null() & (pl.col("second_kind") == "honest"))
    counts = toned.group_by(
        ["model", "testbed", pl.col("first_action").alias("action"), pl.col("second_tone").alias("tone")]
    ).agg(pl.len().alias("n"))
    return counts.with_columns(
        (pl.col("n") / pl.col("n").sum().over(["model", "testbed", "action"])).alias("share")
    ).sort(["model", "testbed", "action", "tone"])


def cooperation_by_round(rounds: pl.DataFrame) -> pl.DataFrame:
    """Share of cooperative first-agent actions (the donor's, player 1's, the seller's) per
    (model, testbed, condition, round) of ``gossip_rounds``, for the "cooperation with vs
    without gossip" figure; runs whose every round failed are left out."""
    ok = without_failed_runs(rounds).filter((pl.col("status") != "failed_action") & pl.col("first_action").is_not_null())
    return (
        ok.group_by(["model", "testbed", "condition", "round"])
        .agg(pl.col("first_action").is_in(list(COOPERATIVE_ACTIONS)).mean().alias("cooperation"), pl.len().alias("n"))
        .sort(["model", "testbed", "condition", "round"])
    )
