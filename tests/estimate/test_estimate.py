"""``coopeval estimate`` (issue 24): decisions, calls, tokens and dollars of a config from a
simulated run, checked against played cells and hand-derived protocol counts."""

from __future__ import annotations

import json

import polars as pl
import pytest
import yaml

from coopeval.agents.prices import load_prices
from coopeval.core.errors import ConfigError
from coopeval.core.prompts import PromptLibrary
from coopeval.decisions.reask import MAX_ATTEMPTS
from coopeval.estimate.cli import run_estimate
from coopeval.estimate.report import budget_error, estimate_config
from coopeval.estimate.simulate import representatives
from coopeval.pipeline.config import load_config, merge_overlay, validate_config
from coopeval.pipeline.studies import all_cells, get_study, prompts_dir
from coopeval.studies.base import PlayInputs
from tests.helpers import play_bots
from tests.shared_data import REPO

CONFIG = REPO / "config" / "config.yaml"

SMALL_SMOKE = {
    "games": ["prisoners_dilemma", "public_goods"],
    "gossip": {"testbeds": ["donation"], "conditions": ["align", "no_gossip", "max"]},
    "evolution": {"protocols": ["vh"], "variants": ["none"]},
}
"""config/smoke.yaml cut down to a few cells of each study (bots only)."""

LLM = "openai/gpt-4o-mini"
ROSTER = {
    "studies": ["coopeval"],
    "agents": [{"model": LLM, "style": "IO", "params": {"max_tokens": 50}}, {"model": "bot/always-defect"}],
    "games": ["prisoners_dilemma"],
    "mechanisms": ["NoMechanism", "Repetition", "Contracting"],
    "mechanism_params": {"Repetition": {"num_rounds": 4}},
    "replicates": 2,
}


def _config(tmp_path, overlay):
    base = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))
    return validate_config({**merge_overlay(base, overlay), "cache_dir": str(tmp_path / "cache")})


def _recorded(config) -> dict[str, pl.DataFrame]:
    """Every cell of ``config`` played for real (bots), its decisions per study."""
    played: dict[str, list[pl.DataFrame]] = {}
    for study_name, cells in all_cells(config).items():
        study = get_study(study_name)
        library = PromptLibrary(prompts_dir(study, config))
        for spec in cells:
            tables, _ = study.play(spec, PlayInputs(None, library))
            played.setdefault(study_name, []).append(tables["decisions"].select("kind"))
    return {name: pl.concat(frames) for name, frames in played.items()}


def test_smoke_bots_decisions_are_exact_and_match_the_played_cells(tmp_path):
    smoke = yaml.safe_load((REPO / "config" / "smoke.yaml").read_text(encoding="utf-8"))
    config = _config(tmp_path, merge_overlay(smoke, SMALL_SMOKE))
    recorded = _recorded(config)
    estimate = estimate_config(config)
    assert set(estimate.studies) == set(recorded) == {"coopeval", "gossip", "evolution"}
    for study, decisions in recorded.items():
        bounds = estimate.studies[study]
        assert bounds["decisions_min"] == decisions.height == bounds["decisions_max"], study
        by_kind = dict(decisions.group_by("kind").len().iter_rows())
        rows = [r for r in estimate.rows if r["study"] == study]
        assert {k: sum(r["decisions_max"] for r in rows if r["kind"] == k) for k in by_kind} == by_kind
        assert all(r["decisions_min"] == r["decisions_max"] for r in rows)
    assert all(m["usd"] == 0.0 and m["input_tokens"] == 0 for m in estimate.models.values())  # bots are free
    assert estimate.totals["model_calls"] == 0 and estimate.totals["wall_s_bound"] == 0.0


@pytest.fixture(scope="module")
def llm_estimate(tmp_path_factory):
    return estimate_config(_config(tmp_path_factory.mktemp("llm"), ROSTER), latency_s=2.0, cap=4)


def _row(estimate, group, kind, model=LLM):
    (row,) = [r for r in estimate.rows if (r["group"], r["kind"], r["model"]) == (group, kind, model)]
    return row


