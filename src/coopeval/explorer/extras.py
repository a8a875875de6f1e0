"""Per-cell data each study's pages show beside the decisions.

CoopEval: match-up scores, the Mediation/Contracting design, vote and signature steps
(docs/protocol); gossip: the round timeline with donor actions, tones and attacker roles and the
per-agent metrics (docs/studies/gossip.md); evolution: strategies with parent and rank (the
lineage), generations, invasion tests, the mean strategy matrices and the donation events
(docs/studies/evolution.md). Each entry is one query sorted by ``cell_id`` first, run once per
chunk of cells with ``{where}`` replaced by the chunk's filter (see
:class:`coopeval.explorer.queries.CellStream`); a table missing from the store contributes
nothing.
"""

from __future__ import annotations

EXTRAS: dict[str, dict[str, tuple[str, str]]] = {
    "coopeval": {
        "scores": ("scores", "SELECT cell_id, matchup_id, seat, agent, score, status FROM scores {where} ORDER BY cell_id, matchup_id, seat"),
        "designs": ("designs", "SELECT cell_id, designer, agent, seat, design_kind, design, status FROM designs {where} ORDER BY cell_id, seat, design_kind"),
        "votes": ("votes", "SELECT cell_id, matchup_id, voter_seat, agent, option, approve FROM votes {where} ORDER BY cell_id, matchup_id, voter_seat, option"),
        "selections": (
            "selections",
            "SELECT cell_id, matchup_id, design_kind, selected_index, selected_designer, all_signed, design, details"
            " FROM selections {where} ORDER BY cell_id, matchup_id, design_kind",
        ),
        "manifest": ("cells", "SELECT * FROM cells {where} ORDER BY cell_id"),
    },
    "gossip": {
        "rounds": ("gossip_rounds", "SELECT * FROM gossip_rounds {where} ORDER BY cell_id, round, donor_index, recipient_index"),
        "agents": ("gossip_agent_metrics", "SELECT * FROM gossip_agent_metrics {where} ORDER BY cell_id, agent"),
        "manifest": ("gossip_cells", "SELECT * FROM gossip_cells {where} ORDER BY cell_id"),
    },
    "evolution": {
        "strategies": ("evo_strategies", "SELECT * FROM evo_strategies {where} ORDER BY cell_id, generation, rank NULLS LAST, agent_id"),
        "generations": ("evo_generations", "SELECT * FROM evo_generations {where} ORDER BY cell_id, generation"),
        "invasions": ("invasion_tests", "SELECT * FROM invasion_tests {where} ORDER BY cell_id, generation, strategy_id"),
        "matrices": (
            "strategy_matrix",
            "SELECT cell_id, generation, strategy_id, i, j, avg(percentage) AS percentage, count(*) AS samples,"
            " count(*) FILTER (WHERE parse_status <> 'ok') AS failed"
            " FROM strategy_matrix {where} GROUP BY ALL ORDER BY cell_id, generation, strategy_id, i, j",
        ),
        "events": (
            "evo_events",
            "SELECT cell_id, generation, context, strategy_id, game, round, pair, donor, recipient, action, amount, percentage,"
            " donor_resources_before, donor_resources_after, parse_status, attempts, failed, decision_id"
            " FROM evo_events {where} ORDER BY cell_id, generation, context, game, round, pair",
        ),
        "manifest": ("evolution_cells", "SELECT * FROM evolution_cells {where} ORDER BY cell_id"),
    },
}
"""Study name → page field → (table, query giving the field's rows of the cells ``{where}``
selects, sorted by cell)."""
