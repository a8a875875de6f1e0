"""The workflow's comparison outputs: every pair's row (Parquet, for the store) and the
``results/tables/comparisons.{csv,md,tex}`` files rendered from the store's ``comparisons`` table.

The rule ``comparisons`` reads the default-variant cells' ``scores`` and ``metrics`` Parquet
files (the store is written after it: only the ``store`` rule writes the DuckDB file) and
writes ``results/comparisons/coopeval.parquet``; ``comparison_tables`` reads the store, so the
tables hold every study's rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from coopeval.comparison.multiplicity import CORRECTIONS, DEFAULT_CORRECTION
from coopeval.comparison.record import COMPARISONS_SCHEMA, comparisons_frame
from coopeval.core.io import write_parquet_atomic
from coopeval.core.schemas import conform
from coopeval.studies.coopeval.comparisons import all_pair_rows
from coopeval.studies.coopeval.tables.render import atomic_write_text

__all__ = ["COMPARISON_TABLE_FILES", "comparison_tables_from_store", "render_comparisons", "write_comparisons"]

COMPARISON_TABLE_FILES = tuple(f"comparisons.{ext}" for ext in ("csv", "md", "tex"))
"""The comparison tables under ``results/tables/``."""


def write_comparisons(
    scores: Sequence[str | Path], metrics: Sequence[str | Path], out: str | Path, *,
    correction: str = DEFAULT_CORRECTION, steps: int, lr: float, dr_rule: str | None = None,
) -> pl.DataFrame:
    """Compare every pair of agents of the given cells and write the rows as Parquet.

    ``steps`` / ``lr`` are the replicator settings the metrics were computed with (the
    Fitness bootstrap reruns the replicator); ``dr_rule`` (the tables' deviation-rating rule)
    adds the DR rank rows. Returns the written frame.
    """
    score_frame = pl.concat([conform("scores", pl.read_parquet(p)) for p in scores], how="vertical") if scores else None
    metric_frame = pl.concat([conform("metrics", pl.read_parquet(p)) for p in metrics], how="vertical") if metrics else None
    rows = [] if score_frame is None else all_pair_rows(score_frame, metric_frame, correction=correction, steps=steps, lr=lr,
                                                                dr_rule=dr_rule)
    frame = comparisons_frame(rows)
    write_parquet_atomic(frame, out)
    return frame


def _number(value: float | None, digits: int = 3) -> str:
    return "–" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    return "–" if value is None else (f"{value:.4f}" if value >= 1e-4 else "<0.0001")


def _tex(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"), ("_", r"\_"),
                 ("{", r"\{"), ("}", r"\}"), ("~", r"\textasciitilde{}"), ("^", r"\textasciicircum{}")):
        text = text.replace(a, b)
    return text.replace("–", "--").replace("−", "$-$").replace("Δ", r"$\Delta$").replace("α", r"$\alpha$")


def _cells(row: dict[str, object]) -> list[str]:
    interval = "–" if row["ci_low"] is None else f"[{_number(row['ci_low'])}, {_number(row['ci_high'])}]"  # type: ignore[arg-type]
    return [str(row["study"]), str(row["scope"]), str(row["metric"]), str(row["a"]), str(row["b"]),
            _number(row["delta"]), interval, _p(row["p_value"]), _p(row["p_adjusted"]),  # type: ignore[arg-type]
            _number(row["mde"]), str(row["n_clusters"])]  # type: ignore[arg-type]


HEADER = ["Study", "Scope", "Metric", "A", "B", "Δ = A − B", "95 % CI", "p", "p adj.", "MDE (80 %)", "Clusters"]


def render_comparisons(frame: pl.DataFrame) -> dict[str, str]:
    """CSV (unrounded, :data:`COMPARISONS_SCHEMA` columns), Markdown and LaTeX of the rows."""
    corrections = sorted(set(frame["correction"].drop_nulls().to_list())) or [DEFAULT_CORRECTION]
    named = "; ".join(f"{c}: {CORRECTIONS.get(c, c)}" for c in corrections)
    caption = (f"Paired comparisons (docs/comparisons.md). p adj.: p-value corrected over every pair of one"
               f" (study, scope, metric) ({named}). MDE: minimum detectable difference at 80 % power, α = 0.05.")
    rows = list(frame.iter_rows(named=True))
    md = ["# Paired comparisons", "", caption, "", "| " + " | ".join(HEADER) + " |", "|" + "|".join(["---"] * 5 + ["---:"] * 6) + "|"]
    md += ["| " + " | ".join(_cells(r)) + " |" for r in rows]
    tex = [r"% coopeval paired comparisons; needs \usepackage{booktabs,longtable}", r"\begin{longtable}{lllll" + "r" * 6 + "}",
           rf"\caption{{{_tex(caption)}}}\\", r"\toprule", " & ".join(_tex(h) for h in HEADER) + r" \\", r"\midrule"]
    tex += [" & ".join(_tex(c) for c in _cells(r)) + r" \\" for r in rows]
    tex += [r"\bottomrule", r"\end{longtable}", ""]
    return {"csv": frame.select(list(COMPARISONS_SCHEMA)).write_csv(), "md": "\n".join(md) + "\n", "tex": "\n".join(tex)}


def comparison_tables_from_store(store: str | Path, out_dir: str | Path) -> list[Path]:
    """Write ``comparisons.{csv,md,tex}`` of the store's ``comparisons`` table (empty tables
    when the store has none). Returns the written files."""
    from coopeval.core.duckdb_settings import (
        open_duckdb,  # not at import: the workflow reads this module's names when it parses
    )

    con = open_duckdb(store, read_only=True, purpose="comparison tables", log=False)
    try:
        present = {r[0] for r in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
        frame = con.sql("SELECT * FROM comparisons ORDER BY study, scope, metric, a, b").pl() if "comparisons" in present else None
    finally:
        con.close()
    frame = comparisons_frame([]) if frame is None else frame.select(list(COMPARISONS_SCHEMA))
    written = []
    for ext, text in render_comparisons(frame).items():
        path = Path(out_dir) / f"comparisons.{ext}"
        atomic_write_text(path, text)
        written.append(path)
    return written
