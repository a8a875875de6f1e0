"""The simulated provider over real HTTP: cap with 429 + Retry-After, injected faults, the
request log, and litellm playing a CoopEval cell against it (every decision kind answered)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestClient, TestServer

from coopeval.simserver.policy import Policy
from coopeval.simserver.process import free_port, start_server, stop_server
from coopeval.simserver.server import SimConfig, SimServer, request_hash
from tests.helpers import play_bots

SIGN = 'Answer with one JSON object of the form {"sign": <true or false>}.'
BODY = {"model": "m", "messages": [{"role": "user", "content": SIGN}], "seed": 7}


def _exchange(config: SimConfig, log: Path, bodies: list[dict]) -> list[tuple[int, dict, str]]:
    """POST ``bodies`` concurrently; (status, headers, text) per body."""

    async def go():
        server = SimServer(config, log)
        async with TestClient(TestServer(server.app())) as client:

            async def one(body):
                resp = await client.post("/v1/chat/completions", json=body)
                try:
                    return resp.status, dict(resp.headers), await resp.text()
                except aiohttp.ClientPayloadError:
                    return resp.status, dict(resp.headers), "<truncated>"

            out = await asyncio.gather(*(one(b) for b in bodies))
        server.close()
        return out

    return asyncio.run(go())


def _log(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_cap_answers_429_with_retry_after_and_logs_every_request(tmp_path):
    log = tmp_path / "requests.jsonl"
    config = SimConfig(latency_s=0.3, cap=1, retry_after_s=2, policies={"m": Policy("cooperative")})
    results = _exchange(config, log, [BODY, BODY])
    statuses = sorted(status for status, _, _ in results)
    assert statuses == [200, 429]
    refused = next(r for r in results if r[0] == 429)
    assert refused[1]["Retry-After"] == "2"
    answered = next(r for r in results if r[0] == 200)
    assert json.loads(answered[2])["choices"][0]["message"]["content"] == '{"sign": true}'
    rows = _log(log)
    assert sorted(r["outcome"] for r in rows) == ["429_cap", "ok"]
    assert {r["hash"] for r in rows} == {request_hash(BODY)}


@pytest.mark.parametrize(("fault", "status"), [("500", 500), ("401", 401), ("429", 429), ("timeout", 504)])
def test_injected_faults(tmp_path, fault, status):
    log = tmp_path / "requests.jsonl"
    config = SimConfig(fault_rates={fault: 1.0}, timeout_hang_s=0.05)
    ((got, _, _),) = _exchange(config, log, [BODY])
    assert got == status
    assert [r["outcome"] for r in _log(log)] == [fault]


def test_truncated_body_is_cut_and_the_connection_closed(tmp_path):
    log = tmp_path / "requests.jsonl"
    ((status, _headers, text),) = _exchange(SimConfig(fault_rates={"truncated": 1.0}), log, [BODY])
    assert status == 200 and text == "<truncated>"
    assert [r["outcome"] for r in _log(log)] == ["truncated"]


def test_same_request_same_answer_and_bad_body_named(tmp_path):
    log = tmp_path / "requests.jsonl"
    first, second, bad = _exchange(SimConfig(seed=3), log, [BODY, BODY, {"model": "m"}])
    assert first[2] and json.loads(first[2])["choices"] == json.loads(second[2])["choices"]
    assert bad[0] == 400 and "messages" in bad[2]
    with pytest.raises(ValueError, match="fault_rates"):
        SimConfig(fault_rates={"500": 0.7, "401": 0.5})


@pytest.fixture(scope="module")
def sim_url(tmp_path_factory):
    port = free_port()
    log = tmp_path_factory.mktemp("sim") / "requests.jsonl"
    options = ["--policy", "coop=cooperative", "--policy", "defect=defecting", "--fault", "500=0.05"]
    proc = start_server(port, log, options)
    yield f"http://127.0.0.1:{port}/v1", log
    stop_server(proc)


@pytest.mark.parametrize("mechanism", ["NoMechanism", "Repetition", "ReputationFirstOrder", "Mediation", "Contracting"])
def test_litellm_plays_every_kind_against_the_server(sim_url, mechanism, monkeypatch):
    from coopeval.agents.llm_agent import LiteLLMAgent

    url, log = sim_url
    monkeypatch.setenv("OPENAI_API_KEY", "sim")
    params = {"api_base": url, "send_seed": True}
    coop = LiteLLMAgent("openai/coop", style="CoT", params=params)
    defect = LiteLLMAgent("openai/defect", style="IO", params=params)
    extra = {"num_rounds": 3} if mechanism == "Repetition" else {}
    tables = play_bots(mechanism, "prisoners_dilemma", [coop, defect], **extra)
    decisions = tables["decisions"]
    assert decisions.height > 0 and (decisions["status"] == "ok").all()
    actions = decisions.filter(decisions["kind"] == "action")
    by_agent = {a: set(actions.filter(actions["agent"] == a)["action"].to_list()) for a in (coop.name, defect.name)}
    # Prisoner's Dilemma: action 0 (A0) = Cooperate, 1 (A1) = Defect; the policies put 100 % on one,
    # except where a mediator plays for a delegator (its design: the designer's policy).
    if mechanism != "Mediation":
        assert by_agent == {coop.name: {0}, defect.name: {1}}
    signs = decisions.filter(decisions["kind"] == "sign")
    for row in signs.iter_rows(named=True):
        assert json.loads(row["parsed"]) == {"sign": row["agent"] == coop.name}
    assert any(json.loads(line)["outcome"] == "ok" for line in log.read_text().splitlines())


def test_a_server_that_cannot_start_is_reported_with_its_exit_code(tmp_path):
    with pytest.raises(RuntimeError, match=r"exited with code 2 before listening on port \d+; check its options \['--cap', '-1'\]"):
        start_server(free_port(), tmp_path / "log.jsonl", ["--cap", "-1"], wait_s=20)
