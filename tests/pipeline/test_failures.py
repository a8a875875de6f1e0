"""Failure policy (docs/protocol/answers.md#re-asks): a malformed answer is re-asked, then recorded as failed with all
its attempts; it ends only its own matchup and is never substituted."""

from __future__ import annotations

import json

import polars as pl
import pytest

from coopeval.decisions.reask import MAX_ATTEMPTS
from coopeval.pipeline.checks import FailedDecisionsError, check_failed_decisions
from coopeval.pipeline.store import build_store
from coopeval.studies.coopeval.parse import matchup_scores
from tests.helpers import make_cell, play_bots, play_spec


@pytest.fixture
def malformed_cell():
    spec = make_cell("Repetition", "prisoners_dilemma", ["malformed", "always-cooperate"], num_rounds=3)
    tables, stats = play_spec(spec)
    return spec, tables, stats


def test_malformed_answers_are_reasked_then_failed(malformed_cell):
    _spec, tables, stats = malformed_cell
    decisions, calls, matchups = tables["decisions"], tables["llm_calls"], tables["matchups"]
    failed = decisions.filter(pl.col("status") == "failed")
    # Matchups with the malformed bot: (M, C), (C, M), (M, M) -> 4 malformed seats, each fails in round 1.
    assert failed.height == 4
    assert stats.failed_decisions == 4
    assert set(failed["n_attempts"].to_list()) == {MAX_ATTEMPTS}
    assert failed["parsed"].null_count() == 4 and failed["action"].null_count() == 4
    malformed_calls = calls.filter(pl.col("agent") == "bot/malformed")
    assert malformed_calls.height == 4 * MAX_ATTEMPTS
    assert (malformed_calls["error"] != "").all()
    # The re-ask shows the previous answer and the validator's error.
    second = json.loads(malformed_calls.filter(pl.col("attempt") == 1)["prompt"][0])[0]["content"]
    assert "I would rather not say." in second and "no JSON object" in second
    status = dict(zip(matchups["matchup_id"], matchups["status"], strict=True))
    assert status == {
        "bot/malformed|bot/malformed": "failed",
        "bot/malformed|bot/always-cooperate": "failed",
        "bot/always-cooperate|bot/malformed": "failed",
        "bot/always-cooperate|bot/always-cooperate": "complete",
    }
    # The complete matchup still played all rounds and is the only one scored.
    scores = matchup_scores(decisions, matchups)
    assert scores["matchup_id"].unique().to_list() == ["bot/always-cooperate|bot/always-cooperate"]
    assert scores["score"].to_list() == [2.0, 2.0]


def test_final_check_names_failed_decisions(malformed_cell, tmp_path):
    _spec, tables, _ = malformed_cell
    paths = {}
    for name, frame in tables.items():
        path = tmp_path / f"{name}.parquet"
        frame.write_parquet(path)
        paths[name] = [str(path)]
    store = tmp_path / "store.duckdb"
    build_store(paths, store)
    with pytest.raises(FailedDecisionsError, match=r"(?s)4 decisions failed.*bot/malformed"):
        check_failed_decisions(store, tmp_path / "failures.txt", max_failed=0)
    assert check_failed_decisions(store, tmp_path / "failures.txt", max_failed=4) == 4
    assert (tmp_path / "failures.txt").read_text().startswith("4 failed decisions")


def test_retry_failed_asks_only_failed_decisions_again():
    tables = play_bots("NoMechanism", "prisoners_dilemma", ["malformed", "always-cooperate"], config={"retry_failed": 1})
    failed = tables["decisions"].filter(pl.col("status") == "failed")
    assert set(failed["n_attempts"].to_list()) == {2 * MAX_ATTEMPTS}
    ok = tables["decisions"].filter(pl.col("status") == "ok")
    assert set(ok["n_attempts"].to_list()) == {1}


def test_budget_guard_stops_the_job_after_caching(tmp_path):
    import asyncio

    from coopeval.agents.maker import BudgetExceededError, DecisionMaker
    from coopeval.agents.mock import MockLLM
    from coopeval.agents.protocol import Reply
    from coopeval.cache.response_cache import ResponseCache
    from coopeval.decisions.formats import ActionDistribution

    class Pricey(MockLLM):
        async def generate(self, request):
            reply = await super().generate(request)
            return Reply(text=reply.text, cost_usd=0.6)

    cache = ResponseCache(tmp_path / "c")
    maker = DecisionMaker(cache, {"IO": ""}, max_usd=1.0)
    agent = Pricey()
    fmt = ActionDistribution(("A0", "A1"))
    asyncio.run(maker.decide(agent, "q1", fmt, {"n": 1}))
    with pytest.raises(BudgetExceededError, match=r"spent \$1\.2000.*max_usd = 1\.0"):
        asyncio.run(maker.decide(agent, "q2", fmt, {"n": 2}))
    assert len(cache) == 2  # the answer that crossed the limit is kept
    cache.close()
