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

import math
from typing import Any

import duckdb

from coopeval.explorer.queries import columns, rows
from coopeval.studies.coopeval.tables.tie_groups import untestable_families

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
            row.update(_marks(r, key))  # first: an infinite value replaces the mean
            row[key] = [r[f"{key}_mean"], r[f"{key}_ci"]]
            if r.get(f"{key}_lo") is not None:  # an interval of its own, [low, high] (the aggregate table's)
                row[key] += [r[f"{key}_lo"], r[f"{key}_hi"]]
        row["n"] = r["n"]
        out_rows.append(row)
    return {
        "columns": [{"key": k, "label": label, "metric": False} for k, label in columns_]
        + [{"key": k, "label": label, "metric": True} for k, label in metrics]
        + [{"key": "n", "label": "cells", "metric": False}],
        "rows": out_rows,
        "note": note,
    }


UNDEFINED_MARK = "†"
"""Marks a value that leaves out cells where the metric is undefined (NaN), as the result tables do."""


def _marks(r: dict[str, Any], key: str) -> dict[str, Any]:
    """A board cell's infinite value, its marks (``<key>_mark``) and why it is blank (``<key>_why``).

    Infinite values are shown as such (``Infinity``), not averaged away; a mean that leaves out
    undefined (NaN) cells is marked † with how many it used, as the result tables mark it.
    """
    n, nan, missing = int(r.get("n") or 0), int(r.get(f"{key}_nan") or 0), int(r.get(f"{key}_missing") or 0)
    pinf, ninf = int(r.get(f"{key}_pinf") or 0), int(r.get(f"{key}_ninf") or 0)
    out: dict[str, Any] = {}
    marks = []
    if pinf or ninf:  # the mean of values with an infinity is that infinity (both signs: undefined)
        r[f"{key}_mean"] = math.inf if not ninf else -math.inf if not pinf else math.nan
        r[f"{key}_ci"] = None
    if nan and r.get(f"{key}_mean") is not None:
        marks.append(f"{UNDEFINED_MARK} ({n - nan - missing}/{n} cells)")
    if r.get(f"{key}_oor"):
        marks.append(OUT_OF_RANGE)
    if marks:
        out[f"{key}_mark"] = " ".join(marks)
    if r.get(f"{key}_mean") is None:
        if nan:
            out[f"{key}_why"] = f"NaN{UNDEFINED_MARK}: undefined in every cell"
        elif missing:
            out[f"{key}_why"] = r.get(f"{key}_why_missing") or "not in the store for these cells"
    return out


OUT_OF_RANGE = "‡"
"""Marks a Gini outside [0, 1] in some run (negative discounted returns), as the gossip tables do."""


def _aliased(metrics: list[tuple[str, str]], source: dict[str, str]) -> str:
    parts = []
    for key, _ in metrics:
        x = source[key]
        expr = f"(CASE WHEN isfinite({x}) THEN {x} END)"  # NaN: undefined in that cell; ±inf counted apart
        parts.append(
            f"avg({expr}) AS {key}_mean, CASE WHEN count({expr}) > 1 THEN 1.96 * stddev_samp({expr}) / sqrt(count({expr})) END AS {key}_ci,"
            f" count(*) FILTER (WHERE isnan({x})) AS {key}_nan, count(*) FILTER (WHERE {x} IS NULL) AS {key}_missing,"
            f" count(*) FILTER (WHERE isinf({x}) AND {x} > 0) AS {key}_pinf, count(*) FILTER (WHERE isinf({x}) AND {x} < 0) AS {key}_ninf"
        )
    return ", ".join(parts)


NORMAL = "95 % normal, over cells"
BOOTSTRAP = "95 % percentile bootstrap (aggregate table)"
MATCHUPS = "95 % percentile bootstrap over runs and match-ups (per-game table)"
"""What a CoopEval board row's interval is (its ``interval`` column)."""


