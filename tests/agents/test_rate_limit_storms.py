"""Issue 25 kind 5: rate-limit storms. A job whose cap (``max_concurrency`` 8) is above what the
provider accepts (the simulated provider's ``cap`` 2, refusing the excess with 429 and a
``Retry-After`` scaled down to 0.05 s) plays decisions through litellm: the adaptive limit brings
the calls in flight down to the provider's, the ``llm_calls`` rows count exactly the 429s the
server logged, and the run summary's traffic table reports them and says the cap is too high.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("litellm")

from aiohttp import web

from coopeval.agents.adaptive import AdaptiveLimit
from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.maker import DecisionMaker, DecisionOutcome
from coopeval.agents.recorder import call_rows
from coopeval.agents.retry import RetryPolicy
from coopeval.decisions.formats import ActionDistribution
from coopeval.simserver.policy import Policy
from coopeval.simserver.server import SimConfig, SimServer
from coopeval.studies.coopeval.analysis.run_summary import provider_traffic

FORMAT = ActionDistribution(("A0", "A1"))
BODY = 'Choose how to play; the percentages must sum to exactly 100, for example {"A0": <INT>, "A1": <INT>}'
POLICY = RetryPolicy(max_attempts_rate_limit=60, initial_wait_s=0.01, max_wait_s=0.05)


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sim")


def _play(tmp_path: Path, n: int, cap: int, adaptive: bool = True) -> tuple[list[DecisionOutcome], list[dict[str, Any]], DecisionMaker]:
    """``n`` decisions at once against a provider accepting 2 in flight; the server's log lines."""
    log = tmp_path / f"requests-{cap}-{adaptive}.jsonl"
    server = SimServer(SimConfig(latency_s=0.05, cap=2, retry_after_s=0.05, default_policy=Policy("cooperative")), log)
    maker = DecisionMaker(None, {}, max_concurrency=cap, retry_policy=POLICY)
    if not adaptive:  # main's behaviour: no limit below the cap
        maker._limit = lambda agent: AdaptiveLimit(10**6)  # type: ignore[method-assign]

    async def run() -> list[DecisionOutcome]:
        runner = web.AppRunner(server.app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        agent = LiteLLMAgent("openai/sim", "IO", params={"api_base": f"http://127.0.0.1:{port}/v1", "timeout": 5})
        try:
            return list(await asyncio.gather(*(maker.decide(agent, BODY, FORMAT, {"d": i}) for i in range(n))))
        finally:
            await runner.cleanup()

    try:
        outcomes = asyncio.run(run())
    finally:
        server.close()
    return outcomes, [json.loads(line) for line in log.read_text().splitlines()], maker


def test_the_calls_rows_count_the_refusals_the_server_logged_and_the_summary_names_the_cap(tmp_path: Path) -> None:
    outcomes, lines, maker = _play(tmp_path, 24, cap=8)
    assert [o.status for o in outcomes] == ["ok"] * 24
    rows = [row for o in outcomes for row in call_rows(o, {})]
    refused = sum(1 for line in lines if line["outcome"] == "429_cap")
    assert sum(1 for line in lines if line["outcome"] == "ok") == 24
    assert refused > 0  # 8 sent at once to a provider accepting 2
    assert sum(r["rate_limited"] for r in rows) == sum(r["transport_retries"] for r in rows) == refused
    assert max(r["in_flight"] for r in rows) <= 8 and {r["in_flight_cap"] for r in rows} == {8}
    (limit,) = maker.limits.values()
    assert limit.lowest_limit <= 2 and limit.refused == refused
    frame = pl.DataFrame([{**r, "cache_hit": False} for r in rows])
    traffic = provider_traffic(frame)
    assert traffic.select("provider", "calls", "refused", "retries", "max_in_flight", "cap").row(0) == (
        "openai", 24, refused, refused, max(r["in_flight"] for r in rows), 8
    )
    lowest = min(r["in_flight_limit"] for r in rows)  # the lowest limit an answered attempt was sent under
    assert limit.lowest_limit <= lowest <= 2
    assert traffic["note"][0] == (
        f"cap 8 is above what the provider accepts: {refused} requests refused (429); the adaptive limit came down to {lowest}"
    )


def test_the_adaptive_limit_refuses_fewer_than_a_fixed_cap(tmp_path: Path) -> None:
    _, fixed, _ = _play(tmp_path, 60, cap=8, adaptive=False)
    _, adaptive, _ = _play(tmp_path, 60, cap=8)
    n_fixed = sum(1 for line in fixed if line["outcome"] == "429_cap")
    n_adaptive = sum(1 for line in adaptive if line["outcome"] == "429_cap")
    assert n_adaptive * 2 < n_fixed


def test_a_matched_cap_is_never_refused_and_the_summary_says_nothing(tmp_path: Path) -> None:
    outcomes, lines, _ = _play(tmp_path, 12, cap=2)
    rows = [row for o in outcomes for row in call_rows(o, {})]
    assert {line["outcome"] for line in lines} == {"ok"}
    traffic = provider_traffic(pl.DataFrame([{**r, "cache_hit": False} for r in rows]))
    assert traffic.select("calls", "refused", "retries", "max_in_flight", "cap", "note").row(0) == (12, 0, 0, 2, 2, "")


def test_the_simulated_provider_cuts_prompts_past_its_window_and_the_client_refuses_them(tmp_path: Path) -> None:
    # prompt_window = 40 tokens: a ~280-token prompt is reported as 40 (cut), a short one in full
    server = SimServer(SimConfig(prompt_window=40, default_policy=Policy("cooperative")), tmp_path / "log.jsonl")
    maker = DecisionMaker(None, {}, max_concurrency=1, retry_policy=POLICY)

    async def run() -> list[DecisionOutcome]:
        runner = web.AppRunner(server.app())
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        agent = LiteLLMAgent("openai/sim", "IO", params={"api_base": f"http://127.0.0.1:{runner.addresses[0][1]}/v1"})
        try:
            return [
                await maker.decide(agent, BODY, FORMAT, {"d": 0}),
                await maker.decide(agent, "Think it over. " * 60 + BODY, FORMAT, {"d": 1}),
            ]
        finally:
            await runner.cleanup()

    try:
        short, long = asyncio.run(run())
    finally:
        server.close()
    assert short.status == "ok" and short.attempts[0]["prompt_tokens"] < 40
    assert long.status == "failed" and "reports 40 prompt tokens" in long.error


def test_the_embedded_model_has_a_traffic_row_and_scripted_bots_none() -> None:
    # A default run calls only the embedded model (in process: no cap, in_flight not tracked)
    # and bots; the summary still lists the provider with its calls, refusals and retries.
    def row(model: str, cache_hit: bool, retries: int = 0) -> dict[str, object]:
        return {"model": model, "cache_hit": cache_hit, "rate_limited": 0, "transport_retries": retries,
                "in_flight": 0, "in_flight_limit": 0, "in_flight_cap": 0}

    frame = pl.DataFrame(
        [row("local/smollm2-135m", False), row("local/smollm2-135m", False, retries=1),
         row("local/smollm2-135m", True), row("bot/tit-for-tat", False), row("bot/always-defect", False)]
    )
    traffic = provider_traffic(frame)
    assert traffic.rows() == [("local", 2, 0, 1, None, None, None, "")]
