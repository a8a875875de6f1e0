"""Metrics of one run, exactly as docs/protocol/gossip.md#metrics (and the attack metrics of docs/protocol/gossip.md#greedy-defector, #collusive-attackers).

The unit of account is the **interaction event**: one agent's part in one round, in round order.
For agent i, ``r_i^(k)``, k = 0..K_i − 1, are its rewards in the order of its *own* interactions
in both roles (k is not the global round), and its donor turns carry a cooperation value.

Formulas (docs/protocol/gossip.md#metrics):

* cooperation ratio = #C / |D_i| over the donor turns (PD: over all actions; trust game: the mean
  invested share I / resources over investor turns; market: share of H for sellers, of c for
  buyers). NaN when the agent had no donor turn.
* image score = #C − #D over the same turns (range [−4, 4] for n = 9); NaN for the trust game.
* return = Σ_k r_i^(k) (= resources_end − resources_start).
* reward per round = mean_k r_i^(k) ((b − c)/2 = 2.0 under full cooperation).
* discounted return G_i = Σ_k γ^k r_i^(k). A round voided by a failed action decision is one
  of both agents' interactions with reward 0 (a *voided* event): it keeps the index k of every
  later reward where the schedule put it, instead of moving later rewards one discount step
  earlier (docs/protocol/gossip.md#metrics).
* Gini of G = (1/(2 n² μ)) Σ_i Σ_j |G_i − G_j| with the i = j pairs included, μ = mean_i G_i;
  **NaN when μ ≤ 0** (all-defect gives 0/0). With some negative G_i and μ > 0 the formula
  exceeds 1 (e.g. 3.6): the value is kept and flagged (``gini_out_of_range``), never clipped.
* run aggregation: mean over agents and standard error std(ddof = 0)/√n over the agents whose
  value is defined; ``n_valid_<metric>`` counts them (it differs from ``n_agents`` when some
  agent had no donor turn), ``n_negative_returns`` counts agents with G_i < 0 (issue 25 kind 7).
* failed rounds (:func:`round_failures`): per run and per agent, a round whose action or
  assessment failed every attempt; a run whose every round failed is flagged
  (``all_rounds_failed``) and left out of the cross-run means (:mod:`.summary`).
* market: deal rate, pair shares (unconditional and given a deal), welfare per round and
  discounted welfare over the *global* round index.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

NAN = float("nan")


@dataclass(frozen=True)
class AgentEvent:
    """One agent's part in one round.

    Attributes
    ----------
    agent:
        The agent's name.
    round:
        Global 1-based round.
    role:
        ``donor`` / ``recipient`` (donation), ``player`` (PD), ``investor`` / ``responder``
        (trust), ``seller`` / ``buyer`` (market).
    partner:
        The other agent of the round.
    reward:
        Immediate reward of this interaction (units).
    cooperation:
        1.0 cooperate / 0.0 defect for an action turn (trust: I / resources), None for a turn
        without an own action (recipient, responder).
    image:
        +1 for C, −1 for D on an action turn; None otherwise (and in the trust game).
    voided:
        True for a scheduled interaction voided by a failed action decision (reward 0, no
        cooperation value): it counts in the discount index and in ``n_voided`` only.
    """

    agent: str
    round: int
    role: str
    partner: str
    reward: float
    cooperation: float | None = None
    image: int | None = None
    voided: bool = False


def discounted_return(rewards: Sequence[float], gamma: float) -> float:
    """G = Σ_{k=0}^{K−1} γ^k r^(k) over the agent's own interaction index (docs/protocol/gossip.md#metrics)."""
    return float(sum(gamma**k * r for k, r in enumerate(rewards)))


def gini(values: Sequence[float]) -> float:
    """Gini of discounted returns, (1/(2n²μ)) Σ_i Σ_j |G_i − G_j| (docs/protocol/gossip.md#metrics).

    Returns NaN for an empty input or when the mean μ ≤ 0 (all-defect gives 0/0; the paper's
    "0.00" for such rows contradicts the formula, docs/protocol/gossip.md#published-numbers).
    """
    arr = np.asarray(values, dtype=float)
    if arr.size == 0:
        return NAN
    mu = float(arr.mean())
    if not mu > 0:
        return NAN
    diff = np.abs(arr[:, None] - arr[None, :]).sum()
    return float(diff / (2 * arr.size**2 * mu))


