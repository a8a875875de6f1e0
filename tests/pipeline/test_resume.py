"""Kill-and-resume: a cell interrupted mid-run and restarted makes no repeated model call and
yields identical tables (docs/protocol/engineering.md#journal, #response-cache)."""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.agents.mock import MockLLM
from coopeval.cache.response_cache import ResponseCache
from coopeval.core.schemas import TRANSPORT_COLUMNS
from tests.helpers import make_cell, play_spec

VOLATILE = {"cache_hit", "latency_s", *TRANSPORT_COLUMNS}


def _cell(rounds: int = 4) -> dict:
    return make_cell("Repetition", "prisoners_dilemma", [MockLLM(), "tit-for-tat"], num_rounds=rounds)


def _play(spec: dict, cache: ResponseCache | None, agent: MockLLM) -> dict[str, pl.DataFrame]:
    tables, _stats = play_spec(spec, [agent, "tit-for-tat"], cache)
    return tables


def test_killed_cell_resumes_without_repeated_calls(tmp_path):
    spec = _cell()
    # Reference: an uninterrupted run without cache counts the unique calls.
    reference_agent = MockLLM()
    reference = _play(spec, None, reference_agent)
    unique_calls = reference["llm_calls"].filter(pl.col("agent") == reference_agent.name).height
    assert unique_calls == reference_agent.calls == 2 * 4 + 2 * 4  # (fake,bot) + (bot,fake) + 2 seats of self-play, 4 rounds

    cache = ResponseCache(tmp_path / "cache")
    killed = MockLLM(fail_after=7)
    with pytest.raises(MockLLM.Interrupted):
        _play(spec, cache, killed)
    assert killed.calls == 7

    resumed_agent = MockLLM()
    resumed = _play(spec, cache, resumed_agent)
    # Exactly the calls not made before the kill; none repeated.
    assert killed.calls + resumed_agent.calls == unique_calls
    for table in ("decisions", "matchups"):
        assert resumed[table].equals(reference[table]), table
    calls = resumed["llm_calls"].drop(VOLATILE)
    assert calls.equals(reference["llm_calls"].drop(VOLATILE))

    # A full rerun replays everything from the cache: zero model calls.
    replay_agent = MockLLM()
    replay = _play(spec, cache, replay_agent)
    assert replay_agent.calls == 0
    assert replay["decisions"].equals(reference["decisions"])
    cache.close()


def test_adding_an_agent_repays_only_new_matchups(tmp_path):
    cache = ResponseCache(tmp_path / "cache")
    spec = _cell(rounds=3)
    first = MockLLM()
    _play(spec, cache, first)
    roster = [MockLLM(), "tit-for-tat", "always-defect"]
    spec2 = make_cell("Repetition", "prisoners_dilemma", roster, num_rounds=3)
    assert spec2["cell_id"] != spec["cell_id"]
    second = roster[0]
    play_spec(spec2, roster, cache)
    # New matchups with fake: (fake, AD) and (AD, fake), 3 rounds each, one fake seat each.
    assert second.calls == 2 * 3
    cache.close()
