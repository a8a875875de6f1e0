"""Contracting transcripts (docs/protocol/mechanisms.md#contracting): scripted bots in; contracts, votes, signatures,
activation, post-contract and base payoffs out, with hand-computed values."""

from __future__ import annotations

import json
from typing import Any

import polars as pl
import pytest

from coopeval.agents.bots import AlwaysDefect, Bot, make_bot
from coopeval.core.prompts import PromptLibrary
from coopeval.decisions.reask import MAX_ATTEMPTS
from coopeval.games import get_game
from coopeval.games.designs import contract_ns, contract_wd
from coopeval.studies.coopeval.mechanisms.contracting import (
    contract_adjustments,
    contract_points,
    enforcing_contract,
    seat_list,
)
from coopeval.studies.coopeval.parse import matchup_scores
from tests.shared_data import PROMPTS_DIR
from tests.studies.coopeval.mechanisms.design_vote_helpers import (
    bots,
    moves,
    play_design_cell,
    selection,
)


class SignThenDefect(AlwaysDefect):
    """Test bot: proposes, approves and signs the enforcing contract, then defects anyway."""

    bot_name = "sign-then-defect"
    cooperative = True  # approves and signs; its action stays the baseline (defect)


def play(roster: list[Bot], game: str, seed: int = 42, compat: dict[str, Any] | None = None) -> dict[str, pl.DataFrame]:
    return play_design_cell("Contracting", roster, game, seed, compat)


def prompt(tables: dict[str, pl.DataFrame], mid: str, kind: str, seat: int) -> str:
    calls = tables["llm_calls"].filter((pl.col("matchup_id") == mid) & (pl.col("kind") == kind) & (pl.col("seat") == seat))
    return str(json.loads(calls["prompt"][0])[0]["content"])


# ------------------------------------------------------------------------------------------------
# The enforcing contract: the smallest penalty (or bonus) making cooperation weakly dominant


@pytest.mark.parametrize(
    ("game", "contract", "weaker"),
    [
        # PD with penalty p on D: vs C 2 ≥ 3 − p, vs D p ≥ 1, strict somewhere → p = 2 (p = 1 ties both).
        ("prisoners_dilemma", {"A0": 0, "A1": -2}, {"A0": 0, "A1": -1}),
        # PG: switching C → F gains 0.5 base and costs p → p = 1.
        ("public_goods", {"A0": 0, "A1": -1}, {"A0": 0, "A1": 0}),
        # TD: vs a claim of 4, claiming 5 pays 2 + p, claiming 3 pays 5 → p = 3.
        ("travellers_dilemma", {"A0": -3, "A1": -3, "A2": -3, "A3": 0}, {"A0": -2, "A1": -2, "A2": -2, "A3": 0}),
        # Trust: the trustee keeping against Give gets 20 − p ≤ 10 → p = 10.
        ("trust_game", {"A0": 0, "A1": -10}, {"A0": 0, "A1": -9}),
        # Stag Hunt: stag vs hare pays p, hare vs hare 3 → p = 3.
        ("stag_hunt", {"A0": 0, "A1": -3}, {"A0": 0, "A1": -2}),
        ("matching_pennies", {"A0": 0, "A1": -2}, {"A0": 0, "A1": -1}),
    ],
)
def test_enforcing_contract(game: str, contract: dict[str, int], weaker: dict[str, int]) -> None:
    g = get_game(game)
    assert enforcing_contract(g) == contract
    assert contract_ns(g, contract) and contract_wd(g, contract)
    assert not contract_wd(g, weaker)


def test_enforcing_contract_respects_bounds() -> None:
    trust = get_game("trust_game")
    # Penalty −10 is out of bounds; the bonus +10 on Give is the first WD contract inside.
    assert enforcing_contract(trust, (-5, 10)) == {"A0": 10, "A1": 0}
    # Nothing WD within ±5: the first NS contract (value 0 is not NS in the Trust Game).
    with pytest.raises(ValueError):
        enforcing_contract(trust, (-5, 5))
    assert enforcing_contract(get_game("stag_hunt"), (-2, 2)) == {"A0": 0, "A1": 0}  # (S, S) is already NS


