"""The warning before a run whose prompts outgrow a model's context window (issue 25 kind 2)."""

from __future__ import annotations

import io

import yaml

from coopeval.agents.litellm_client import import_litellm
from coopeval.agents.local import DEFAULT_N_CTX
from coopeval.estimate import windows
from coopeval.estimate.tokens import count_tokens
from coopeval.estimate.windows import model_window, print_window_warnings, window_warnings
from coopeval.pipeline.config import merge_overlay, validate_config
from tests.shared_data import REPO

OLLAMA = "ollama_chat/llama3.1"


def _gossip_config(tmp_path, num_ctx, max_tokens=None):
    params = {"num_ctx": num_ctx, **({"max_tokens": max_tokens} if max_tokens else {})}
    overlay = {
        "studies": ["gossip"],
        "gossip": {"testbeds": ["donation"], "conditions": ["align"], "replicates": 1,
                   "models": [{"model": OLLAMA, "params": params}]},
    }
    base = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    return validate_config({**merge_overlay(base, overlay), "cache_dir": str(tmp_path / "cache")})


def test_gossip_prompts_beyond_a_small_num_ctx_are_warned_about_with_the_numbers(tmp_path):
    config = _gossip_config(tmp_path, 512, max_tokens=64)
    out = io.StringIO()
    (warning,) = print_window_warnings(config, out)
    assert (warning.study, warning.model, warning.window.tokens, warning.answer_tokens) == ("gossip", OLLAMA, 512, 64)
    assert warning.prompt_tokens + 64 > 512
    line = out.getvalue()
    assert line.count("\n") == 1 and line.startswith("warning: the gossip study's largest prompt for ollama_chat/llama3.1")
    assert f"about {warning.prompt_tokens:,} tokens + 64 for the answer" in line
    assert "context window of 512 tokens (params.num_ctx)" in line
    # the same prompts fit a window larger than the warned prompt and answer
    assert window_warnings(_gossip_config(tmp_path, warning.prompt_tokens + 64)) == []


def test_the_warned_prompt_is_the_longest_one_counted_with_the_models_tokenizer(tmp_path):
    config = _gossip_config(tmp_path, 256)
    from coopeval.estimate.simulate import simulate
    from coopeval.estimate.standin import Stance

    calls = simulate(config, Stance.COOPERATIVE).calls
    (warning,) = window_warnings(config)
    longest = simulate(config, Stance.COOPERATIVE).largest[("gossip", OLLAMA)]
    assert len(longest) == calls["chars"].max()
    assert warning.prompt_tokens == count_tokens(OLLAMA, longest) > 256


def test_windows_come_from_num_ctx_the_embedded_model_and_litellms_map():
    litellm = import_litellm()
    assert model_window({"model": OLLAMA, "params": {"num_ctx": 8192}}) == windows.Window(8192, "params.num_ctx", True)
    assert model_window({"model": OLLAMA}) is None  # each request states the window it needs
    local = model_window({"model": "local/smollm2-135m"})
    assert local is not None and (local.tokens, local.with_answer) == (DEFAULT_N_CTX, True)
    mapped = model_window({"model": "openai/gpt-4o-mini"})
    assert mapped is not None and mapped.tokens == litellm.get_model_info("openai/gpt-4o-mini")["max_input_tokens"]
    assert model_window({"model": "bot/always-defect"}) is None


def test_the_embedded_models_window_is_the_one_it_is_loaded_with(monkeypatch):
    """R63 (e): with COOPEVAL_LLAMA_CTX=1024 the estimate and the run's warning use 1,024 tokens."""
    monkeypatch.setenv("COOPEVAL_LLAMA_CTX", "1024")
    assert model_window({"model": "local/smollm2-135m"}) == windows.Window(1024, "the embedded model's n_ctx, COOPEVAL_LLAMA_CTX", True)


def test_nothing_is_simulated_when_no_window_is_known(tmp_path, monkeypatch):
    config = _gossip_config(tmp_path, 512)
    config["gossip"]["models"] = [{"model": "openai/no-such-model-xyz", "params": {}}]

    def refuse(*args, **kwargs):
        raise AssertionError("simulated")

    monkeypatch.setattr("coopeval.estimate.simulate.simulate", refuse)
    assert window_warnings(config) == []


def test_the_workflow_warns_in_its_onstart_before_any_job():
    text = (REPO / "workflow" / "rules" / "common.smk").read_text(encoding="utf-8")
    start = text.index("onstart:")
    assert "print_window_warnings(config)" in text[start : text.index("\n\n\n", start)]


def test_the_estimate_prints_the_runs_window_warning_from_the_prompts_it_simulated(tmp_path, capsys, monkeypatch):
    """R63 (e): ``coopeval estimate`` itself prints the one-line warning the run's onstart prints
    (the same message, :meth:`WindowWarning.message`), counted on the prompts the estimate has
    already simulated (no second simulation), and its JSON stays as it was."""
    import argparse
    import json

    from coopeval.estimate.cli import run_estimate

    (expected,) = window_warnings(_gossip_config(tmp_path, 512, max_tokens=64))
    capsys.readouterr()  # its simulated cells' progress lines
    overlay = {
        "studies": ["gossip"],
        "cache_dir": str(tmp_path / "cache"),
        "gossip": {"testbeds": ["donation"], "conditions": ["align"], "replicates": 1,
                   "models": [{"model": OLLAMA, "params": {"num_ctx": 512, "max_tokens": 64}}]},
    }  # fmt: skip
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(overlay), encoding="utf-8")

    from coopeval.estimate import simulate as simulation

    real = simulation.simulate

    def simulate(*args, **kwargs):  # window_warnings asks for its studies only; the estimate for all
        assert "studies" not in kwargs, "the window check simulated the run again"
        return real(*args, **kwargs)

    monkeypatch.setattr(simulation, "simulate", simulate)
    monkeypatch.chdir(REPO)
    args = argparse.Namespace(configfile=[tmp_path / "small.yaml"], json=True, latency=1.0, cap=None, out=None, every_replicate=False)
    assert run_estimate(args) == 0
    out, err = capsys.readouterr()
    assert json.loads(out)["models"][OLLAMA]["calls"] > 0
    assert err.splitlines() == [expected.message()]
    assert "context window of 512 tokens (params.num_ctx)" in expected.message()
