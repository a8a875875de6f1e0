"""The run summary page of the report: what was run and what it cost, as one self-contained
HTML file built from the store (opened read-only) and the validated config.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.agents.registry import agent_name, agent_style
from coopeval.core.duckdb_settings import open_duckdb
from coopeval.core.io import read_delimited
from coopeval.core.schemas import TRANSPORT_COLUMNS
from coopeval.games import get_game
from coopeval.studies.coopeval.analysis.run_summary import (
    constraint_not_applied,
    decision_counts,
    failed_decisions,
    judge_summary,
    model_usage,
    provider_traffic,
    structured_validity,
)
from coopeval.studies.coopeval.figures.catalog import table_pages
from coopeval.studies.coopeval.tables.builder import csv_schema

__all__ = ["frame_to_html", "render_run_summary", "render_table_pages"]

_STYLE = """
body { font-family: sans-serif; font-size: 13px; margin: 1em; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
th { background: #f0f0f0; }
"""


def _cell(value: Any) -> str:
    if value is None:
        return "<td></td>"
    if isinstance(value, float):
        return f'<td class="num">{value:,.4f}</td>'
    if isinstance(value, int) and not isinstance(value, bool):
        return f'<td class="num">{value:,}</td>'
    return f"<td>{html.escape(str(value))}</td>"


def frame_to_html(frame: pl.DataFrame, empty: str = "none") -> str:
    """An HTML table of a small frame (escaped); ``empty`` is shown for a frame without rows."""
    if frame.height == 0:
        return f"<p><em>{html.escape(empty)}</em></p>"
    head = "".join(f"<th>{html.escape(c)}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(_cell(v) for v in row) + "</tr>" for row in frame.iter_rows())
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _write_html(path: Path, title: str, body: Sequence[str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    page = [
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        *body,
        "</body></html>",
    ]
    tmp.write_text("\n".join(page), encoding="utf-8")
    tmp.replace(path)
    return path


def render_table_pages(
    table_dir: str | Path,
    out_dir: str | Path,
    tables: Sequence[str],
    mechanisms: Sequence[str],
    games: Sequence[str],
) -> list[Path]:
    """One HTML page per entry of :func:`coopeval.studies.coopeval.figures.catalog.table_pages`: the rows of
    ``<table_dir>/<table>.csv`` for that mechanism (and game), as an HTML table."""
    frames = {}
    for t in tables:
        path = Path(table_dir) / f"{t}.csv"
        frames[t] = (
            read_delimited(path, csv_schema(t)) if path.stat().st_size else pl.DataFrame()
        )
    names = {g: get_game(g).name for g in games}
    written = []
    for entry in table_pages(tables, mechanisms, games):
        frame = frames[entry.table]
        rows = (
            frame.filter(pl.col("mechanism") == entry.mechanism)
            if "mechanism" in frame.columns
            else frame
        )
        if entry.game and "game" in rows.columns:
            rows = rows.filter(pl.col("game") == names[entry.game])
        title = f"{entry.table} table: {entry.mechanism}" + (
            f", {get_game(entry.game).title}" if entry.game else ""
        )
        body = [
            f"<h2>{html.escape(title)}</h2>",
            frame_to_html(rows, f"no rows for {entry.mechanism} in {entry.table}.csv"),
        ]
        written.append(_write_html(Path(out_dir) / f"{entry.stem}.html", title, body))
    return written


_CALL_COLUMNS = (
    "model", "kind", "cache_hit", "error", "truncated", "prompt_tokens", "completion_tokens",
    "reasoning_tokens", "cost_usd", "attempt", "structured_output", "structured_field", *TRANSPORT_COLUMNS,
)


def _present(con: Any, table: str, wanted: tuple[str, ...]) -> str:
    """The ``wanted`` columns ``table`` has, comma-separated (a store built from Parquet files of
    an older version lacks ``truncated`` and ``reasoning_tokens``)."""
    have = {row[0] for row in con.execute(f"DESCRIBE {table}").fetchall()}
    return ", ".join(c for c in wanted if c in have)


def _read(store: str | Path) -> dict[str, pl.DataFrame]:

    con = open_duckdb(store, read_only=True, purpose="run page")
    try:
        present = {row[0] for row in con.execute("SHOW TABLES").fetchall()}
        tables = {
            "decisions": con.sql(
                "SELECT mechanism, game, matchup_id, round, seat, agent, kind, status, n_attempts, error FROM decisions"
            ).pl(),
            "llm_calls": con.sql(f"SELECT {_present(con, 'llm_calls', _CALL_COLUMNS)} FROM llm_calls").pl(),
            "cells": con.sql("SELECT * FROM cells").pl() if "cells" in present else pl.DataFrame(),
            "provenance": (
                con.sql("SELECT * FROM provenance").pl()
                if "provenance" in present
                else pl.DataFrame()
            ),
            "judgements": (
                con.sql("SELECT judge_model, mechanism, status, confidence FROM judgements").pl()
                if "judgements" in present
                else pl.DataFrame(
                    schema={
                        "judge_model": pl.String,
                        "mechanism": pl.String,
                        "status": pl.String,
                        "confidence": pl.Float64,
                    }
                )
            ),
        }
    finally:
        con.close()
    return tables


def render_run_summary(
    store: str | Path,
    out_path: str | Path,
    agents: Sequence[Mapping[str, Any]],
    games: Sequence[str],
    mechanisms: Sequence[str],
    judge: Mapping[str, Any] | None = None,
    seed: int | None = None,
    replicates: int | None = None,
) -> Path:
    """Write the run summary HTML: roster, games, mechanisms, decision counts, failures, calls,
    tokens and cost per model, and the judge's outcome."""
    t = _read(store)
    roster = pl.DataFrame(
        [
            {
                "agent": agent_name(a),
                "model": str(a["model"]),
                "style": (
                    agent_style(a)
                ),
                "params": ", ".join(f"{k}={v}" for k, v in sorted((a.get("params") or {}).items())),
            }
            for a in agents
        ],
        schema={"agent": pl.String, "model": pl.String, "style": pl.String, "params": pl.String},
    )
    counts = decision_counts(t["decisions"])
    by_mechanism = (
        counts.group_by("mechanism", "kind")
        .agg(pl.col("decisions", "failed", "attempts").sum())
        .sort("mechanism", "kind")
        if counts.height
        else counts
    )
    n_failed = int(counts["failed"].sum()) if counts.height else 0
    usage = model_usage(t["llm_calls"])
    not_applied = constraint_not_applied(t["llm_calls"])
    judged = judge_summary(t["judgements"])
    n_judge_failed = int(judged["failed"].sum()) if judged.height else 0
    cells = t["cells"]
    parts = [
        "<h1>coopeval run summary</h1>",
        "<p>",
        f"Seed {html.escape(str(seed))}, {html.escape(str(replicates))} replicate(s), {cells.height} cells; "
        f"{counts['decisions'].sum() if counts.height else 0:,} decisions, {n_failed:,} failed; "
        f"{t['llm_calls'].height:,} call attempts.",
        "</p>",
        "<h2>Agents</h2>",
        frame_to_html(roster),
        "<h2>Games and mechanisms</h2>",
        "<p>Games: " + html.escape(", ".join(get_game(g).title for g in games)) + "</p>",
        "<p>Mechanisms: " + html.escape(", ".join(mechanisms)) + "</p>",
        "<h2>Decisions per mechanism and kind</h2>",
        frame_to_html(by_mechanism, "no decisions"),
        "<details><summary>Per game</summary>",
        frame_to_html(counts, "no decisions"),
        "</details>",
        f"<h2>Failed decisions ({n_failed})</h2>",
        frame_to_html(failed_decisions(t["decisions"]), "none: every decision has a valid answer"),
        "<h2>Calls, tokens and cost per model</h2>",
        "<p>cost_usd prices every answer used (cached ones at their first price); new_cost_usd only answers received in this run.</p>",
        frame_to_html(usage, "no calls"),
        "<h2>Structured output: first-attempt validity</h2>",
        f"<p>constraint not applied: {not_applied:,} calls"
        + (" (agents asked for a constraint that no request field carried: see docs/structured-outputs.md)" if not_applied else "")
        + "</p>",
        frame_to_html(structured_validity(t["llm_calls"]), "no calls"),
        "<h2>Provider traffic</h2>",
        "<p>Calls made per provider: requests refused with 429, retries, the most in flight in one job, the configured cap and the lowest adaptive limit.</p>",
        frame_to_html(provider_traffic(t["llm_calls"]), "no calls to a model provider"),
        f"<h2>Judge ({n_judge_failed} failed judgements)</h2>",
    ]
    if judge:
        size = int(judge.get("sample_size", 0))
        parts.append(
            "<p>"
            + html.escape(
                f"Judge model {judge.get('model')} ({judge.get('style', 'IO')}); "
                + (
                    "every eligible decision"
                    if size == 0
                    else f"a seeded sample of at most {size} eligible decisions"
                )
                + f" (action decisions of CoT agents, responses of at least {judge.get('min_chars', 80)} characters)."
            )
            + "</p>"
        )
    parts.append(
        frame_to_html(judged, "nothing judged (no CoT agents, or no response long enough)")
    )
    if t["provenance"].height:
        parts += ["<h2>Provenance</h2>", frame_to_html(t["provenance"])]
    return _write_html(Path(out_path), "coopeval run summary", parts)