def mean_se(values: Iterable[float]) -> tuple[float, float]:
    """(mean, standard error std(ddof = 0)/√n) over the finite values; (NaN, NaN) if none."""
    arr = np.asarray([v for v in values if v is not None and math.isfinite(v)], dtype=float)
    if arr.size == 0:
        return NAN, NAN
    return float(arr.mean()), float(arr.std(ddof=0) / math.sqrt(arr.size))


def agent_metrics(events: Sequence[AgentEvent], agents: Sequence[str], gamma: float) -> list[dict[str, float | int | str]]:
    """Per-agent docs/protocol/gossip.md#metrics metrics from the run's events (in round order).

    Returns
    -------
    One dict per agent in ``agents`` order with ``agent``, ``n_interactions`` (interactions
    played), ``n_voided`` (scheduled interactions voided by a failed action), ``n_actions``,
    ``cooperation_ratio``, ``image_score``, ``return``, ``reward_per_round`` (over the
    interactions played) and ``discounted_return`` (over every scheduled interaction, a voided
    one with reward 0, so that k stays the agent's own interaction index) — NaN where
    undefined: no interactions, no action turns.
    """
    rows: list[dict[str, float | int | str]] = []
    ordered = sorted(events, key=lambda e: e.round)
    for name in agents:
        scheduled = [e for e in ordered if e.agent == name]
        own = [e for e in scheduled if not e.voided]
        rewards = [e.reward for e in own]
        coop = [e.cooperation for e in own if e.cooperation is not None]
        image = [e.image for e in own if e.image is not None]
        rows.append(
            {
                "agent": name,
                "n_interactions": len(own),
                "n_voided": len(scheduled) - len(own),
                "n_actions": len(coop),
                "cooperation_ratio": float(np.mean(coop)) if coop else NAN,
                "image_score": float(sum(image)) if image else NAN,
                "return": float(sum(rewards)),
                "reward_per_round": float(np.mean(rewards)) if rewards else NAN,
                "discounted_return": discounted_return([e.reward for e in scheduled], gamma),
            }
        )
    return rows


RUN_METRICS = ("cooperation_ratio", "image_score", "return", "reward_per_round", "discounted_return")


def gini_out_of_range(value: float) -> bool:
    """True for a defined Gini outside [0, 1] (negative discounted returns with μ > 0); NaN is
    not out of range (it is undefined, counted separately)."""
    return math.isfinite(value) and not 0.0 <= value <= 1.0


def run_metrics(rows: Sequence[Mapping[str, float | int | str]]) -> dict[str, float]:
    """Run-level summary: ``<metric>_mean`` and ``<metric>_se`` over agents and
    ``n_valid_<metric>`` (agents whose value is finite) for every metric of
    :data:`RUN_METRICS`, ``gini`` of the discounted returns (docs/protocol/gossip.md#metrics),
    and the domain diagnostics ``n_negative_returns`` (agents with G < 0) and
    ``gini_out_of_range`` (True if the Gini is defined and outside [0, 1])."""
    out: dict[str, float] = {}
    for metric in RUN_METRICS:
        values = [float(r[metric]) for r in rows]
        mean, se = mean_se(values)
        out[f"{metric}_mean"] = mean
        out[f"{metric}_se"] = se
        out[f"n_valid_{metric}"] = sum(1 for v in values if math.isfinite(v))
    returns = [float(r["discounted_return"]) for r in rows]
    out["gini"] = gini(returns)
    out["n_negative_returns"] = sum(1 for v in returns if v < 0)
    out["gini_out_of_range"] = gini_out_of_range(out["gini"])
    return out


FAILED_ROUND_STATUSES = ("failed_action", "failed_gossip")
"""``gossip_rounds.status`` values of a failed round: an action decision failed every attempt
(the round is voided) or a witness's assessment did (the payoffs stand, the message is missing;
docs/protocol/gossip.md#parsing-and-failures)."""


