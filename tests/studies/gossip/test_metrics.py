"""docs/protocol/gossip.md#metrics metrics with the spec's oracle values (full cooperation / full defection, align_sweep n = 9)."""

from __future__ import annotations

import math

import pytest

from coopeval.studies.gossip.metrics import (
    AgentEvent,
    agent_metrics,
    attack_metrics,
    discounted_return,
    gini,
    market_metrics,
    mean_se,
    run_metrics,
)
from coopeval.studies.gossip.names import AGENT_NAMES
from coopeval.studies.gossip.schedules import align_sweep
from coopeval.studies.gossip.testbeds import DonationGame, Market, PrisonersDilemma, TrustGame


def _events(action: str) -> list[AgentEvent]:
    game = DonationGame()
    names = AGENT_NAMES[:9]
    out = []
    for t, (d, r) in enumerate(align_sweep(9), start=1):
        dr, rr = game.payoff(action)
        coop = action == "cooperate"
        out.append(AgentEvent(names[d], t, "donor", names[r], dr, float(coop), 1 if coop else -1))
        out.append(AgentEvent(names[r], t, "recipient", names[d], rr))
    return out


def test_full_cooperation_oracle() -> None:
    rows = agent_metrics(_events("cooperate"), AGENT_NAMES[:9], 0.99)
    by = {r["agent"]: r for r in rows}
    for name in ("John", "Jack", "Luke", "Alice", "Charlie"):
        assert by[name]["discounted_return"] == pytest.approx(15.3346, abs=5e-5)
    for name in ("Kate", "Emma", "Mary", "Bob"):
        assert by[name]["discounted_return"] == pytest.approx(15.5675, abs=5e-5)
    for r in rows:
        assert r["return"] == 16
        assert r["reward_per_round"] == 2.0
        assert r["image_score"] == 4
        assert r["cooperation_ratio"] == 1.0
    run = run_metrics(rows)
    assert run["discounted_return_mean"] == pytest.approx(15.4381, abs=5e-5)
    assert run["gini"] == pytest.approx(0.0037, abs=5e-5)
    assert run["return_mean"] == 16 and run["return_se"] == 0


def test_full_defection_oracle() -> None:
    rows = agent_metrics(_events("defect"), AGENT_NAMES[:9], 0.99)
    assert all(r["discounted_return"] == 0 and r["image_score"] == -4 and r["cooperation_ratio"] == 0 for r in rows)
    assert math.isnan(run_metrics(rows)["gini"])


def test_gini_definition() -> None:
    assert gini([1.0, 1.0]) == 0
    assert gini([0.0, 2.0]) == pytest.approx(0.5)  # (|0-2|+|2-0|)/(2*4*1)
    assert math.isnan(gini([]))
    assert math.isnan(gini([-1.0, 0.5]))


def test_discounted_return_uses_own_index() -> None:
    assert discounted_return([1.0, 1.0], 0.5) == 1.5


def test_mean_se_ddof0() -> None:
    mean, se = mean_se([1.0, 3.0])
    assert mean == 2 and se == pytest.approx(1 / math.sqrt(2))


def test_payoffs() -> None:
    pd = PrisonersDilemma()
    assert [pd.payoff(a, b) for a, b in (("C", "C"), ("C", "D"), ("D", "C"), ("D", "D"))] == [
        (4, 4), (-1, 5), (5, -1), (0, 0),
    ]
    m = Market()
    assert [m.payoff(q, c) for q, c in (("H", "c"), ("H", "s"), ("L", "c"), ("L", "s"), ("L", "none"))] == [
        (2, 3), (0, 2), (3, 0), (1, 1), (0, 0),
    ]
    assert TrustGame().payoff(2.0, 3.0) == (1.0, 3.0)
    with pytest.raises(ValueError):
        TrustGame().payoff(1.0, 4.0)


def test_market_metrics() -> None:
    out = market_metrics([("H", "c", 2, 3), ("L", "none", 0, 0)], 0.5)
    assert out["deal_rate"] == 0.5
    assert out["share_Hc"] == 0.5 and out["deal_share_Hc"] == 1.0
    assert out["welfare_per_round"] == 2.5
    assert out["discounted_welfare"] == 5.0


def test_attack_metrics() -> None:
    events = [
        AgentEvent("A", 1, "donor", "X", -1, 1.0, 1),
        AgentEvent("X", 1, "recipient", "A", 5),
        AgentEvent("A", 2, "donor", "B", 0, 0.0, -1),
        AgentEvent("B", 2, "recipient", "A", 0),
    ]
    rows = agent_metrics(events, ["A", "B", "X"], 1.0)
    out = attack_metrics(rows, events, ["X"])
    assert out["coop_toward_attackers"] == 1.0 and out["coop_toward_honest"] == 0.0
    assert out["attacker_G_mean"] == 5 and out["honest_G_mean"] == -0.5
    assert out["utility_gap"] == -5.5


def test_a_voided_interaction_counts_in_the_discount_index_only() -> None:
    """Rewards 4 (round 1), voided (round 3), −1 (round 5): G = 4 + 0.99·0 + 0.99²·(−1) = 3.0199;
    return 3 and reward per round 1.5 over the two interactions played."""
    events = [
        AgentEvent("A", 1, "donor", "B", 4.0, 1.0, 1),
        AgentEvent("A", 3, "voided", "C", 0.0, voided=True),
        AgentEvent("A", 5, "recipient", "B", -1.0),
    ]
    (row,) = agent_metrics(events, ["A"], 0.99)
    assert row["discounted_return"] == pytest.approx(3.0199, abs=1e-12)
    assert (row["n_interactions"], row["n_voided"], row["n_actions"]) == (2, 1, 1)
    assert row["return"] == 3.0 and row["reward_per_round"] == 1.5
    assert row["cooperation_ratio"] == 1.0 and row["image_score"] == 1.0