def test_transfers_are_zero_sum() -> None:
    pd, pg = get_game("prisoners_dilemma"), get_game("public_goods")
    # PD {C: 0, D: −2}; (C, D): the defector pays 2 to the cooperator: (0, 3) → (2, 1).
    assert contract_points(pd, {"A0": 0, "A1": -2}, True, [0, 1]) == ([0, 1], [2.0, 1.0], [0.0, 3.0], [False, False])
    assert contract_points(pd, {"A0": 0, "A1": -2}, False, [0, 1])[1] == [0.0, 3.0]  # inactive
    # PG {C: 1, F: −2}; (C, C, F): base (1, 1, 2). Seat 1 gets +1, seats 2, 3 pay 0.5; same for
    # seat 2; seat 3 pays 2, seats 1, 2 get 1 each. Net: (+1 −0.5 +1, −0.5 +1 +1, −0.5 −0.5 −2).
    adj = contract_adjustments(pg, {"A0": 1, "A1": -2}, [0, 0, 1])
    assert adj == [1.5, 1.5, -3.0] and sum(adj) == 0.0
    assert contract_points(pg, {"A0": 1, "A1": -2}, True, [0, 0, 1])[1] == [2.5, 2.5, -1.0]


def test_seat_list() -> None:
    prompts = PromptLibrary(PROMPTS_DIR)
    assert seat_list(prompts, [2]) == "Player 2"
    assert seat_list(prompts, [1, 3]) == "Players 1 and 3"
    assert seat_list(prompts, [1, 2, 3]) == "Players 1, 2 and 3"


# ------------------------------------------------------------------------------------------------
# Transcripts


def test_active_prisoners_dilemma_contract_with_exact_transfers() -> None:
    tables = play([make_bot("always-cooperate"), SignThenDefect()], "prisoners_dilemma")
    mid = "bot/always-cooperate|bot/sign-then-defect"
    sel = selection(tables, mid)
    assert sel["design"] == {"A0": 0, "A1": -2}
    assert sel["approvals"] == [2, 2] and sel["tied_options"] == [1, 2]
    assert sel["signatures"] == [True, True] and sel["all_signed"] and sel["active"] and sel["rejecting_seats"] == []
    m = moves(tables, mid)
    # (C, D): base (0, 3); the defector pays 2 to the cooperator → (2, 1).
    assert m["action_token"].to_list() == ["A0", "A1"]
    assert m["base_points"].to_list() == [0.0, 3.0]
    assert m["points"].to_list() == [2.0, 1.0]
    assert m["mediated"].to_list() == [False, False]
    # (D, D): each pays 2 to the other → unchanged (1, 1); (C, C): no payment (2, 2).
    assert moves(tables, "bot/sign-then-defect|bot/sign-then-defect")["points"].to_list() == [1.0, 1.0]
    assert moves(tables, "bot/always-cooperate|bot/always-cooperate")["points"].to_list() == [2.0, 2.0]
    text = prompt(tables, mid, "action", 2)
    assert "a contract is in force, because every player signed it" in text
    assert "- A1 (Defect): the player who plays it pays 2 points, which go to the other player" in text
    scores = matchup_scores(tables["decisions"], tables["matchups"]).filter(pl.col("matchup_id") == mid).sort("seat")
    assert scores["score"].to_list() == [2.0, 1.0]  # post-contract points


def test_refused_contract_is_inactive_and_pays_base_payoffs() -> None:
    tables = play(bots("always-cooperate", "always-defect"), "prisoners_dilemma")
    mid = "bot/always-cooperate|bot/always-defect"
    sel = selection(tables, mid)
    assert sel["approvals"] == [1, 1]  # only the cooperator approves (both options are enforcing)
    assert sel["signatures"] == [True, False] and not sel["all_signed"] and not sel["active"]
    assert sel["rejecting_seats"] == [2]
    signs = tables["decisions"].filter((pl.col("matchup_id") == mid) & (pl.col("kind") == "sign")).sort("seat")
    assert signs["parsed"].to_list() == [json.dumps({"sign": True}), json.dumps({"sign": False})]
    m = moves(tables, mid)
    assert m["action_token"].to_list() == ["A0", "A1"]
    assert m["points"].to_list() == [0.0, 3.0] and m["base_points"].to_list() == [0.0, 3.0]
    text = prompt(tables, mid, "action", 1)
    assert "It is not in force, because Player 2 did not sign it." in text
    assert "the original game is played unchanged" in text


