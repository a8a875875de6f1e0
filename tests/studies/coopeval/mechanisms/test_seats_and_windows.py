"""Each seat its own agent (issue 13 kind 9) and bots see only the prompt's window (kind 12a)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, ClassVar

import polars as pl
import pytest

from coopeval.agents.bots import Bot, TitForTat, pure
from coopeval.agents.protocol import DecisionRequest, Reply
from coopeval.decisions.formats import ActionDistribution, AnswerFormat
from coopeval.studies.coopeval.mechanisms.catalog import MECHANISM_ORDER
from tests.helpers import play_bots


class FirstCallCooperates(Bot):
    """Stateful: cooperates on the first action it is ever asked for, defects after."""

    bot_name = "first-call"

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        self.asked += 1
        return pure(fmt, int(state["cooperative_action" if self.asked == 1 else "baseline_action"]))


class DefectFirst(Bot):
    """Defects when it is shown no history, cooperates otherwise."""

    bot_name = "defect-first"

    def action(self, fmt: AnswerFormat, state: Mapping[str, Any]) -> dict[str, int]:
        return pure(fmt, int(state["cooperative_action" if state.get("history") else "baseline_action"]))


class Recorder(TitForTat):
    """Tit-for-tat that records, for every action decision, the prompt and the bot state."""

    bot_name = "recorder"
    log: ClassVar[list[tuple[str, Mapping[str, Any]]]] = []  # class level: shared by seat copies

    async def generate(self, request: DecisionRequest) -> Reply:
        if isinstance(request.answer_format, ActionDistribution):
            Recorder.log.append((request.messages[0]["content"], request.state))
        return await super().generate(request)


def first_call_actions(tables: dict[str, pl.DataFrame]) -> dict[int, set[int]]:
    rows = tables["decisions"].filter(pl.col("agent") == "bot/first-call").drop_nulls("action")
    return {r: set(g["action"]) for (r,), g in rows.group_by("round")}


# --- kind 9: every seat its own instance ---------------------------------------------------------


def test_self_play_seats_do_not_share_state_no_mechanism() -> None:
    tables = play_bots("NoMechanism", "prisoners_dilemma", [FirstCallCooperates(), "always-defect"])
    selfplay = tables["decisions"].filter(pl.col("matchup_id") == "bot/first-call|bot/first-call").sort("seat")
    assert selfplay["action"].to_list() == [0, 0]  # shared instance gave [0, 1]
    assert first_call_actions(tables) == {1: {0}}  # and in the two mixed matchups


def test_each_seat_keeps_its_own_state_through_repetition() -> None:
    tables = play_bots("Repetition", "public_goods", [FirstCallCooperates(), "always-cooperate"], num_rounds=3)
    assert first_call_actions(tables) == {1: {0}, 2: {1}, 3: {1}}
    assert tables["decisions"].filter(pl.col("agent") == "bot/first-call").height == 3 * 12  # 2^3 matchups × 3 seats / 2 rosters, 3 rounds


@pytest.mark.parametrize("mechanism", ["ReputationFirstOrder", "Reputation"])
def test_each_seated_agent_keeps_its_own_state_under_reputation(mechanism: str) -> None:
    tables = play_bots(mechanism, "prisoners_dilemma", [FirstCallCooperates(), "always-cooperate"], num_rounds=3)
    assert first_call_actions(tables) == {1: {0}, 2: {1}, 3: {1}}


# --- kind 12a: bots decide from what their prompt shows ------------------------------------------


def test_grim_trigger_forgives_a_defection_older_than_the_window() -> None:
    tables = play_bots("Repetition", "prisoners_dilemma", ["grim-trigger", DefectFirst()], num_rounds=6, lookup_depth=3)
    moves = tables["decisions"].filter(pl.col("matchup_id") == "bot/grim-trigger|bot/defect-first").sort(["round", "seat"])
    by_round = moves.group_by("round", maintain_order=True).agg(pl.col("action"))["action"].to_list()
    # r1 DefectFirst defects; grim trigger punishes while round 1 is among the last 3 shown (r2-r4)
    assert ["".join("CD"[a] for a in acts) for acts in by_round] == ["CD", "DC", "DC", "DC", "CC", "CC"]


ROUND_LINE = re.compile(r"^- Round (\d+): (.*)$")


def repetition_rounds(prompt: str) -> list[list[int]]:
    """The shown rounds, oldest first, as actions in seat order (from lines '- Round r: …')."""
    rows = []
    for line in prompt.splitlines():
        match = ROUND_LINE.match(line)
        if match:
            rows.append([int(a) for a in re.findall(r"played A(\d+)", match.group(2))])
    return rows[::-1]


def reputation_rounds(prompt: str, seat: int) -> list[list[int]]:
    """Per shown round (oldest first), each member's own action, members in seat order: the
    reader ('you', top-level lines of 'Your history') and its co-players ('Agent #i (Player s)')."""
    co = {int(s) - 1: uid for uid, s in re.findall(r"Agent #(\d+) \(Player (\d+)\)", prompt.split("you play with:")[1].split("\n")[0])}
    blocks = {"you": prompt.split("Your history:")[1]}
    for uid in co.values():
        blocks[uid] = prompt.split(f"Agent #{uid}'s history:")[1]
    own: dict[str, dict[int, int]] = {}
    for who, block in blocks.items():
        subject = "you" if who == "you" else f"Agent #{who}"
        own[who] = {}
        for line in block.split("\n\n")[0].splitlines():
            match = ROUND_LINE.match(line)  # top-level lines only (nested ones are indented)
            if match:
                own[who][int(match.group(1))] = int(re.search(rf"{re.escape(subject)} played A(\d+)", match.group(2)).group(1))  # type: ignore[union-attr]
    rounds = sorted(own["you"])
    members = ["you" if s == seat else co[s] for s in range(len(co) + 1)]
    return [[own[m][r] for m in members] for r in rounds]


@pytest.mark.parametrize("mechanism", sorted(MECHANISM_ORDER))
def test_bot_observation_equals_the_prompt_window(mechanism: str) -> None:
    Recorder.log.clear()
    params = {"num_rounds": 6} if mechanism in ("Repetition", "ReputationFirstOrder", "Reputation") else {}
    play_bots(mechanism, "prisoners_dilemma", [Recorder(), "always-defect", "uniform-random"], **params)
    assert Recorder.log
    deep = 0
    for prompt, state in Recorder.log:
        if mechanism == "Repetition":
            shown = repetition_rounds(prompt)
        elif mechanism.startswith("Reputation"):
            shown = reputation_rounds(prompt, int(state["seat"]))
        else:
            shown = []
            assert not any(ROUND_LINE.match(line) for line in prompt.splitlines())
        assert state["history"] == shown
        deep += len(shown) == 3
    if "num_rounds" in params:
        assert deep > 0  # the window (k = 3) was full in later rounds
