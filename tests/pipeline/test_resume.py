"""Kill-and-resume: a cell interrupted mid-run and restarted makes no repeated model call and
yields identical tables (engineering rules §2, §4)."""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.cache.response_cache import ResponseCache
from coopeval.core.prompts import PromptLibrary
from coopeval.studies.coopeval.cells import build_cells
from coopeval.pipeline.config import validate_config
from coopeval.studies.coopeval.play import play_cell
from tests.fakes import FakeLLM

VOLATILE = {"cache_hit", "latency_s"}


def _cell(mechanism: str = "Repetition", game: str = "prisoners_dilemma", rounds: int = 4) -> dict:
    config = validate_config(
        {
            "agents": [{"model": "fake/model"}, {"model": "bot/tit-for-tat"}],
            "games": [game],
            "mechanisms": [mechanism],
            "mechanism_params": {"Repetition": {"num_rounds": rounds}},
        }
    )
    return build_cells(config)[0]


def _play(spec: dict, cache: ResponseCache | None, agent: FakeLLM) -> dict[str, pl.DataFrame]:
    from coopeval.agents.bots import make_bot

    tables, _stats = play_cell(spec, cache, PromptLibrary(), agents=[agent, make_bot("tit-for-tat")])
    return tables


def test_killed_cell_resumes_without_repeated_calls(tmp_path):
    spec = _cell()
    # Reference: an uninterrupted run without cache counts the unique calls.
    reference_agent = FakeLLM()
    reference = _play(spec, None, reference_agent)
    unique_calls = reference["llm_calls"].filter(pl.col("agent") == reference_agent.name).height
    assert unique_calls == reference_agent.calls == 2 * 4 + 2 * 4  # (fake,bot) + (bot,fake) + 2 seats of self-play, 4 rounds

    cache = ResponseCache(tmp_path / "cache")
    killed = FakeLLM(fail_after=7)
    with pytest.raises(FakeLLM.Interrupted):
        _play(spec, cache, killed)
    assert killed.calls == 7

    resumed_agent = FakeLLM()
    resumed = _play(spec, cache, resumed_agent)
    # Exactly the calls not made before the kill; none repeated.
    assert killed.calls + resumed_agent.calls == unique_calls
    for table in ("decisions", "matchups"):
        assert resumed[table].equals(reference[table]), table
    calls = resumed["llm_calls"].drop(VOLATILE)
    assert calls.equals(reference["llm_calls"].drop(VOLATILE))

    # A full rerun replays everything from the cache: zero model calls.
    replay_agent = FakeLLM()
    replay = _play(spec, cache, replay_agent)
    assert replay_agent.calls == 0
    assert replay["decisions"].equals(reference["decisions"])
    cache.close()


def test_adding_an_agent_repays_only_new_matchups(tmp_path):
    cache = ResponseCache(tmp_path / "cache")
    spec = _cell(rounds=3)
    first = FakeLLM()
    _play(spec, cache, first)
    from coopeval.agents.bots import make_bot

    bigger = validate_config(
        {
            "agents": [{"model": "fake/model"}, {"model": "bot/tit-for-tat"}, {"model": "bot/always-defect"}],
            "games": ["prisoners_dilemma"],
            "mechanisms": ["Repetition"],
            "mechanism_params": {"Repetition": {"num_rounds": 3}},
        }
    )
    spec2 = build_cells(bigger)[0]
    assert spec2["cell_id"] != spec["cell_id"]
    second = FakeLLM()
    play_cell(spec2, cache, PromptLibrary(), agents=[second, make_bot("tit-for-tat"), make_bot("always-defect")])
    # New matchups with fake: (fake, AD) and (AD, fake), 3 rounds each, one fake seat each.
    assert second.calls == 2 * 3
    cache.close()
