"""Per-cell data each study's pages show beside the decisions.

CoopEval: match-up scores, the Mediation/Contracting design, vote and signature steps
(docs/protocol); gossip: the round timeline (the pair labelled by the testbed's roles, their
actions, tones and attacker kinds) and the per-agent metrics (docs/studies/gossip.md);
evolution: strategies with parent and rank (the lineage), generations, invasion tests, the mean strategy matrices and the donation events
(docs/studies/evolution.md). Each entry is one query over one table, sorted by ``cell_id``
first and run once per chunk of cells (:meth:`Extra.sql`); a table missing from the store
contributes nothing.
"""

from __future__ import annotations

from typing import NamedTuple

import duckdb

WHERE = "WHERE list_contains(?, cell_id)"
"""The filter that restricts a query to one chunk of cells (their ids bound as a list)."""


class Extra(NamedTuple):
    """One page field: rows of ``table`` (the columns ``select``, every column by default) in
    the order ``cell_id, <order>``; ``grouped`` adds ``GROUP BY ALL`` (``select`` aggregates)."""

    table: str
    order: str = ""
    select: str = "*"
    grouped: bool = False
    source: str = ""
    """A query to read instead of ``table`` (``{where}`` in it is the chunk's filter), e.g. to thin rows per cell."""

    def sql(self, where: str) -> str:
        """The query of the cells ``where`` selects (a ``WHERE`` clause)."""
        columns = self.select if self.select == "*" else f"cell_id, {self.select}"
        group = " GROUP BY ALL" if self.grouped else ""
        order = f"cell_id, {self.order}" if self.order else "cell_id"
        if self.source:
            return f"SELECT {columns} FROM ({self.source.format(where=where)}){group} ORDER BY {order}"
        return f"SELECT {columns} FROM {self.table} {where}{group} ORDER BY {order}"


MATRIX_CELL = "generation, strategy_id, i, j, avg(percentage) AS percentage, count(*) AS samples, count(*) FILTER (WHERE parse_status <> 'ok') AS failed"
"""A strategy matrix entry: mean donation percentage over the samples, their count and failures."""

DONATION_EVENT = (
    "generation, context, strategy_id, game, round, pair, donor, recipient, action, amount, percentage,"
    " donor_resources_before, donor_resources_after, parse_status, attempts, failed, decision_id"
)

SETTLED_WITHIN = 1e-3
"""A replicator trajectory has settled from the first step after which every agent's share stays
within this of its final share; the chart draws it to a little past that step."""

TRAJECTORY = Extra(
    "trajectories",
    "agent, step",
    "step, agent, share, settled, drawn_to, last",
    source=f"""WITH t AS (SELECT cell_id, agent, step, share, max(step) OVER (PARTITION BY cell_id) AS last,
                      last_value(share) OVER (PARTITION BY cell_id, agent ORDER BY step
                                              ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS final
               FROM trajectories {{where}}),
          s AS (SELECT *, coalesce(max(step) FILTER (WHERE abs(share - final) > {SETTLED_WITHIN}) OVER (PARTITION BY cell_id) + 1, 0) AS settled FROM t),
          d AS (SELECT *, least(last, settled + greatest(10, settled // 5)) AS drawn_to FROM s)
        SELECT * FROM d WHERE step <= drawn_to AND (step % greatest(1, (drawn_to + 99) // 100) = 0 OR step = drawn_to)""",
)
"""A cell's replicator trajectory up to ``drawn_to`` (the step it settled at, plus a fifth of that and at
least ten steps, for the flat tail; at most the last), at every ``⌈drawn_to / 100⌉``-th step (at most 101 steps) and ``drawn_to``."""

CHART_EXTRAS = {"trajectory"}
"""Page fields that feed a chart (:mod:`coopeval.explorer.charts`) instead of the cell's extras."""

EXTRAS: dict[str, dict[str, Extra]] = {
    "coopeval": {
        "scores": Extra("scores", "matchup_id, seat", "matchup_id, seat, agent, score, status"),
        "designs": Extra("designs", "seat, design_kind", "designer, agent, seat, design_kind, design, status"),
        "votes": Extra("votes", "matchup_id, voter_seat, option", "matchup_id, voter_seat, agent, option, approve"),
        "selections": Extra(
            "selections", "matchup_id, design_kind", "matchup_id, design_kind, selected_index, selected_designer, all_signed, design, details"
        ),
        "manifest": Extra("cells"),
        "trajectory": TRAJECTORY,
    },
    "gossip": {
        "rounds": Extra("gossip_rounds", "round, first_index, second_index"),
        "agents": Extra("gossip_agent_metrics", "agent"),
        "manifest": Extra("gossip_cells"),
    },
    "evolution": {
        "strategies": Extra("evo_strategies", "generation, rank NULLS LAST, agent_id"),
        "generations": Extra("evo_generations", "generation"),
        "invasions": Extra("invasion_tests", "generation, strategy_id"),
        "matrices": Extra("strategy_matrix", "generation, strategy_id, i, j", MATRIX_CELL, grouped=True),
        "events": Extra("evo_events", "generation, context, game, round, pair", DONATION_EVENT),
        "manifest": Extra("evolution_cells"),
    },
}
"""Study name → page field → its query."""


REBUILD = "the store was written by another coopeval version: explore it with that version, or rerun the study with this one"
"""What a reader is told to do about a table this explorer cannot read."""


def unreadable_extras(con: duckdb.DuckDBPyConnection, tables: set[str], missing: dict[str, list[str]]) -> dict[str, list[str]]:
    """Study name → its page tables whose columns differ from what :data:`EXTRAS` reads (a store
    written by another coopeval version), each as ``"<table> (<DuckDB's reason>)"``.

    Each extra of a study not in ``missing`` runs once with ``LIMIT 0`` (no rows read); studies
    without such a table are omitted. The build then leaves those studies' extras out, as for a
    missing table, instead of failing half-way.
    """
    out: dict[str, list[str]] = {}
    for study, fields in EXTRAS.items():
        if study in missing:
            continue
        for extra in fields.values():
            if extra.table not in tables:
                continue
            try:
                con.execute(f"{extra.sql(WHERE)} LIMIT 0", [[]])
            except duckdb.Error as exc:
                reason = str(exc).splitlines()[0].removeprefix("Binder Error: ")
                entry = f"{extra.table} ({reason})"
                if entry not in out.get(study, []):
                    out.setdefault(study, []).append(entry)
    return out
