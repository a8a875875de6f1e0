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


class Extra(NamedTuple):
    """One page field: rows of ``table`` (the columns ``select``, every column by default) in
    the order ``cell_id, <order>``; ``grouped`` adds ``GROUP BY ALL`` (``select`` aggregates)."""

    table: str
    order: str = ""
    select: str = "*"
    grouped: bool = False

    def sql(self, where: str) -> str:
        """The query of the cells ``where`` selects (a ``WHERE`` clause)."""
        columns = self.select if self.select == "*" else f"cell_id, {self.select}"
        group = " GROUP BY ALL" if self.grouped else ""
        order = f"cell_id, {self.order}" if self.order else "cell_id"
        return f"SELECT {columns} FROM {self.table} {where}{group} ORDER BY {order}"


MATRIX_CELL = "generation, strategy_id, i, j, avg(percentage) AS percentage, count(*) AS samples, count(*) FILTER (WHERE parse_status <> 'ok') AS failed"
"""A strategy matrix entry: mean donation percentage over the samples, their count and failures."""

DONATION_EVENT = (
    "generation, context, strategy_id, game, round, pair, donor, recipient, action, amount, percentage,"
    " donor_resources_before, donor_resources_after, parse_status, attempts, failed, decision_id"
)

EXTRAS: dict[str, dict[str, Extra]] = {
    "coopeval": {
        "scores": Extra("scores", "matchup_id, seat", "matchup_id, seat, agent, score, status"),
        "designs": Extra("designs", "seat, design_kind", "designer, agent, seat, design_kind, design, status"),
        "votes": Extra("votes", "matchup_id, voter_seat, option", "matchup_id, voter_seat, agent, option, approve"),
        "selections": Extra(
            "selections", "matchup_id, design_kind", "matchup_id, design_kind, selected_index, selected_designer, all_signed, design, details"
        ),
        "manifest": Extra("cells"),
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