def test_protocol_counts_of_a_stood_in_model(llm_estimate):
    one_shot = _row(llm_estimate, "NoMechanism", "action")
    assert one_shot["decisions_min"] == one_shot["decisions_max"] > 0  # fixed by the protocol
    repeated = _row(llm_estimate, "Repetition", "action")
    # T = 4 rounds of the same match-ups: four times the one-shot decisions when every answer is
    # valid; a failing first round ends each match-up
    assert repeated["decisions_max"] == 4 * one_shot["decisions_max"]
    assert repeated["decisions_min"] == one_shot["decisions_max"]
    # Contracting: the designs of one agent in a cell of this roster (played with bots), in 2
    # replicates; every match-up signs, then plays one round only if every signature was valid
    played = play_bots("Contracting", "prisoners_dilemma", ["always-cooperate", "always-defect"])["decisions"]
    per_cell = played.filter((pl.col("kind") == "contract_design") & (pl.col("agent") == "bot/always-cooperate")).height
    design = _row(llm_estimate, "Contracting", "contract_design")
    assert design["decisions_min"] == design["decisions_max"] == 2 * per_cell > 0
    signed = _row(llm_estimate, "Contracting", "sign")
    assert signed["decisions_max"] == one_shot["decisions_max"]
    contracted = _row(llm_estimate, "Contracting", "action")
    assert contracted["decisions_max"] == one_shot["decisions_max"] and contracted["decisions_min"] == 0
    assert repeated["calls_max"] == MAX_ATTEMPTS * repeated["calls"] == MAX_ATTEMPTS * repeated["decisions_max"]


def test_tokens_dollars_and_wall_time_of_a_priced_model(llm_estimate):
    model = llm_estimate.models[LLM]
    calls = sum(r["calls"] for r in llm_estimate.rows if r["model"] == LLM)
    assert model["calls"] == calls and model["output_tokens"] == 50 * calls  # max_tokens bound
    assert model["input_tokens"] > 100 * calls  # every prompt states the game's rules
    assert model["price_source"] == "prices.yaml"
    assert model["usd"] == pytest.approx(load_prices().cost_usd(LLM, model["input_tokens"], 50 * calls))
    assert llm_estimate.totals["usd"] == pytest.approx(model["usd"]) and llm_estimate.totals["complete"]
    # critical path: the longest cell is Repetition's 4 rounds; 2 s per call, 4 in flight
    totals = llm_estimate.totals
    assert totals["critical_path_calls"] == 4
    assert totals["wall_s_bound"] == pytest.approx(max(4 * 2.0, calls * 2.0 / 4))
    assert totals["key_variables"] == ["OPENAI_API_KEY"]


def test_an_unknown_model_is_unpriced_and_the_total_incomplete(tmp_path):
    roster = {**ROSTER, "mechanisms": ["NoMechanism"], "replicates": 1,
              "agents": [{"model": "openai/no-such-model-xyz", "style": "IO"}, {"model": "bot/always-defect"}]}
    estimate = estimate_config(_config(tmp_path, roster))
    model = estimate.models["openai/no-such-model-xyz"]
    assert model["priced"] is False and model["usd"] is None and model["calls"] > 0
    assert estimate.totals["usd"] is None and estimate.totals["complete"] is False
    assert estimate.totals["unpriced"] == ["openai/no-such-model-xyz"]