def coopeval_board(
    con: duckdb.DuckDBPyConnection,
    tables: set[str],
    aggregate: dict[tuple[str, str], dict[str, Any]] | None = None,
    per_game: dict[tuple[str, ...], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Mechanism × game × agent rows of Mean, Fitness and DR, plus one row per mechanism and agent
    over the games.

    That row is the aggregate table's (``aggregate``, :func:`coopeval.explorer.aggregate.read_aggregate`;
    game :data:`~coopeval.explorer.aggregate.AGGREGATE_LABEL`): its normalised quantity, its
    interval and its tie-group letters. A mechanism (variant) the table lacks (an ablation
    variant, or no table beside the store) gets the raw points averaged over games and
    replicates instead (:data:`~coopeval.explorer.aggregate.RAW_LABEL`), with no letters: the
    comparisons letter the normalised quantity, not this one. A per-game row of one cell (one
    replicate: no spread over cells) takes the interval of the per-game result table
    (``per_game``, :func:`coopeval.explorer.aggregate.read_result_table`), its bootstrap over runs
    and match-ups, when the table has one.
    """
    from coopeval.explorer.aggregate import AGGREGATE_LABEL, RAW_LABEL
    from coopeval.studies.coopeval.evaluate import (
        DR_NOT_COMPUTED,
        SAMPLE_NOT_COVER,
        TENSOR_INCOMPLETE,
    )

    metrics = [("mean", "Mean"), ("fitness", "Fitness"), ("dr_rank", "DR rank"), ("dr", "DR rating")]
    source = {"mean": "\"Mean\"", "fitness": "\"Fitness\"", "dr_rank": "\"DR_rank\"", "dr": "\"DR\""}
    cell_columns = columns(con, "cells") if "cells" in tables else set()
    variant = "CASE WHEN c.variant IS NULL OR c.variant = 'default' THEN m.mechanism ELSE m.mechanism || ' (' || c.variant || ')' END"
    join = "LEFT JOIN cells c USING (cell_id)" if "variant" in cell_columns else ""
    if not join:
        variant = "m.mechanism"
    players = "c.players" if join and "players" in cell_columns else "NULL::BIGINT"
    # the evaluation's note on a cell whose payoff tensor has an empty cell: a sample of rosters that is not a cover
    not_cover = f"metric = '{TENSOR_INCOMPLETE}' AND rule LIKE '%{SAMPLE_NOT_COVER}%'" if "rule" in columns(con, "metrics") else "false"
    sql = f"""
        WITH notes AS (SELECT cell_id, bool_or(metric = '{TENSOR_INCOMPLETE}') AS tensor_incomplete, bool_or({not_cover}) AS not_cover,
                              bool_or(metric = '{DR_NOT_COMPUTED}') AS dr_too_large
                       FROM metrics WHERE metric IN ('{TENSOR_INCOMPLETE}', '{DR_NOT_COMPUTED}') GROUP BY cell_id),
        wide AS (
            SELECT m.cell_id, {variant} AS mechanism, m.game, m.agent, max({players}) AS players,
                   bool_or(coalesce(i.tensor_incomplete, false)) AS tensor_incomplete, bool_or(coalesce(i.not_cover, false)) AS not_cover,
                   bool_or(coalesce(i.dr_too_large, false)) AS dr_too_large,
                   max(value) FILTER (WHERE metric = 'Mean') AS "Mean",
                   max(value) FILTER (WHERE metric = 'Fitness') AS "Fitness",
                   max(value) FILTER (WHERE metric = 'DR_rank') AS "DR_rank",
                   max(value) FILTER (WHERE metric = 'DR') AS "DR"
            FROM metrics m {join} LEFT JOIN notes i USING (cell_id) WHERE coalesce(m.source, 'ours') = 'ours'
            GROUP BY ALL)
        SELECT mechanism, coalesce(game, '{RAW_LABEL}') AS game, agent, count(*) AS n, min(players) AS players_min, max(players) AS players_max,
               bool_or(tensor_incomplete) AS tensor_incomplete, bool_or(not_cover) AS not_cover, bool_or(dr_too_large) AS dr_too_large, {_aliased(metrics, source)}
        FROM wide GROUP BY GROUPING SETS ((mechanism, game, agent), (mechanism, agent))
        ORDER BY mechanism, game, mean_mean DESC NULLS LAST, agent"""
    from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE

    # the evaluation notes excluded match-ups under the LLM Average of every cell: with no LLM
    # agent that note is its only row, not an LLM Average to show blank
    found = [r for r in rows(con, sql) if r["agent"] != LLM_AVERAGE or any(r[f"{key}_missing"] < r["n"] for key, _ in metrics)]

    seated: dict[tuple[str, str], set[str]] = {}
    for r in found:
        if r["agent"] != LLM_AVERAGE:
            seated.setdefault((str(r["mechanism"]), str(r["game"])), set()).add(str(r["agent"]))
    has_rank = bool(con.execute("SELECT count(*) FROM metrics WHERE metric = 'DR_rank'").fetchone()[0])  # type: ignore[index]
    for r in found:
        r["n_agents"], r["store_has_dr_rank"] = len(seated.get((str(r["mechanism"]), str(r["game"])), ())), has_rank
        for key, _ in metrics:
            r[f"{key}_why_missing"] = _why_missing(r, key)
    table = aggregate or {}
    for r in found:
        r["interval"] = NORMAL
        if r["game"] != RAW_LABEL and per_game:
            _matchup_intervals(r, _table_row(per_game, r), metrics)
        taken = table.get((str(r["mechanism"]), str(r["agent"]))) if r["game"] == RAW_LABEL else None
        if taken is None:
            continue
        r["game"], r["interval"] = AGGREGATE_LABEL, BOOTSTRAP
        for key, _ in metrics:
            r[f"{key}_mean"], r[f"{key}_ci"] = taken.get(key), None
            r[f"{key}_nan"] = r[f"{key}_pinf"] = r[f"{key}_ninf"] = 0
            r[f"{key}_missing"] = int(taken.get(key) is None)
            r[f"{key}_lo"], r[f"{key}_hi"] = taken.get(f"{key}_lo"), taken.get(f"{key}_hi")
            r[f"{key}_group"] = taken.get(f"{key}_group")
            if key == "dr" and taken.get(key) is None:
                r["dr_why_missing"] = "the aggregate table reports DR as the mean of the per-game DR ranks (DR rank), not as a rating"
            if key in ("dr", "dr_rank") and r["agent"] == LLM_AVERAGE:  # as in every per-game panel: no DR by definition
                r[f"{key}_mean"] = r[f"{key}_lo"] = r[f"{key}_hi"] = r[f"{key}_group"] = None
                r[f"{key}_missing"] = 1
                r[f"{key}_why_missing"] = _why_missing(r, key)
        r["dr_group"] = taken.get("dr_rank_group")  # the DR letters: the rank comparisons'
    found.sort(key=lambda r: (str(r["mechanism"]), str(r["game"]), -(r["mean_mean"] if r["mean_mean"] is not None else -math.inf), str(r["agent"])))
    per_game_rows = [r for r in found if r["game"] not in (AGGREGATE_LABEL, RAW_LABEL)]
    groups = _tie_groups(con, tables, per_game_rows)
    letters = iter(groups)
    if "comparisons" in tables:  # the aggregate table's letters, where its comparisons cannot test anything
        untestable = untestable_families(con.sql("SELECT * FROM comparisons WHERE study = 'coopeval'").pl(), _replicates(per_game_rows))
        for r in found:
            if r["game"] != AGGREGATE_LABEL:
                continue
            for key, metric in TIE_GROUP_METRICS:
                why = untestable.get((f"{r['mechanism']}/All", "DR" if key == "dr" else metric))
                group = "dr_rank_group" if key == "dr" else f"{key}_group"
                if why and r.get(group):
                    r[group] = why
                    if key == "dr":
                        r["dr_group"] = why
    note = (
        "Per game: mean payoff, replicator Fitness, DR rank (1 = the highest deviation rating of the cell; lower is better; the"
        " per-game result table's DR) and DR rating (the deviation rating itself; higher is better) per cell"
        " (docs/protocol/evaluation.md), mean over replicates"
        f" ± the {NORMAL} interval; tie groups: agents sharing a letter do not differ significantly (paired comparisons of the"
        f" store's comparisons table, the same letters as the result tables; docs/comparisons.md; DR: the rank comparisons). '{AGGREGATE_LABEL}': the"
        " aggregate result table's rows (results/tables/aggregate.csv): mean over the four social dilemmas of the normalised"
        " (x − NE) / (coop − NE) Mean and Fitness and of the DR rank (the table has no rating over games), in [low, high] its"
        " percentile bootstrap interval, and its letters."
        f" '{RAW_LABEL}': a mechanism variant the aggregate table leaves out, raw points averaged over every game and replicate"
        " ± 95 % normal interval over those cells, without letters (the comparisons letter the normalised quantity)."
        " A blank cell says why (docs/protocol/evaluation.md): the LLM Average has no DR by definition (it is an average over"
        " agents, not a player of the metagame), Reputation runs no replicator dynamics (Mean only), and an N-player"
        " game whose roster sample does not cover every co-player multiset (Public Goods at N = 8) has no full payoff tensor, so"
        " Fitness and DR are undefined there."
        f" {UNDEFINED_MARK}: the mean leaves out cells where the metric is undefined (NaN), with how many it used."
    )
    from coopeval.studies.coopeval.tables.frames import AgentColumns

    is_llm = AgentColumns(llm=_roster_llm(con, tables)).is_llm
    if found and not any(r["agent"] == LLM_AVERAGE or is_llm(str(r["agent"])) for r in found):
        note += (" No LLM Average row: no agent of this store is a language model (scripted bots and people only), and the"
                 " LLM Average averages LLM agents only (docs/human-play.md).")
    board = _board([("mechanism", "mechanism"), ("game", "game"), ("agent", "agent")], metrics, found, note)
    for row, r in zip(board["rows"], found, strict=True):
        if r["game"] in (AGGREGATE_LABEL, RAW_LABEL):
            row.update({f"{key}_group": r.get(f"{key}_group") for key, _ in TIE_GROUP_METRICS})
        else:
            row.update(next(letters))
        row["interval"] = r["interval"]
    board["variants"] = bool(join)  # the cells carry a variant: a row's cells are those of its mechanism and variant
    for column in board["columns"]:
        if column["key"] == "dr_rank":
            column["lower"] = True  # lower is better: the table sorts it ascending first
    board["columns"] += [{"key": f"{key}_group", "label": f"{label} group", "metric": False} for key, label in TIE_GROUP_METRICS]
    board["columns"].append({"key": "interval", "label": "interval", "metric": False})
    return board


def _roster_llm(con: duckdb.DuckDBPyConnection, tables: set[str]) -> dict[str, bool]:
    """CoopEval agent → whether the run's roster made it a language model: the ``model`` string
    its calls recorded (``llm_calls``; :func:`coopeval.agents.registry.is_llm`), so a person or
    bot seated under a label (``alice(IO)``) is not taken for a model. Empty where the store has
    no such calls (released data): agents are then classified by their type string."""
    if "llm_calls" not in tables or not {"study", "agent", "model"} <= columns(con, "llm_calls"):
        return {}
    from coopeval.agents.registry import is_llm

    pairs = con.execute("SELECT DISTINCT agent, model FROM llm_calls WHERE study = 'coopeval' AND agent IS NOT NULL AND model IS NOT NULL")
    return {str(agent): is_llm(str(model)) for agent, model in pairs.fetchall()}


def _table_row(per_game: dict[tuple[str, ...], dict[str, Any]], r: dict[str, Any]) -> dict[str, Any] | None:
    """The per-game result table's row of a board row: the default cells' by (mechanism, game,
    agent); a variant's (``<mechanism> (<variant>)``, one N) by its mechanism and N (the table's
    rows per number of players, issue 47: group-size rows get their intervals)."""
    label, game, agent = str(r["mechanism"]), str(r["game"]), str(r["agent"])
    found = per_game.get((label, game, agent))
    if found is not None or not (label.endswith(")") and " (" in label):
        return found
    low, high = r.get("players_min"), r.get("players_max")
    if low is None or low != high:
        return None
    return per_game.get((label[:-1].partition(" (")[0], game, agent, str(int(low))))


def _players(r: dict[str, Any]) -> str:
    low, high = r.get("players_min"), r.get("players_max")
    if low is None:
        return "this N-player game"
    return f"N = {low}" if low == high else f"N = {low}–{high}"


def _why_missing(r: dict[str, Any], key: str) -> str | None:
    """Why a CoopEval board row has no value of ``key`` (``None``: no reason is known), per case, from
    the notes the evaluation stores (:mod:`coopeval.studies.coopeval.tables.undefined`): the LLM
    Average has no deviation rating by definition; Reputation runs no replicator dynamics; an
    N-player variant whose roster sample does not cover every co-player multiset, or failed
    match-ups, leave the payoff tensor incomplete (``TensorIncomplete``), so Fitness and DR are
    undefined there; DR's LP can be too large (``DRNotComputed``)."""
    if key == "mean":
        return None
    from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE

    if key in ("dr", "dr_rank") and r["agent"] == LLM_AVERAGE:
        return "no DR by definition: the LLM Average is an average over agents, not a player of the metagame that DR rates"
    if str(r["mechanism"]).startswith("Reputation"):
        return "not computed: no replicator dynamics under Reputation (Mean only)"
    if r.get("not_cover"):
        return (f"undefined at {_players(r)}: the roster sample does not cover every co-player multiset, so there is no full"
                " payoff tensor for Fitness and DR")  # fmt: skip
    if r.get("tensor_incomplete"):
        return "undefined: failed match-ups left a cell of the payoff tensor empty, so there is no full payoff tensor for Fitness and DR"
    if key in ("dr", "dr_rank") and r.get("dr_too_large"):
        return "not computed: the deviation-rating LP over the joint profiles is too large"
    if key in ("dr", "dr_rank") and r.get("n_agents") == 1:
        return "undefined with one agent: the deviation rating compares agents, and these cells seat only one"
    if key == "dr_rank":
        if not r.get("store_has_dr_rank", True):
            return "not in the store: it has no DR rank at all (a store written before DR_rank)"
        return "not in the store for these cells"
    return None


