"""The landing page's data: run overview and one leaderboard per study.

Leaderboard values are means over the store's cells; the interval is the normal 95 % interval
of that mean, ``1.96 · sd / sqrt(n)`` over the n cells averaged (replicates, and games for
CoopEval's "all games" rows), null when n < 2. A non-finite value (NaN: the metric is undefined
in that cell, e.g. an image score without interactions) is left out of mean and interval. The metrics are those each study's docs define:
CoopEval Mean, Fitness and deviation rating (arXiv 2604.15267, docs/protocol/evaluation.md);
gossip cooperation ratio, image score, discounted return and Gini (arXiv 2602.07777,
docs/studies/gossip.md); evolution final resources, donation fraction and robustness to the
invasion test (arXiv 2412.10270, 2608.04507, docs/studies/evolution.md).
"""

from __future__ import annotations

from typing import Any

import duckdb

from coopeval.explorer.queries import columns, rows

STUDY_TABLES: dict[str, tuple[str, ...]] = {
    "coopeval": ("cells", "matchups", "scores", "metrics"),
    "gossip": ("gossip_cells", "gossip_rounds", "gossip_run_metrics"),
    "evolution": ("evolution_cells", "evo_strategies", "evo_generations", "invasion_tests"),
}
"""The tables each study's pages read besides ``decisions`` and ``llm_calls``."""

CORE_TABLES = ("decisions", "llm_calls")


def missing_tables(tables: set[str]) -> dict[str, list[str]]:
    """Study name → the tables its pages need that the store lacks (studies lacking none omitted)."""
    out = {}
    for study, needed in STUDY_TABLES.items():
        lacking = [t for t in (*CORE_TABLES, *needed) if t not in tables]
        if lacking:
            out[study] = lacking
    return out


def run_overview(con: duckdb.DuckDBPyConnection, tables: set[str]) -> dict[str, Any]:
    """Provenance, per-study counts and per agent (as the leaderboards name it: a model's IO and
    CoT agents apart) and model the decisions, calls, tokens and cost."""
    out: dict[str, Any] = {"provenance": [], "studies": [], "models": []}
    if "provenance" in tables:
        out["provenance"] = [[r["key"], r["value"]] for r in rows(con, "SELECT key, value FROM provenance ORDER BY key")]
    if "decisions" in tables:
        out["studies"] = rows(
            con,
            "SELECT study, count(DISTINCT cell_id) AS cells, count(*) AS decisions,"
            " count(*) FILTER (WHERE status = 'failed') AS failed,"
            " count(*) FILTER (WHERE n_attempts > 1) AS reasked,"
            " count(*) FILTER (WHERE truncated) AS truncated"
            " FROM decisions GROUP BY study ORDER BY study",
        )
    if "llm_calls" in tables:
        out["models"] = rows(
            con,
            "SELECT study, agent, model, count(DISTINCT (cell_id, decision_id)) AS decisions, count(*) AS attempts,"
            " count(*) FILTER (WHERE coalesce(error, '') <> '') AS attempt_errors,"
            " sum(prompt_tokens) AS prompt_tokens, sum(completion_tokens) AS completion_tokens,"
            " sum(cost_usd) AS cost_usd FROM llm_calls GROUP BY study, agent, model ORDER BY study, agent, model",
        )
    return out


def _board(columns_: list[tuple[str, str]], metrics: list[tuple[str, str]], found: list[dict[str, Any]], note: str) -> dict[str, Any]:
    out_rows = []
    for r in found:
        row: dict[str, Any] = {key: r[key] for key, _ in columns_}
        for key, _ in metrics:
            row[key] = [r[f"{key}_mean"], r[f"{key}_ci"]]
        row["n"] = r["n"]
        out_rows.append(row)
    return {
        "columns": [{"key": k, "label": label, "metric": False} for k, label in columns_]
        + [{"key": k, "label": label, "metric": True} for k, label in metrics]
        + [{"key": "n", "label": "cells", "metric": False}],
        "rows": out_rows,
        "note": note,
    }


