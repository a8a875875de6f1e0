"""Blank per-game rows for the metrics a cell does not define, with the reason (issue 41 item 9).

A cell's evaluation records why Fitness or DR is missing as a note metric
(:mod:`coopeval.studies.coopeval.evaluate`): ``NoMetagame`` (Reputation,
docs/protocol/mechanisms.md#reputation), ``TensorIncomplete`` (an empty payoff-tensor cell: failed
match-ups, or a roster sample that does not cover every co-player multiset, e.g. Public Goods at
N = 8 in ``config/public_goods_n.yaml``; docs/protocol/evaluation.md#n-player-metagames) and
``DRNotComputed`` (the deviation-rating LP is too large). The per-game table shows each metric
such a note voids as blank rows (mean, s.e., rank empty; one per agent of the cell and the LLM
Average) whose ``note`` is ``"<note metric>: <message>"``, instead of leaving the rows out; the
Markdown / LaTeX cells show "–" and the caption gives the reason (:data:`REASONS`).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from coopeval.studies.coopeval.evaluate import DR_NOT_COMPUTED, NO_METAGAME, TENSOR_INCOMPLETE
from coopeval.studies.coopeval.tables.frames import CellValues, TableAxes, TableCell
from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE

__all__ = ["REASONS", "VOIDED", "blank_rows", "note_kind", "undefined_metrics"]

VOIDED: dict[str, tuple[str, ...]] = {
    NO_METAGAME: ("Fitness", "DR", "DR_exact"),
    TENSOR_INCOMPLETE: ("Fitness", "DR", "DR_exact"),
    DR_NOT_COMPUTED: ("DR", "DR_exact"),
}
"""Note metric → the table metrics it leaves undefined (:data:`~.frames.TABLE_METRICS`)."""

REASONS: dict[str, str] = {
    NO_METAGAME: "no metagame under Reputation (docs/protocol/mechanisms.md#reputation)",
    TENSOR_INCOMPLETE: "the payoff tensor has an empty cell: failed match-ups, or a roster sample that does not cover"
    " every co-player multiset (docs/protocol/evaluation.md#n-player-metagames)",
    DR_NOT_COMPUTED: "the deviation-rating LP over the joint profiles is too large (docs/protocol/evaluation.md#n-player-metagames)",
}
"""Note metric → the short reason the rendered captions give for a blank cell."""


def note_kind(note: str) -> str:
    """The note metric of a row's ``note`` (``"TensorIncomplete: …"`` → ``"TensorIncomplete"``)."""
    return note.split(":", 1)[0]


def undefined_metrics(metrics: pl.DataFrame) -> dict[tuple[str, str], dict[str, str]]:
    """(mechanism, game) → table metric → note ``"<note metric>: <message>"``, for every table
    metric a note metric row of ``metrics`` (long ``metrics`` frame) voids (:data:`VOIDED`);
    over several runs, the first run's note (runs sorted)."""
    out: dict[tuple[str, str], dict[str, str]] = {}
    notes = metrics.filter(pl.col("metric").is_in(list(VOIDED))).sort("run", "metric")
    for row in notes.iter_rows(named=True):
        voided = out.setdefault((row["mechanism"], row["game"]), {})
        note = f"{row['metric']}: {row['rule']}" if row["rule"] else row["metric"]
        for metric in VOIDED[row["metric"]]:
            voided.setdefault(metric, note)
    return out


def blank_rows(
    undefined: Mapping[tuple[str, str], Mapping[str, str]], values: CellValues, axes: TableAxes
) -> list[TableCell]:
    """Blank per-game rows (ranked-row columns, ``mean`` null) of the metrics ``undefined``
    (:func:`undefined_metrics`) voids in a (mechanism, game) of the table (``axes``) that no run
    defines: one per agent with a Mean in that cell (``axes`` order), then the LLM Average where
    the cell has one (a cell with no LLM agent has none)."""
    rows: list[TableCell] = []
    for (mech, game), voided in undefined.items():
        group = values.get((mech, game))
        if game not in axes.games or not group or "Mean" not in group:
            continue
        present = {a for run in group["Mean"].values() for a in run}
        agents = [a for a in axes.agents if a in present] + ([LLM_AVERAGE] if LLM_AVERAGE in present else [])
        for metric, note in voided.items():
            if metric in group:
                continue
            rows.extend(
                {
                    "mechanism": mech,
                    "game": game,
                    "metric": metric,
                    "agent": agent,
                    "mean": None,
                    "se": None,
                    "ci_low": None,
                    "ci_high": None,
                    "n": None,
                    "n_valid": None,
                    "rank": None,
                    "bold": False,
                    "grey": False,
                    "dr_source": None,
                    "note": note,
                }
                for agent in agents
            )
    return rows
