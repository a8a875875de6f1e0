"""Store tables of the gossip study (issue 10 item 6; docs/protocol/gossip.md#storage).

``TABLES`` maps each table to its polars schema; importing this module registers them in
:data:`coopeval.core.schemas.SCHEMAS` (the registry the store reads). The study also returns rows
of the shared ``decisions`` and ``llm_calls`` tables with ``study`` = ``"gossip"``,
``mechanism`` = condition and ``game`` = testbed.

Identity columns of every gossip table: ``cell_id``, ``run`` (``r<replicate>``), ``testbed``
(donation | pd | trust | market), ``condition``, ``model`` (the population's agent name),
``replicate``, ``matching``.

``gossip_rounds`` names the two agents of a round by position, never by a role they may not
hold: ``first_agent`` and ``second_agent``, whose roles ``first_role`` and ``second_role`` hold
as the testbed declares them (:attr:`~coopeval.studies.gossip.testbeds.TestbedEntry.roles`:
donor/recipient; player_1/player_2, who move at the same time; investor/trustee; seller/buyer).
Every ``first_*`` column belongs to the first agent and every ``second_*`` column to the second:
its kind, 1-based interaction index, action (``first_action``: cooperate/defect, C/D, H/L, null
in the trust game; ``second_action``: PD player 2's C/D, the market buyer's choice), amount
(trust: ``first_amount`` the investment I, ``second_amount`` the return R), reward, resources
before the round, justifications, and the assessment it published about the other
(``second_tone``/``second_message``…: the recipient's, player 2's, trustee's or buyer's
assessment of the first agent; ``first_tone``…: the donor-side assessment in PD and trust).
``cost``, ``benefit`` and ``donation_ratio`` (= cost / first agent's resources before the
round) describe the first agent's gift. Amounts are units.

The store also holds one view per testbed, ``gossip_<testbed>_rounds`` (:data:`VIEWS`), with that
testbed's rows and the columns named by role: ``first_agent`` becomes ``donor``, ``first_reward``
``donor_reward``, ``second_tone`` ``recipient_tone`` and so on (``seller``/``buyer`` in the
market, ``investor``/``trustee`` in the trust game, ``player_1``/``player_2`` in the PD).
"""

from __future__ import annotations

import polars as pl

from coopeval.core.schemas import StoreView, register_tables, register_views
from coopeval.studies.gossip.testbeds import TESTBEDS, testbed_entry

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

_FIRST, _SECOND = "first", "second"

ROUND_COLUMNS: dict[str, pl.DataType] = {
    "round": pl.Int64(),
    "first_role": pl.String(),  # donor | player_1 | investor | seller
    "second_role": pl.String(),  # recipient | player_2 | trustee | buyer
    "first_agent": pl.String(),
    "second_agent": pl.String(),
    "first_kind": pl.String(),  # honest | max | attacker
    "second_kind": pl.String(),
    "first_index": pl.Int64(),
    "second_index": pl.Int64(),
    "first_action": pl.String(),  # cooperate/defect, C/D, H/L (null in the trust game)
    "second_action": pl.String(),  # PD player 2's action, market buyer's choice
    "first_amount": pl.Float64(),  # trust: investment I
    "second_amount": pl.Float64(),  # trust: return R
    "cost": pl.Float64(),
    "benefit": pl.Float64(),
    "donation_ratio": pl.Float64(),
    "first_reward": pl.Float64(),
    "second_reward": pl.Float64(),
    **{f"second_{k}": v for k, v in _GOSSIP.items()},  # the second agent's assessment of the first
    **{f"first_{k}": v for k, v in _GOSSIP.items()},  # the first agent's assessment of the second
    "first_action_justification": pl.String(),
    "second_action_justification": pl.String(),
    "second_gossip_justification": pl.String(),
    "first_gossip_justification": pl.String(),
    "first_resources": pl.Float64(),  # before the round
    "second_resources": pl.Float64(),
    "status": pl.String(),  # ok | failed_action | failed_gossip
}
"""The columns of ``gossip_rounds`` after the identity columns."""

TABLES: dict[str, dict[str, pl.DataType]] = {
    "gossip_rounds": {**ID_COLUMNS, **ROUND_COLUMNS},
    "gossip_agent_metrics": {
        **ID_COLUMNS,
        "agent": pl.String(),
        "kind": pl.String(),  # honest | max | attacker
        "n_interactions": pl.Int64(),
        "n_voided": pl.Int64(),  # scheduled interactions voided by a failed action decision
        "n_failed_rounds": pl.Int64(),  # rounds the agent took part in whose action or assessment failed
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
        "n_failed_rounds": pl.Int64(),  # rounds whose action or assessment failed every attempt
        "n_failed_action_rounds": pl.Int64(),  # of them: voided by a failed action
        "n_failed_gossip_rounds": pl.Int64(),  # of them: payoffs kept, an assessment missing
        "all_rounds_failed": pl.Boolean(),  # every round failed: left out of the cross-run means
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


def role_column(column: str, roles: tuple[str, str]) -> str:
    """The name of a ``gossip_rounds`` column in a testbed's view, whose two agents are
    ``roles`` (first, second): ``first_agent`` → the first role, ``first_<x>`` → ``<role>_<x>``
    (``second_`` likewise); other columns keep their name.

    >>> role_column("first_reward", ("seller", "buyer")), role_column("second_agent", ("seller", "buyer"))
    ('seller_reward', 'buyer')
    """
    for position, role in zip((_FIRST, _SECOND), roles, strict=True):
        if column == f"{position}_agent":
            return role
        if column.startswith(f"{position}_"):
            return role + column.removeprefix(position)
    return column


def rounds_view(key: str) -> StoreView:
    """The store view of testbed ``key``'s rounds (``gossip_<key>_rounds``): its rows of
    ``gossip_rounds``, every column but ``first_role``/``second_role`` renamed by
    :func:`role_column` with the testbed's roles.

    Raises
    ------
    ValueError
        Unknown testbed (naming the known ones), or a role whose name would make two view
        columns alike (e.g. a role called ``round``).
    """
    roles = testbed_entry(key).roles
    sources = [c for c in TABLES["gossip_rounds"] if c not in ("first_role", "second_role")]
    columns = {role_column(c, roles): c for c in sources}
    if len(columns) != len(sources):
        raise ValueError(f"testbed {key!r}: its roles {roles} rename two gossip_rounds columns alike; give the stage game other role names")
    return StoreView("gossip_rounds", columns, ("testbed", key))


VIEWS: dict[str, StoreView] = {f"gossip_{key}_rounds": rounds_view(key) for key in TESTBEDS}
"""One store view per testbed, its rounds with role-named columns (``gossip_donation_rounds``:
donor, recipient, donor_reward …; ``gossip_pd_rounds``: player_1, player_2 …;
``gossip_trust_rounds``: investor, trustee …; ``gossip_market_rounds``: seller, buyer …)."""

register_views(VIEWS)


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