def _aliased(metrics: list[tuple[str, str]], source: dict[str, str]) -> str:
    parts = []
    for key, _ in metrics:
        expr = f"(CASE WHEN isfinite({source[key]}) THEN {source[key]} END)"  # NaN: undefined in that cell
        parts.append(
            f"avg({expr}) AS {key}_mean, CASE WHEN count({expr}) > 1 THEN 1.96 * stddev_samp({expr}) / sqrt(count({expr})) END AS {key}_ci"
        )
    return ", ".join(parts)


def coopeval_board(con: duckdb.DuckDBPyConnection, tables: set[str]) -> dict[str, Any]:
    """Mechanism × game × agent rows of Mean, Fitness and DR (plus "all games" rows)."""
    metrics = [("mean", "Mean"), ("fitness", "Fitness"), ("dr", "DR")]
    source = {"mean": "\"Mean\"", "fitness": "\"Fitness\"", "dr": "\"DR\""}
    variant = "CASE WHEN c.variant IS NULL OR c.variant = 'default' THEN m.mechanism ELSE m.mechanism || ' (' || c.variant || ')' END"
    join = "LEFT JOIN cells c USING (cell_id)" if "cells" in tables and "variant" in columns(con, "cells") else ""
    if not join:
        variant = "m.mechanism"
    sql = f"""
        WITH wide AS (
            SELECT m.cell_id, {variant} AS mechanism, m.game, m.agent,
                   max(value) FILTER (WHERE metric = 'Mean') AS "Mean",
                   max(value) FILTER (WHERE metric = 'Fitness') AS "Fitness",
                   max(value) FILTER (WHERE metric = 'DR') AS "DR"
            FROM metrics m {join} WHERE coalesce(m.source, 'ours') = 'ours'
            GROUP BY ALL)
        SELECT mechanism, coalesce(game, 'all games') AS game, agent, count(*) AS n, {_aliased(metrics, source)}
        FROM wide GROUP BY GROUPING SETS ((mechanism, game, agent), (mechanism, agent))
        ORDER BY mechanism, game, mean_mean DESC NULLS LAST, agent"""
    found = rows(con, sql)
    groups = _tie_groups(con, tables, found)
    note = (
        "Mean payoff, replicator Fitness and deviation rating per cell (docs/protocol/evaluation.md); mean over replicates, or over games "
        "and replicates for 'all games'; ± 95 % normal interval. Tie groups: agents sharing a letter do not differ significantly "
        "(paired comparisons of the store's comparisons table, the same letters as the result tables; docs/comparisons.md)."
    )
    board = _board([("mechanism", "mechanism"), ("game", "game"), ("agent", "agent")], metrics, found, note)
    for row, letters in zip(board["rows"], groups, strict=True):
        row.update(letters)
    board["columns"] += [{"key": f"{key}_group", "label": f"{label} group", "metric": False} for key, label in TIE_GROUP_METRICS]
    return board


TIE_GROUP_METRICS = (("mean", "Mean"), ("fitness", "Fitness"), ("dr", "DR"))
"""Board metrics with tie groups (the metrics the workflow compares in pairs). The board's DR
is the deviation rating (higher is better); its letters are those of the DR rank comparisons
(rank 1 = highest rating), agents ordered by the rating shown."""


def _tie_groups(con: duckdb.DuckDBPyConnection, tables: set[str], found: list[dict[str, Any]]) -> list[dict[str, str | None]]:
    """Per board row, the tie-group letters of Mean, Fitness and DR (None where not compared).

    The letters are the result tables' (:mod:`coopeval.studies.coopeval.tables.tie_groups`), from
    the same ``comparisons`` rows: scope ``"<mechanism>/<game>"``, ``"<mechanism>/All"`` for the
    'all games' rows, agents ranked by the value shown.
    """
    from coopeval.studies.coopeval.tables.tie_groups import attach_tie_groups, tie_groups_from

    out: list[dict[str, str | None]] = [{f"{key}_group": None for key, _ in TIE_GROUP_METRICS} for _ in found]
    if "comparisons" not in tables:
        return out
    groups = tie_groups_from(con.sql("SELECT * FROM comparisons").pl())
    for key, metric in TIE_GROUP_METRICS:
        ranked = []
        for i, r in enumerate(found):
            game = "All" if r["game"] == "all games" else r["game"]
            ranked.append({"i": i, "mechanism": r["mechanism"], "game": game, "metric": metric, "agent": r["agent"], "value": r[f"{key}_mean"]})
        for scope_rows in _by_scope(ranked):
            order = sorted((x for x in scope_rows if x["value"] is not None), key=lambda x: -x["value"])
            for rank, x in enumerate(order, start=1):
                x["rank"] = rank
            for x in scope_rows:
                x.setdefault("rank", None)
        attach_tie_groups(ranked, groups, sorted({str(x["agent"]) for x in ranked}))
        for x in ranked:
            out[x["i"]][f"{key}_group"] = x["tie_group"]
    return out


