"""Store tables of the gossip study (issue 10 item 6; docs/protocol/gossip.md#storage).

``TABLES`` maps each table to its polars schema; importing this module registers them in
:data:`coopeval.core.schemas.SCHEMAS` (the registry the store reads). The study also returns rows
of the shared ``decisions`` and ``llm_calls`` tables with ``study`` = ``"gossip"``,
``mechanism`` = condition and ``game`` = testbed.

Identity columns of every gossip table: ``cell_id``, ``run`` (``r<replicate>``), ``testbed``
(donation | pd | trust | market), ``condition``, ``model`` (the population's agent name),
``replicate``, ``matching``.

``gossip_rounds`` uses generic roles: ``donor`` is the donor, PD player 1, investor or seller;
``recipient`` the recipient, PD player 2, responder or buyer. ``tone``/``message`` is the
recipient's assessment of the donor, ``partner_tone``/``partner_message`` the donor's assessment
of the recipient (PD, trust). Amounts are units; ``donation_ratio`` = cost / donor resources
before the round; ``*_index`` the agent's own 1-based interaction index.
"""

from __future__ import annotations

import polars as pl

from coopeval.core.schemas import register_tables

ID_COLUMNS: dict[str, pl.DataType] = {
    "cell_id": pl.String(),
    "run": pl.String(),
    "testbed": pl.String(),
    "condition": pl.String(),
    "model": pl.String(),
    "replicate": pl.Int64(),
    "matching": pl.String(),
}

_GOSSIP = {
    "tone": pl.String(),  # raw token; null without a message (or Max's empty tone)
    "tone_rank": pl.Int64(),  # +2 praising, 0 neutral, -1 mocking/complaint, -2 criticism
    "signal": pl.Int64(),  # 1/0 in binary conditions
    "message": pl.String(),
    "word_count": pl.Int64(),
    "over_word_limit": pl.Boolean(),  # > 150 words (flagged, not rejected)
}

TABLES: dict[str, dict[str, pl.DataType]] = {
    "gossip_rounds": {
        **ID_COLUMNS,
        "round": pl.Int64(),
        "donor": pl.String(),
        "recipient": pl.String(),
        "donor_kind": pl.String(),  # honest | max | attacker
        "recipient_kind": pl.String(),
        "donor_index": pl.Int64(),
        "recipient_index": pl.Int64(),
        "action": pl.String(),  # cooperate/defect, C/D, H/L (null in the trust game)
        "partner_action": pl.String(),  # PD player 2's action, market buyer's choice
        "amount": pl.Float64(),  # trust: investment I
        "partner_amount": pl.Float64(),  # trust: return R
        "cost": pl.Float64(),
        "benefit": pl.Float64(),
        "donation_ratio": pl.Float64(),
        "donor_reward": pl.Float64(),
        "recipient_reward": pl.Float64(),
        **_GOSSIP,
        **{f"partner_{k}": v for k, v in _GOSSIP.items()},
        "donor_action_justification": pl.String(),
        "recipient_action_justification": pl.String(),
        "recipient_gossip_justification": pl.String(),
        "donor_gossip_justification": pl.String(),
        "donor_resources": pl.Float64(),  # before the round
        "recipient_resources": pl.Float64(),
        "status": pl.String(),  # ok | failed_action | failed_gossip
    },
    "gossip_agent_metrics": {
        **ID_COLUMNS,
        "agent": pl.String(),
        "kind": pl.String(),  # honest | max | attacker
        "n_interactions": pl.Int64(),
        "n_voided": pl.Int64(),  # scheduled interactions voided by a failed action decision
        "n_actions": pl.Int64(),
        "cooperation_ratio": pl.Float64(),
        "image_score": pl.Float64(),
        "return": pl.Float64(),
        "reward_per_round": pl.Float64(),
        "discounted_return": pl.Float64(),
        "gini": pl.Float64(),  # the run's Gini (NaN when mean G <= 0)
    },
    "gossip_run_metrics": {
        **ID_COLUMNS,
        "gamma": pl.Float64(),
        "horizon": pl.String(),
        "n_agents": pl.Int64(),
        "n_rounds": pl.Int64(),
        "n_failed_rounds": pl.Int64(),
        **{f"{m}_{s}": pl.Float64() for m in ("cooperation_ratio", "image_score", "return", "reward_per_round", "discounted_return") for s in ("mean", "se")},
        **{f"n_valid_{m}": pl.Int64() for m in ("cooperation_ratio", "image_score", "return", "reward_per_round", "discounted_return")},
        "gini": pl.Float64(),
        "n_negative_returns": pl.Int64(),  # agents with discounted return < 0 (Gini may then leave [0, 1])
        "gini_out_of_range": pl.Boolean(),  # Gini defined and outside [0, 1]
        "deal_rate": pl.Float64(),
        **{f"share_{p}": pl.Float64() for p in ("Hc", "Hs", "Lc", "Ls")},
        **{f"deal_share_{p}": pl.Float64() for p in ("Hc", "Hs", "Lc", "Ls")},
        "welfare_per_round": pl.Float64(),
        "discounted_welfare": pl.Float64(),
        "honest_G_mean": pl.Float64(),
        "attacker_G_mean": pl.Float64(),
        "utility_gap": pl.Float64(),
        "coop_toward_attackers": pl.Float64(),
        "coop_toward_honest": pl.Float64(),
    },
}

register_tables(TABLES)


def frame(table: str, rows: list[dict[str, object]]) -> pl.DataFrame:
    """Rows conformed to ``TABLES[table]`` (missing columns null, extra columns dropped).

    Raises
    ------
    KeyError
        Unknown table.
    """
    schema = TABLES[table]
    if not rows:
        return pl.DataFrame(schema=schema)
    data = {name: [row.get(name) for row in rows] for name in schema}
    return pl.DataFrame(data, schema=schema, strict=False)
