"""Gossip bots decide from what the prompt shows (issue 13 kind 12a): the capped public log's
last entries only, and no tone when the condition hides it."""

from __future__ import annotations

import warnings

from coopeval.studies.gossip.bots import Discriminator
from coopeval.studies.gossip.memory import LogEntry, PublicLog
from coopeval.studies.gossip.study import GossipStudy

PROMPTS = GossipStudy.prompt_library()


def log_with(show_tone: bool, cap: int) -> PublicLog:
    log = PublicLog(PROMPTS, show_tone=show_tone, max_entries=cap)
    log.add(LogEntry(1, "Kate", "Jack", "He kept everything.", tone="criticism"))
    for r in (2, 3, 4):
        log.add(LogEntry(r, "Emma", "Luke", "Fine.", tone="praising"))
    return log


def test_capped_log_state_is_the_shown_entries() -> None:
    log = log_with(show_tone=True, cap=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        shown = log.render()
    assert shown.splitlines()[1:] == ["3. Round 3, Emma about Luke: [praising] Fine.", "4. Round 4, Emma about Luke: [praising] Fine."]
    assert [e["round"] for e in log.state()] == [3, 4]
    # the criticism of Jack (round 1) is no longer shown: the discriminator cooperates with him
    assert Discriminator().cooperates({"partner": "Jack", "log": log.state()}) is True
    assert Discriminator().cooperates({"partner": "Jack", "log": log_with(True, 0).state()}) is False


def test_hidden_tone_is_hidden_from_bots() -> None:
    log = log_with(show_tone=False, cap=0)
    assert "criticism" not in log.render()
    assert {e["tone"] for e in log.state()} == {None}
    assert Discriminator().cooperates({"partner": "Jack", "log": log.state()}) is True