def _matchup_intervals(r: dict[str, Any], table_row: dict[str, Any] | None, metrics: list[tuple[str, str]]) -> None:
    """Give a per-game board row without an interval over cells the per-game table's interval
    over match-ups (where the table's value is the row's: the same cells)."""
    if table_row is None:
        return
    for key, _ in metrics:
        lo, hi, value = table_row.get(f"{key}_lo"), table_row.get(f"{key}_hi"), table_row.get(key)
        mine = r.get(f"{key}_mean")
        if r.get(f"{key}_ci") is None and lo is not None and mine is not None and value is not None and math.isclose(mine, value, rel_tol=1e-9, abs_tol=1e-12):
            r[f"{key}_lo"], r[f"{key}_hi"] = lo, hi
            r["interval"] = MATCHUPS


TIE_GROUP_METRICS = (("mean", "Mean"), ("fitness", "Fitness"), ("dr", "DR"))
"""Board metrics with tie groups (the metrics the workflow compares in pairs). The DR letters
are those of the DR rank comparisons (rank 1 = highest rating), agents ordered by the deviation
rating shown (the same order as by rank); one ``DR group`` column serves DR rank and DR rating."""


def _tie_groups(con: duckdb.DuckDBPyConnection, tables: set[str], found: list[dict[str, Any]]) -> list[dict[str, str | None]]:
    """Per board row, the tie-group letters of Mean, Fitness and DR (None where not compared).

    The letters are the result tables' (:mod:`coopeval.studies.coopeval.tables.tie_groups`), from
    the same ``comparisons`` rows: scope ``"<mechanism>/<game>"`` of the per-game rows ``found``,
    agents ranked by the value shown.
    """
    from coopeval.studies.coopeval.tables.tie_groups import attach_tie_groups, tie_groups_from

    out: list[dict[str, str | None]] = [{f"{key}_group": None for key, _ in TIE_GROUP_METRICS} for _ in found]
    if "comparisons" not in tables:
        return out
    groups = tie_groups_from(con.sql("SELECT * FROM comparisons").pl())
    for key, metric in TIE_GROUP_METRICS:
        ranked = []
        for i, r in enumerate(found):
            game = r["game"]
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
    untestable = untestable_families(con.sql("SELECT * FROM comparisons WHERE study = 'coopeval'").pl(), _replicates(found))
    for i, r in enumerate(found):
        for key, metric in TIE_GROUP_METRICS:
            why = untestable.get((f"{r['mechanism']}/{r['game']}", metric))
            if why and out[i][f"{key}_group"] is not None:
                out[i][f"{key}_group"] = why
    return out