def test_a_config_error_is_reported_as_a_run_reports_it(tmp_path, capsys, monkeypatch):
    bad = tmp_path / "bad.yaml"
    bad.write_text("games: [nope]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config([CONFIG, bad])
    monkeypatch.chdir(REPO)
    import argparse

    args = argparse.Namespace(configfile=[bad], json=True, latency=1.0, cap=None, out=None, every_replicate=False)
    assert run_estimate(args) == 2
    assert capsys.readouterr().err == f"coopeval estimate: error: {raised.value}\n"


def test_the_budget_guard_names_the_estimate_and_the_override(llm_estimate, tmp_path):
    config = _config(tmp_path, ROSTER)
    bound = llm_estimate.totals["usd"]
    assert budget_error({**config, "max_usd": 0}, llm_estimate) is None  # no budget
    assert budget_error({**config, "max_usd": bound * 2}, llm_estimate) is None
    message = budget_error({**config, "max_usd": bound / 2}, llm_estimate)
    assert message is not None
    assert message.startswith(f"estimated cost up to ${bound:,.2f} ({llm_estimate.totals['model_calls']:,} model calls")
    assert f"exceeds max_usd = {bound / 2:g}" in message and "--config max_usd=<dollars>" in message


def test_the_budget_guard_refuses_a_run_it_cannot_bound(tmp_path):
    roster = {**ROSTER, "mechanisms": ["NoMechanism"], "replicates": 1, "max_usd": 5,
              "agents": [{"model": "openai/no-such-model-xyz", "style": "IO"}, {"model": "bot/always-defect"}]}
    message = budget_error(_config(tmp_path, roster))
    assert message is not None and "no price or no max_tokens for openai/no-such-model-xyz" in message


def test_one_simulated_cell_per_replicates_and_models_counts_as_every_cell(tmp_path):
    overlay = {
        "studies": ["gossip", "evolution"],
        "gossip": {"testbeds": ["donation"], "conditions": ["align"], "replicates": 2,
                   "models": [{"model": LLM, "params": {"max_tokens": 40}}, {"model": "openai/gpt-4o"}]},
        "evolution": {"protocols": ["vh"], "variants": ["none"], "replicates": 2, "n_agents": 4, "generations": 1,
                      "models": [{"model": LLM}, {"model": "openai/gpt-4o"}]},
    }
    config = _config(tmp_path, overlay)
    for study, cells in all_cells(config).items():  # 2 models x 2 replicates: one cell played
        assert len(cells) == 4 and len(representatives(get_study(study), cells, every_replicate=False)) == 1, study
    fast, every = estimate_config(config), estimate_config(config, every_replicate=True)
    assert fast.studies == every.studies
    def keyed(estimate):
        return {(r["study"], r["group"], r["model"], r["kind"]): r for r in estimate.rows}
    assert keyed(fast).keys() == keyed(every).keys()
    for key, row in keyed(every).items():
        assert {c: keyed(fast)[key][c] for c in ("decisions_min", "decisions_max", "output_tokens")} == {
            c: row[c] for c in ("decisions_min", "decisions_max", "output_tokens")}, key
        assert keyed(fast)[key]["input_tokens"] == pytest.approx(row["input_tokens"], rel=0.05), key
    assert fast.models[LLM]["output_tokens"] is not None and fast.models["openai/gpt-4o"]["calls"] > 0


@pytest.mark.parametrize(
    ("overrides", "yaml_text", "named"),
    [
        ({"latency": float("nan")}, None, "--latency"),
        ({"latency": float("inf")}, None, "--latency"),
        ({"out": "DIR"}, None, "--out"),
        ({}, "agents: [\n - model: x", "broken.yaml is not valid YAML"),
        ({"out": "YAML"}, None, "--out"),
    ],
)
def test_bad_flags_and_unreadable_configs_are_usage_errors(tmp_path, capsys, monkeypatch, overrides, yaml_text, named):
    """Refused with exit 2 and the flag named, before any cell is simulated (never a traceback,
    never NaN or Infinity in the JSON)."""
    import argparse

    monkeypatch.chdir(REPO)
    files = []
    if yaml_text is not None:
        (tmp_path / "broken.yaml").write_text(yaml_text, encoding="utf-8")
        files = [tmp_path / "broken.yaml"]
    values = {"configfile": files, "json": True, "latency": 1.0, "cap": None, "out": None, "every_replicate": False}
    values.update({k: {"DIR": tmp_path, "YAML": tmp_path / "config.yaml"}.get(v, v) for k, v in overrides.items()})
    assert run_estimate(argparse.Namespace(**values)) == 2
    out, err = capsys.readouterr()
    assert out == "" and named in err


def test_ollama_models_are_estimated_without_asking_their_server(monkeypatch):
    """litellm looks up an Ollama model's info on its server (POST /api/show); the estimate makes
    no network call, so such a model is unpriced with no known output cap."""
    import http.server
    import threading

    from coopeval.estimate.tokens import max_output_tokens, price_of

    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"model_info": {}}')

        def log_message(self, *args: object) -> None:
            return

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    monkeypatch.setenv("OLLAMA_API_BASE", f"http://127.0.0.1:{server.server_address[1]}")
    try:
        assert price_of("ollama_chat/llama3.1") is None and max_output_tokens("ollama/llama3.1") is None
    finally:
        server.shutdown()
    assert hits == []