def round_failures(rounds: Sequence[Mapping[str, object]], agents: Sequence[str]) -> tuple[dict[str, int | bool], dict[str, int]]:
    """Failed rounds of one run, counted per run and per agent (issue 36 item 3).

    Parameters
    ----------
    rounds:
        The run's ``gossip_rounds`` rows (``status``, ``first_agent``, ``second_agent``).
    agents:
        The run's agents.

    Returns
    -------
    (run, per_agent)
        ``run``: ``n_failed_rounds`` (every round whose status is in
        :data:`FAILED_ROUND_STATUSES`), ``n_failed_action_rounds``, ``n_failed_gossip_rounds``
        and ``all_rounds_failed`` (the run has rounds and every one failed: its metrics do not
        measure its condition, so the cross-run means leave it out); ``per_agent``: agent →
        failed rounds it took part in, either side.
    """
    failed = [r for r in rounds if r["status"] in FAILED_ROUND_STATUSES]
    per_agent = dict.fromkeys(agents, 0)
    for r in failed:
        for side in ("first_agent", "second_agent"):
            per_agent[str(r[side])] = per_agent.get(str(r[side]), 0) + 1
    run: dict[str, int | bool] = {
        "n_failed_rounds": len(failed),
        "n_failed_action_rounds": sum(1 for r in failed if r["status"] == "failed_action"),
        "n_failed_gossip_rounds": sum(1 for r in failed if r["status"] == "failed_gossip"),
        "all_rounds_failed": bool(rounds) and len(failed) == len(rounds),
    }
    return run, per_agent


def market_metrics(
    outcomes: Sequence[tuple[str, str, float, float]], gamma: float
) -> dict[str, float]:
    """Market extras (docs/protocol/gossip.md#metrics) from ``(quality, choice, seller reward, buyer reward)`` per round.

    Returns ``deal_rate`` (share of rounds with choice ≠ none), ``share_<Q><c>`` for Hc, Hs, Lc,
    Ls over all rounds, ``deal_share_<Q><c>`` given a deal (NaN without deals),
    ``welfare_per_round`` = mean(seller + buyer reward) and ``discounted_welfare`` =
    Σ_t γ^(t−1)(seller + buyer reward) over the global round t = 1..T.
    """
    total = len(outcomes)
    out: dict[str, float] = {}
    deals = [o for o in outcomes if o[1] != "none"]
    out["deal_rate"] = len(deals) / total if total else NAN
    for pair in ("Hc", "Hs", "Lc", "Ls"):
        hits = sum(1 for q, c, _, _ in outcomes if q + c == pair)
        out[f"share_{pair}"] = hits / total if total else NAN
        out[f"deal_share_{pair}"] = hits / len(deals) if deals else NAN
    welfare = [s + b for _, _, s, b in outcomes]
    out["welfare_per_round"] = float(np.mean(welfare)) if welfare else NAN
    out["discounted_welfare"] = discounted_return(welfare, gamma)
    return out


def attack_metrics(
    rows: Sequence[Mapping[str, float | int | str]],
    events: Sequence[AgentEvent],
    attackers: Sequence[str],
) -> dict[str, float]:
    """Attack metrics (docs/protocol/gossip.md#greedy-defector, #collusive-attackers): honest vs attacker discounted returns and cooperation.

    Returns ``honest_G_mean``, ``attacker_G_mean``, ``utility_gap`` (honest − attacker),
    ``coop_toward_attackers`` and ``coop_toward_honest`` (mean cooperation of honest agents'
    action turns whose partner is an attacker / an honest agent; NaN where no such turn).
    """
    bad = set(attackers)
    honest_g = [float(r["discounted_return"]) for r in rows if r["agent"] not in bad]
    attacker_g = [float(r["discounted_return"]) for r in rows if r["agent"] in bad]
    honest_mean = float(np.mean(honest_g)) if honest_g else NAN
    attacker_mean = float(np.mean(attacker_g)) if attacker_g else NAN
    toward_bad = [e.cooperation for e in events if e.agent not in bad and e.partner in bad and e.cooperation is not None]
    toward_good = [e.cooperation for e in events if e.agent not in bad and e.partner not in bad and e.cooperation is not None]
    return {
        "honest_G_mean": honest_mean,
        "attacker_G_mean": attacker_mean,
        "utility_gap": honest_mean - attacker_mean,
        "coop_toward_attackers": float(np.mean(toward_bad)) if toward_bad else NAN,
        "coop_toward_honest": float(np.mean(toward_good)) if toward_good else NAN,
    }