def _by_scope(ranked: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    scopes: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for x in ranked:
        scopes.setdefault((x["mechanism"], x["game"]), []).append(x)
    return list(scopes.values())


def gossip_board(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Testbed × condition × model rows of cooperation, image score, discounted return, Gini."""
    metrics = [("coop", "cooperation"), ("image", "image score"), ("dret", "discounted return"), ("gini", "Gini")]
    source = {"coop": "cooperation_ratio_mean", "image": "image_score_mean", "dret": "discounted_return_mean", "gini": "gini"}
    sql = f"""SELECT testbed, condition, model, count(*) AS n, {_aliased(metrics, source)}
        FROM gossip_run_metrics GROUP BY ALL ORDER BY testbed, condition, coop_mean DESC NULLS LAST, model"""
    note = "Per run means of docs/studies/gossip.md; mean over replicates ± 95 % normal interval."
    return _board([("testbed", "testbed"), ("condition", "condition"), ("model", "model")], metrics, rows(con, sql), note)


def evolution_board(con: duckdb.DuckDBPyConnection, tables: set[str]) -> dict[str, Any]:
    """Protocol × variant × model rows of final resources, donation fraction and robustness."""
    metrics = [("final", "final resources"), ("donation", "donation fraction"), ("robust", "robustness")]
    source = {"final": "mean_final", "donation": "donation_fraction", "robust": "robust"}
    robust = (
        "(SELECT cell_id, avg(CAST(robust AS DOUBLE)) AS robust FROM invasion_tests GROUP BY cell_id)"
        if "invasion_tests" in tables
        else "(SELECT NULL::VARCHAR AS cell_id, NULL::DOUBLE AS robust WHERE false)"
    )
    sql = f"""
        WITH last AS (
            SELECT g.* FROM evo_generations g
            JOIN (SELECT cell_id, max(generation) AS generation FROM evo_generations GROUP BY cell_id) USING (cell_id, generation)),
        per_cell AS (SELECT last.protocol, last.variant, last.model, last.mean_final, last.donation_fraction, r.robust
                     FROM last LEFT JOIN {robust} r USING (cell_id))
        SELECT protocol, variant, model, count(*) AS n, {_aliased(metrics, source)}
        FROM per_cell GROUP BY ALL ORDER BY protocol, variant, final_mean DESC NULLS LAST, model"""
    note = "Final generation's mean resources and donation fraction; robustness = share of invasion tests the evolved population withstood; mean over replicates ± 95 % normal interval."
    return _board([("protocol", "protocol"), ("variant", "variant"), ("model", "model")], metrics, rows(con, sql), note)


def leaderboards(con: duckdb.DuckDBPyConnection, tables: set[str], skip: set[str] | None = None) -> dict[str, Any]:
    """Study name → leaderboard (studies whose tables are missing, or in ``skip``, are left out)."""
    missing = {*missing_tables(tables), *(skip or set())}
    boards: dict[str, Any] = {}
    if "coopeval" not in missing:
        boards["coopeval"] = coopeval_board(con, tables)
    if "gossip" not in missing:
        boards["gossip"] = gossip_board(con)
    if "evolution" not in missing:
        boards["evolution"] = evolution_board(con, tables)
    return boards