def _replicates(found: list[dict[str, Any]]) -> dict[str, int]:
    """Scope (``<mechanism>/<game>``, and ``<mechanism>/All`` over its games) → the most cells any
    agent's per-game row averages: the replicates behind the scope's comparisons."""
    out: dict[str, int] = {}
    for r in found:
        n = int(r.get("n") or 0)
        for scope in (f"{r['mechanism']}/{r['game']}", f"{r['mechanism']}/All"):
            out[scope] = max(out.get(scope, 0), n)
    return out


def _by_scope(ranked: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    scopes: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for x in ranked:
        scopes.setdefault((x["mechanism"], x["game"]), []).append(x)
    return list(scopes.values())


def gossip_board(con: duckdb.DuckDBPyConnection, tables: set[str] | None = None) -> dict[str, Any]:
    """Testbed × condition × model rows of cooperation, image score, discounted return, Gini, with
    the tie groups of the store's gossip comparisons and the tables' marks (†, ‡)."""
    # the run's cooperation ratio is over every agent of the run, attackers included (docs/studies/gossip.md); the
    # chart of cooperation over rounds beside it counts the honest agents and the attackers apart
    metrics = [("coop", "cooperation, all agents (attackers included)"), ("image", "image score"), ("dret", "discounted return"), ("gini", "Gini")]
    source = {"coop": "cooperation_ratio_mean", "image": "image_score_mean", "dret": "discounted_return_mean", "gini": "gini"}
    present = columns(con, "gossip_run_metrics")
    oor = "count(*) FILTER (WHERE gini_out_of_range) AS gini_oor," if "gini_out_of_range" in present else ""
    matching = "min(matching) AS matching, count(DISTINCT matching) AS matchings," if "matching" in present else ""
    sql = f"""WITH runs AS (SELECT *, {_failed_run(present)} AS _failed FROM gossip_run_metrics),
        played AS (SELECT testbed, condition, model, count(*) FILTER (WHERE _failed) AS failed_runs FROM runs GROUP BY ALL),
        used AS (SELECT testbed, condition, model, {oor} {matching} count(*) AS n, {_aliased(metrics, source)}
                 FROM runs WHERE NOT _failed GROUP BY testbed, condition, model)
        SELECT * EXCLUDE (n), coalesce(n, 0) AS n FROM played LEFT JOIN used USING (testbed, condition, model)
        ORDER BY testbed, condition, coop_mean DESC NULLS LAST, model"""
    found = rows(con, sql)
    compared = {"coop": "cooperation_ratio_mean", "dret": "discounted_return_mean", "gini": "gini"}
    _study_letters(con, tables, "gossip", found, compared, lambda r: f"{r['testbed']}/{r['condition']}/{r['matching']}" if r.get("matchings") == 1 else None)
    note = (
        "Per run means of docs/studies/gossip.md; mean over replicates ± 95 % normal interval. Tie groups: models sharing a"
        " letter do not differ significantly (the store's gossip comparisons; docs/comparisons.md). As in the result tables:"
        f" {UNDEFINED_MARK} the mean leaves out runs where the metric is undefined (a Gini of returns summing to ≤ 0), with how"
        f" many it used; {OUT_OF_RANGE} a Gini outside [0, 1] in some run (negative discounted returns). A run whose every"
        " round failed measured nothing of its condition: it is left out of every mean, as in the result tables, and"
        " counted under failed runs."
    )
    board = _board([("testbed", "testbed"), ("condition", "condition"), ("model", "model")], metrics, found, note)
    board["columns"].append({"key": "failed_runs", "label": "failed runs", "metric": False})
    for row, r in zip(board["rows"], found, strict=True):
        row["failed_runs"] = r["failed_runs"]
    _group_columns(board, found, compared, metrics)
    return board


def _failed_run(present: set[str]) -> str:
    """SQL of a ``gossip_run_metrics`` row: its run's every round failed (``all_rounds_failed``;
    in stores written before that column, ``n_failed_rounds = n_rounds``), as
    :func:`coopeval.studies.gossip.summary.replicate_summary` leaves such runs out."""
    if "all_rounds_failed" in present:
        return "coalesce(all_rounds_failed, false)"
    if {"n_failed_rounds", "n_rounds"} <= present:
        return "coalesce(n_rounds > 0 AND n_failed_rounds = n_rounds, false)"
    return "false"


def _study_letters(con: duckdb.DuckDBPyConnection, tables: set[str] | None, study: str, found: list[dict[str, Any]],
                   compared: dict[str, str], scope_of: Any) -> None:  # fmt: skip
    """Set ``<key>_group`` on the rows ``found`` (in place) from the store's ``comparisons`` of
    ``study``: per scope (``scope_of(row)``, None: not compared) and compared metric, the models
    ordered by the value shown and lettered as the tables letter theirs
    (:func:`coopeval.comparison.letters.letter_groups`; docs/comparisons.md#rank-tie-groups-in-the-tables)."""
    from coopeval.comparison.letters import letter_groups
    from coopeval.studies.coopeval.tables.tie_groups import tie_groups_from

    for r in found:
        r.update({f"{key}_group": None for key in compared})
    if tables is not None and "comparisons" not in tables:
        return
    frame = con.sql("SELECT * FROM comparisons WHERE study = ?", params=[study]).pl()
    groups = tie_groups_from(frame, study=study)
    untestable = untestable_families(frame)
    scopes: dict[str, list[dict[str, Any]]] = {}
    for r in found:
        scope = scope_of(r)
        if scope is not None:
            scopes.setdefault(scope, []).append(r)
    for scope, members in scopes.items():
        for key, metric in compared.items():
            if (scope, metric) not in groups:
                continue
            agents, significant, _ = groups[(scope, metric)]
            ranked = sorted((r for r in members if r["model"] in agents and r[f"{key}_mean"] is not None), key=lambda r: -r[f"{key}_mean"])
            letters = letter_groups([str(r["model"]) for r in ranked], significant)
            for r in ranked:
                r[f"{key}_group"] = untestable.get((scope, metric)) or letters[str(r["model"])]


def _group_columns(board: dict[str, Any], found: list[dict[str, Any]], compared: dict[str, str], metrics: list[tuple[str, str]]) -> None:
    labels = dict(metrics)
    for row, r in zip(board["rows"], found, strict=True):
        row.update({f"{key}_group": r[f"{key}_group"] for key in compared})
    # the metric's name without its qualifier ("cooperation, all agents (…)" → "cooperation group")
    board["columns"] += [{"key": f"{key}_group", "label": f"{labels[key].split(',')[0]} group", "metric": False} for key in compared]


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
    found = rows(con, sql)
    compared = {"final": "mean_final", "donation": "donation_fraction", "robust": "robustness"}
    _study_letters(con, tables, "evolution", found, compared, lambda r: f"{r['protocol']}/{r['variant']}")
    note = ("Final generation's mean resources and donation fraction; robustness = share of invasion tests the evolved population"
            " withstood; mean over replicates ± 95 % normal interval. Tie groups: models sharing a letter do not differ"
            " significantly (the store's evolution comparisons; docs/comparisons.md).")  # fmt: skip
    board = _board([("protocol", "protocol"), ("variant", "variant"), ("model", "model")], metrics, found, note)
    _group_columns(board, found, compared, metrics)
    return board


def leaderboards(
    con: duckdb.DuckDBPyConnection,
    tables: set[str],
    skip: set[str] | None = None,
    aggregate: dict[tuple[str, str], dict[str, Any]] | None = None,
    per_game: dict[tuple[str, ...], dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Study name → leaderboard (studies whose tables are missing, or in ``skip``, are left out);
    ``aggregate`` and ``per_game`` are CoopEval's result tables (:mod:`coopeval.explorer.aggregate`), if any."""
    missing = {*missing_tables(tables), *(skip or set())}
    boards: dict[str, Any] = {}
    if "coopeval" not in missing:
        boards["coopeval"] = coopeval_board(con, tables, aggregate, per_game)
    if "gossip" not in missing:
        boards["gossip"] = gossip_board(con, tables)
    if "evolution" not in missing:
        boards["evolution"] = evolution_board(con, tables)
    return boards