def test_public_goods_contract_three_players() -> None:
    tables = play([make_bot("always-cooperate"), SignThenDefect()], "public_goods")
    mid = "bot/always-cooperate|bot/always-cooperate|bot/sign-then-defect"
    sel = selection(tables, mid)
    assert sel["design"] == {"A0": 0, "A1": -1} and sel["active"]
    m = moves(tables, mid)
    # (C, C, F): base (1, 1, 2); the free-rider pays 1, 0.5 to each contributor → (1.5, 1.5, 1).
    assert m["base_points"].to_list() == [1.0, 1.0, 2.0]
    assert m["points"].to_list() == [1.5, 1.5, 1.0]
    design_call = tables["llm_calls"].filter((pl.col("kind") == "contract_design") & (pl.col("seat") == 1))
    text = json.loads(design_call["prompt"][0])[0]["content"]
    assert "paid in equal shares by the other players" in text and "on a single line" in text


def test_plural_wording_compat_flag() -> None:
    singular = play(bots("always-cooperate"), "prisoners_dilemma")
    plural = play(bots("always-cooperate"), "prisoners_dilemma", compat={"contract_plural_text": True})
    mid = "bot/always-cooperate|bot/always-cooperate"
    assert "which go to the other player;" in prompt(singular, mid, "sign", 1)
    assert "shared equally among the other players;" in prompt(plural, mid, "sign", 1)


def test_call_counts() -> None:
    s = 3
    for game, n in (("prisoners_dilemma", 2), ("public_goods", 3)):
        tables = play(bots("always-cooperate", "tit-for-tat", "always-defect"), game)
        kinds = tables["decisions"].group_by("kind").len().sort("kind")
        counts = dict(zip(kinds["kind"].to_list(), kinds["len"].to_list(), strict=True))
        matchups = s**n
        assert counts == {
            "contract_design": s * n,  # one design per seated agent
            "contract_vote": n * matchups,  # N votes per matchup
            "sign": n * matchups,  # N signatures per matchup
            "action": n * matchups,
        }
        assert tables["llm_calls"].height == s * n + 3 * n * matchups
        # Active iff nobody in the matchup is the defector: 2^N of 3^N matchups.
        active = sum(json.loads(p)["active"] for p in tables["selections"]["details"])
        assert active == 2**n


# ------------------------------------------------------------------------------------------------
# Failures


def test_malformed_bot_reasks_then_fails_its_votes() -> None:
    tables = play(bots("always-cooperate", "malformed"), "prisoners_dilemma")
    designs = tables["designs"].sort("designer")
    # The malformed bot's second answer {"A0": 50, "A1": 40} is a valid contract (one re-ask).
    assert designs["status"].to_list() == ["ok"] * 4
    assert designs["design"].to_list()[2:] == [json.dumps({"A0": 50, "A1": 40})] * 2
    d = tables["decisions"]
    malformed_designs = d.filter((pl.col("kind") == "contract_design") & (pl.col("agent") == "bot/malformed"))
    assert malformed_designs["n_attempts"].to_list() == [2, 2]
    # Its votes never validate: failed after every attempt, never defaulted.
    failed = d.filter(pl.col("status") == "failed")
    assert set(failed["kind"].to_list()) == {"contract_vote"} and failed.height == 4  # (C,M), (M,C), (M,M)×2
    assert set(failed["n_attempts"].to_list()) == {MAX_ATTEMPTS} and failed["parsed"].null_count() == 4
    # A failed vote fails only its matchup: no selection, signature or action there.
    status = dict(zip(tables["matchups"]["matchup_id"], tables["matchups"]["status"], strict=True))
    assert status["bot/always-cooperate|bot/always-cooperate"] == "complete"
    assert sorted(k for k, v in status.items() if v == "failed") == [
        "bot/always-cooperate|bot/malformed", "bot/malformed|bot/always-cooperate", "bot/malformed|bot/malformed"
    ]
    later = d.filter(pl.col("kind").is_in(["sign", "action"]))
    assert set(later["matchup_id"].to_list()) == {"bot/always-cooperate|bot/always-cooperate"}
    assert tables["selections"]["matchup_id"].to_list() == ["bot/always-cooperate|bot/always-cooperate"]
    # Valid votes are stored even in a failed matchup (the cooperator's, voter × option rows).
    votes = tables["votes"].filter(pl.col("matchup_id") == "bot/always-cooperate|bot/malformed").sort("option")
    assert votes["voter_seat"].to_list() == [1, 1] and votes["approve"].to_list() == [True, False]
