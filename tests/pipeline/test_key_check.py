"""API keys are checked by the job that calls a provider, before its first call (issue 24 item 2):
a dry run or an estimate needs none, a play or judge job without its key stops naming it."""

from __future__ import annotations

import pytest

from coopeval.agents.registry import missing_key_error
from coopeval.core.errors import ConfigError
from coopeval.pipeline.config import load_config
from coopeval.pipeline.play import run_cell
from coopeval.pipeline.studies import all_cells
from coopeval.studies.coopeval.judge.stage import run_judge
from tests.fakes import decision_rows
from tests.shared_data import REPO

LONG = "Defecting pays more whatever the other player does, so I maximise my own payoff by defecting. [1]"


def test_missing_keys_are_named_with_their_models():
    models = ["openrouter/openai/gpt-5.2", "openai/gpt-4o", "bot/tit-for-tat", "local/smollm2-135m"]
    assert missing_key_error(models, {"OPENROUTER_API_KEY": "k", "OPENAI_API_KEY": "k"}) is None
    assert missing_key_error(["bot/tit-for-tat", "local/smollm2-135m", "ollama/llama3"], {}) is None
    message = missing_key_error(models, {"OPENAI_API_KEY": "k", "OPENROUTER_API_KEY": ""})
    assert message == (
        "API key not set: OPENROUTER_API_KEY (for openrouter/openai/gpt-5.2); "
        "export it in the environment and rerun (no model was called)"
    )


def test_a_play_job_without_its_key_stops_before_any_call(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    config = load_config([REPO / "config" / "config.yaml", REPO / "config" / "paper.yaml"])
    spec = all_cells({**config, "studies": ["coopeval"]})["coopeval"][0]
    journal = tmp_path / "journal"
    with pytest.raises(ConfigError, match=r"API key not set: OPENROUTER_API_KEY \(for openrouter/"):
        run_cell("coopeval", spec, {}, str(tmp_path / "cache"), str(journal), str(REPO / "resources" / "prompts"))
    assert not journal.exists() and not (tmp_path / "cache").exists()  # nothing opened, nothing called


def test_a_judge_job_without_its_key_stops_before_any_call(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENROUTER_API_KEY", raising=False)
    path = tmp_path / "decisions.parquet"
    decision_rows([{"decision_id": "a", "agent": "x(CoT)", "response": LONG}]).write_parquet(path)
    outputs = {"judgements": tmp_path / "j.parquet", "llm_calls": tmp_path / "c.parquet"}
    judge = {"model": "openrouter/openai/gpt-5.2", "style": "IO", "params": {}, "sample_size": 0, "min_chars": 80}
    with pytest.raises(ConfigError, match=r"\[judge\] API key not set: OPENROUTER_API_KEY"):
        run_judge([path], outputs, judge, [{"model": "local/smollm2-135m", "style": "CoT", "label": "x"}],
                  seed=7, cache_dir=str(tmp_path / "cache"), prompts_dir=REPO / "resources" / "prompts")
    assert not outputs["judgements"].exists() and not (tmp_path / "cache").exists()
