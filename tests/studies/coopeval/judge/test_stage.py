"""The judge stage end to end: read play outputs, select, sample, judge, write two Parquet files;
with no CoT agent (the smoke config) both files are written empty with their schemas."""

from __future__ import annotations

import polars as pl

from coopeval.core.schemas import SCHEMAS
from coopeval.studies.coopeval.judge.stage import JUDGEMENT_SCHEMA, run_judge
from tests.fakes import ScriptedJudge, decision_rows, judge_answer
from tests.shared_data import REPO

LONG = (
    "Defecting pays more whatever the other player does, so I maximise my own payoff by defecting. "
)
AGENTS = [
    {"model": "local/smollm2-135m", "style": "CoT", "label": "x"},
    {"model": "bot/tit-for-tat"},
]
JUDGE = {"model": "fake/judge", "style": "IO", "params": {}, "sample_size": 0, "min_chars": 80}


def write_decisions(tmp_path, rows):
    path = tmp_path / "decisions.parquet"
    decision_rows(rows).write_parquet(path)
    return [path]


def run(tmp_path, rows, judge_config=JUDGE, agents=AGENTS, script=None, games=None):
    outputs = {
        "judgements": tmp_path / "out" / "judgements.parquet",
        "llm_calls": tmp_path / "out" / "llm_calls.parquet",
    }
    agent = ScriptedJudge(script or {"[": [judge_answer("Individual utility maximization")]})
    n, _stats = run_judge(
        write_decisions(tmp_path, rows),
        outputs,
        judge_config,
        agents,
        seed=7,
        cache_dir=str(tmp_path / "cache"),
        prompts_dir=REPO / "resources" / "prompts",
        games=games,
        judge_agent=agent,
    )
    return pl.read_parquet(outputs["judgements"]), pl.read_parquet(outputs["llm_calls"]), agent, n


def test_no_cot_agent_gives_empty_outputs_with_schemas(tmp_path):
    bots = [{"model": "bot/tit-for-tat"}, {"model": "bot/always-defect"}]
    rows = [{"agent": "bot/tit-for-tat", "response": '{"A0": 100, "A1": 0}'}]
    judgements, calls, agent, n = run(tmp_path, rows, agents=bots)
    assert n == 0 and agent.calls == 0
    assert judgements.height == 0 and dict(judgements.schema) == JUDGEMENT_SCHEMA
    assert calls.height == 0 and dict(calls.schema) == SCHEMAS["llm_calls"]


def test_judges_eligible_decisions_and_writes_both_tables(tmp_path):
    rows = [
        {"decision_id": "a", "agent": "x(CoT)", "response": LONG + "[1]"},
        {"decision_id": "b", "agent": "x(CoT)", "game": "TrustGame", "response": LONG + "[2]"},
        {"decision_id": "c", "agent": "bot/tit-for-tat", "response": LONG},
        {"decision_id": "d", "agent": "x(CoT)", "response": "too short"},
    ]
    script = {
        "[1]": [judge_answer("Individual utility maximization, Strategic equilibrium focus", 0.9)],
        "[2]": [judge_answer("Nonsense")],
    }
    judgements, calls, agent, n = run(tmp_path, rows, script=script)
    assert n == 2
    assert judgements.select("decision_id", "status", "labels").rows() == [
        ("a", "ok", ["Individual utility maximization", "Strategic equilibrium focus"]),
        ("b", "failed", []),
    ]
    assert calls.height == 1 + 6 and set(calls["kind"]) == {"judge"}
    # the judge sees the game's title and the response, not the game prompt
    assert any("The game is Trust Game." in p for p in agent.prompts)


def test_sample_size_and_include_games(tmp_path):
    rows = [{"decision_id": f"d{i}", "response": LONG + f"[{i}]"} for i in range(6)]
    rows += [{"decision_id": "sh", "game": "StagHunt", "response": LONG + "[sh]"}]
    config = {**JUDGE, "sample_size": 3, "include_games": ["prisoners_dilemma", "trust_game"]}
    judgements, _, _, n = run(
        tmp_path, rows, judge_config=config, games=["prisoners_dilemma", "stag_hunt"]
    )
    assert n == 3 and "sh" not in judgements["decision_id"].to_list()


def test_a_judge_shard_held_by_another_executor_is_not_judged_twice(tmp_path, monkeypatch):
    """Issue 25 kind 4: the shard's lock is held (another executor judges it); with
    COOPEVAL_CELL_LOCK=fail this one stops before any judge call, naming the holder."""
    import pytest

    from coopeval.cache.cell_lock import CellBusyError, cell_lock

    outputs = {"judgements": tmp_path / "out" / "judgements.parquet", "llm_calls": tmp_path / "out" / "llm_calls.parquet"}
    agent = ScriptedJudge({"[": [judge_answer("Individual utility maximization")]})
    monkeypatch.setenv("COOPEVAL_CELL_LOCK", "fail")
    decisions = write_decisions(tmp_path, [{"response": LONG + "[a]"}])
    with cell_lock(tmp_path / "cache", f"judge-{outputs['judgements']}", mode="wait"), pytest.raises(CellBusyError, match="pid="):
        run_judge(decisions, outputs, JUDGE, AGENTS, seed=7, cache_dir=str(tmp_path / "cache"),
                  prompts_dir=REPO / "resources" / "prompts", judge_agent=agent)
    assert agent.calls == 0 and not outputs["judgements"].exists()