def test_openrouter_models_the_map_lacks_are_priced_at_their_vendors_entry():
    """OpenRouter passes its vendors' prices through: ``openrouter/openai/o4-mini`` (absent from
    litellm's map) costs what litellm lists for ``openai/o4-mini``, with its output cap; a vendor
    without its own litellm provider (qwen) and a name the vendor spells otherwise (Anthropic's
    ``claude-3-5-…``) stay unpriced, never free."""
    from coopeval.agents.litellm_client import import_litellm
    from coopeval.estimate.tokens import (
        litellm_model_info,
        max_output_tokens,
        price_of,
        upstream_of,
    )

    assert not (litellm_model_info("openrouter/openai/o4-mini") or {}).get("input_cost_per_token")  # else the test proves nothing
    own = import_litellm().get_model_info("openai/o4-mini")
    price = price_of("openrouter/openai/o4-mini")
    assert price is not None and price.source == "litellm upstream openai/o4-mini"
    assert (price.input_usd, price.output_usd) == (own["input_cost_per_token"], own["output_cost_per_token"])
    assert max_output_tokens("openrouter/openai/o4-mini") == own["max_output_tokens"]
    assert upstream_of("openrouter/google/gemini-2.5-flash") == "gemini/gemini-2.5-flash"
    assert upstream_of("openrouter/qwen/qwen3-235b-a22b-2507") is None and upstream_of("openai/o4-mini") is None
    assert price_of("openrouter/qwen/qwen3-235b-a22b-2507") is None
    assert price_of("openrouter/anthropic/claude-3.5-sonnet-20240620") is None


_UNROUTABLE = """studies: [coopeval]
agents: [{model: openaii/gpt-4o, params: {max_tokens: 50}}, {model: bot/always-defect}]
mechanisms: [NoMechanism]
games: [prisoners_dilemma]
replicates: 1
"""


@pytest.mark.parametrize(
    ("yaml_text", "expected"),
    [
        (_UNROUTABLE, "coopeval estimate: error: invalid configuration:\n  config (coopeval study) model 'openaii/gpt-4o': litellm knows no provider 'openaii'"),
        ("studies: [evolution]\nevolution: {models: []}\n", "coopeval estimate: error: config studies: evolution would run no cell with this config"),
    ],
)
def test_what_a_run_stops_on_at_its_start_the_estimate_reports_too(tmp_path, capsys, monkeypatch, yaml_text, expected):
    """A config that validates but that a run refuses when it starts (an unroutable model, in
    the onstart check's words) or when it parses (a study without cells): exit 2, the estimate
    printed first where it could be computed."""
    import argparse

    monkeypatch.chdir(REPO)
    (tmp_path / "c.yaml").write_text(yaml_text, encoding="utf-8")
    args = argparse.Namespace(configfile=[tmp_path / "c.yaml"], json=True, latency=1.0, cap=None, out=None, every_replicate=False)
    assert run_estimate(args) == 2
    assert capsys.readouterr().err.startswith(expected)


def test_a_budget_the_estimate_exceeds_is_named_beside_the_estimate(tmp_path, capsys, monkeypatch):
    import argparse

    monkeypatch.chdir(REPO)
    text = _UNROUTABLE.replace("openaii/gpt-4o", "openai/gpt-4o-mini") + "max_usd: 0.000001\n"
    (tmp_path / "c.yaml").write_text(text, encoding="utf-8")
    args = argparse.Namespace(configfile=[tmp_path / "c.yaml"], json=True, latency=1.0, cap=None, out=None, every_replicate=False)
    assert run_estimate(args) == 0
    out, err = capsys.readouterr()
    usd = json.loads(out)["totals"]["usd"]
    assert usd > 0.000001
    assert err.startswith(f"coopeval estimate: a run of this config stops before its first call: estimated cost up to ${usd:,.2f}")
