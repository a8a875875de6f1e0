"""A bad config fails before any model call, with a message naming the field and the fix."""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from coopeval.pipeline.config import ConfigError, load_config, merge_overlay, validate_config
from tests.pipeline.workflow_copy import copy_workflow

REPO = Path(__file__).resolve().parents[2]
BOTS = [{"model": "bot/tit-for-tat"}]


def test_defaults_are_filled():
    config = validate_config({"agents": BOTS})
    assert config["seed"] == 42 and config["replicates"] == 1
    assert config["evaluation"] == {"steps": 1000, "lr": 0.1, "dr_rule": "strictest"}
    assert config["agents"][0]["style"] == "IO"
    assert config["max_failed_decisions"] == 0


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"agents": BOTS, "rounds": 3}, r"config \(top level\): Additional properties .*'rounds'"),
        ({"agents": BOTS, "seed": "x"}, r"config seed: 'x' is not of type 'integer'"),
        ({"agents": [{"model": "local/smollm2-135m", "style": "cot"}]}, r"agents\[0\]\.style: 'cot' is not allowed; use one of \['CoT', 'IO'\]"),
        ({"agents": BOTS, "games": ["chess"]}, r"games\[0\]: 'chess' is not allowed"),
        ({"agents": BOTS, "mechanism_params": {"Repetition": {"discount": 1.5}}}, r"mechanism_params\.Repetition\.discount: 1\.5 is greater than"),
        ({"agents": [{"model": "bot/nice"}]}, r"agents\[0\]\.model: unknown bot 'bot/nice'; known bots: bot/always-cooperate"),
        ({"agents": [{"model": "gpt4"}]}, r"agents\[0\]\.model: 'gpt4' is not a litellm model string"),
        ({"agents": BOTS + BOTS}, r"agents\[1\]: duplicates agents\[0\]"),
        ({"games": ["trust_game"]}, r"'agents' is a required property"),
        (
            {"agents": [{"model": "openai/gpt-4o", "params": {"structured_output": "jsonschema"}}]},
            r"agents\[0\]\.params\.structured_output is 'jsonschema'; use one of \['none', 'json_schema'",
        ),
        (
            {"agents": [{"model": "openai/gpt-4o", "params": {"max_tokns": 100}}]},
            r"agents\[0\]\.params\.max_tokns is not a parameter .*; did you mean params\.max_tokens\?",
        ),
        (
            {"agents": [{"model": "openai/gpt-4o", "params": {"temprature": 0.5}}]},
            r"did you mean params\.temperature\?",
        ),
        (
            {"agents": [{"model": "local/smollm2-135m", "params": {"max_reasoning_chars": -5}}]},
            r"agents\[0\]\.params\.max_reasoning_chars is -5; use a whole number of characters >= 0",
        ),
        (
            {"agents": [{"model": "openai/gpt-4o", "params": {"max_reasoning_chars": 1.5}}]},
            r"agents\[0\]\.params\.max_reasoning_chars is 1\.5",
        ),
        ({"agents": [{"model": "openai/gpt-4o", "params": {"send_seed": "yes"}}]}, r"agents\[0\]\.params\.send_seed is 'yes'; use true or false"),
        ({"agents": BOTS, "judge": {"model": "gpt-5.2"}}, r"config judge\.model: 'gpt-5\.2' is not a litellm model string"),
        ({"agents": BOTS, "judge": {"model": "openai/gpt-5.2", "params": {"grammar_field": "gramar"}}}, r"config judge\.params\.grammar_field is 'gramar'; use one of"),
    ],
)
def test_invalid_configs_name_the_field(config, message):
    with pytest.raises(ConfigError, match=message):
        validate_config(config)


def test_overlay_replaces_lists_and_merges_mappings():
    base = {"agents": BOTS, "evaluation": {"steps": 10, "lr": 0.5}}
    merged = merge_overlay(base, {"agents": [{"model": "bot/always-defect"}], "evaluation": {"steps": 20}})
    assert merged == {"agents": [{"model": "bot/always-defect"}], "evaluation": {"steps": 20, "lr": 0.5}}


DEFAULT_CONFIG = "config.yaml"
"""The Snakefile's ``configfile:``; every other shipped config is an overlay on it."""

SHIPPED_OVERLAYS = (
    "ablations.yaml", "human.yaml", "paper.yaml", "paper_sim.yaml", "paraphrase.yaml", "paraphrase_bots.yaml",
    "public_goods_n.yaml", "slurm_smoke.yaml", "smoke.yaml",
)
"""Every overlay in config/, each run as ``snakemake all --configfile config/<name>``."""


def test_every_shipped_config_is_tested():
    shipped = {p.name for p in (REPO / "config").iterdir() if p.suffix in (".yaml", ".yml")}
    assert shipped == {DEFAULT_CONFIG, *SHIPPED_OVERLAYS}, "add the new config to SHIPPED_OVERLAYS"


def test_the_default_config_is_valid():
    config = load_config([REPO / "config" / DEFAULT_CONFIG])
    assert config["agents"][0]["model"] == "local/smollm2-135m"


@pytest.mark.parametrize("overlay", SHIPPED_OVERLAYS)
def test_shipped_overlay_is_valid_over_the_default(overlay):
    """Each overlay merged over config/config.yaml by Snakemake's own merge (the one behind
    ``--configfile``), which must equal :func:`merge_overlay`, then validated. An absent file
    fails: ``load_config`` raises ConfigError naming it."""
    from snakemake.utils import update_config

    default_path, overlay_path = REPO / "config" / DEFAULT_CONFIG, REPO / "config" / overlay
    default = yaml.safe_load(default_path.read_text(encoding="utf-8"))
    layer = yaml.safe_load(overlay_path.read_text(encoding="utf-8"))
    as_snakemake = copy.deepcopy(default)
    update_config(as_snakemake, layer)
    assert merge_overlay(default, layer) == as_snakemake
    config = load_config([default_path, overlay_path])
    assert config == validate_config(as_snakemake)


# The paper's repeated-game protocol (arXiv 2604.15267; docs/protocol/mechanisms.md): exactly
# T = 15 rounds, δ = 0.8, k = 3; Reputation− recurses once, Reputation+ to depth 3.
PAPER_REPEATED = {
    "Repetition": {"num_rounds": 15, "discount": 0.8, "lookup_depth": 3},
    "ReputationFirstOrder": {"num_rounds": 15, "discount": 0.8, "lookup_depth": 3, "max_recursion_depth": 1},
    "Reputation": {"num_rounds": 15, "discount": 0.8, "lookup_depth": 3, "max_recursion_depth": 3},
}


@pytest.mark.parametrize("overlay", ["paper.yaml", "paper_sim.yaml", "ablations.yaml", "smoke.yaml"])
def test_paper_overlays_play_the_papers_horizon(overlay):
    """An overlay that stands for the paper's grid plays T = 15 whatever the default config's
    horizon (its mechanism_params are merged per mechanism over the default's)."""
    config = load_config([REPO / "config" / DEFAULT_CONFIG, REPO / "config" / overlay])
    for mechanism, expected in PAPER_REPEATED.items():
        assert config["mechanism_params"][mechanism] == expected, mechanism


def test_a_missing_overlay_fails():
    with pytest.raises(ConfigError, match=r"config file .*absent\.yaml does not exist"):
        load_config([REPO / "config" / DEFAULT_CONFIG, REPO / "config" / "absent.yaml"])


@pytest.mark.slow
def test_snakemake_rejects_bad_config_before_any_job(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("agents:\n  - model: bot/tit-for-tat\n    temperature: 1\n")
    result = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "--configfile", str(bad)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode != 0
    assert "agents[0]: Additional properties are not allowed ('temperature' was unexpected)" in result.stdout + result.stderr


def test_unknown_embedded_model_fails_at_validation():
    with pytest.raises(ConfigError, match=r"agents\[0\]\.model: unknown embedded model 'local/llama-7b'; known: local/smollm2-135m, or local/file:<path to a \.gguf file>"):
        validate_config({"agents": [{"model": "local/llama-7b"}]})


def test_api_keys_in_params_are_rejected():
    with pytest.raises(ConfigError, match=r"agents\[0\]\.params\.api_key: API keys must not be in the config"):
        validate_config({"agents": [{"model": "openai/gpt-4o", "params": {"api_key": "sk-x"}}]})


def test_a_labelled_second_copy_of_a_bot_is_distinct():
    from coopeval.agents.registry import make_agent

    config = validate_config({"agents": [*BOTS, {"model": "bot/tit-for-tat", "label": "tft-2"}]})
    assert make_agent(config["agents"][1]).name == "bot/tft-2"


def test_variant_parameter_typo_names_the_allowed_keys():
    config = {"agents": BOTS, "mechanisms": ["Repetition"], "variants": [{"mechanism": "Repetition", "name": "k2", "params": {"lookup_dept": 2}}]}
    with pytest.raises(ConfigError, match=r"variants\[0\]\.params: .*'lookup_dept'.*Allowed keys for Repetition: discount, lookup_depth, num_rounds"):
        validate_config(config)


def test_agent_options_of_bots_are_not_read():
    from coopeval.agents.registry import entry_error

    assert entry_error("bot/tit-for-tat", {"max_reasoning_chars": -5}) is None
    assert entry_error("openai/gpt-4o", {"max_reasoning_chars": 0, "structured_output": "grammar", "deadline_s": 2}) is None
    assert entry_error("gpt-4o", {}) == (
        "model: 'gpt-4o' is not a litellm model string; write provider/model, e.g. openrouter/openai/gpt-4o or local/smollm2-135m"
    )


def test_unknown_litellm_provider_is_named_with_the_closest_ones(tmp_path):
    from coopeval.pipeline.studies import run_start_errors

    config = validate_config({"agents": [*BOTS, {"model": "openaii/gpt-4o"}, {"model": "anthropic/claude-sonnet-4.5"}]})
    config["cache_dir"] = str(tmp_path / "cache")
    assert run_start_errors(config) == [
        "config (coopeval study) model 'openaii/gpt-4o': litellm knows no provider 'openaii' in 'openaii/gpt-4o'; "
        "did you mean openai or openai_like or openinfer? (see litellm's provider list)"
    ]
    assert (tmp_path / "cache").is_dir()
    config = validate_config({"agents": BOTS, "cache_dir": "/proc/no/cache"})
    assert run_start_errors(config) == ["config cache_dir: cannot create '/proc/no/cache' (No such file or directory); choose a writable folder"]


@pytest.fixture(scope="module")
def workflow_copy(tmp_path_factory):
    return copy_workflow(tmp_path_factory.mktemp("workflow"))


ROSTER = "studies: [coopeval]\ngames: [prisoners_dilemma]\nmechanisms: [NoMechanism]\nagents:\n  - model: bot/tit-for-tat\n"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("overlay", "dry_run", "message"),
    [
        # checked once at the start of a real run (onstart): the provider table needs litellm
        ("  - model: openaii/gpt-4o\n", False, "model 'openaii/gpt-4o': litellm knows no provider 'openaii'"),
        ("cache_dir: /proc/no/cache\n", False, "config cache_dir: cannot create '/proc/no/cache'"),
        ("    mechanisms: [Mediation]\n", True, "config studies: coopeval would run no cell with this config"),
    ],
)
def test_snakemake_refuses_before_any_job(workflow_copy, overlay, dry_run, message):
    (workflow_copy / "bad.yaml").write_text(ROSTER + overlay)
    command = [sys.executable, "-m", "snakemake", "--cores", "1", "all", "--configfile", "bad.yaml"]
    result = subprocess.run([*command, *(["--dry-run"] if dry_run else [])], cwd=workflow_copy, capture_output=True, text=True, timeout=300)
    assert result.returncode != 0
    assert message in result.stdout + result.stderr
    assert not (workflow_copy / "results" / "play").exists()


def test_the_dr_rule_choices_are_the_canonical_rules_of_the_solver():
    """``evaluation.dr_rule`` accepts exactly the canonical names the deviation-rating code maps
    its rules and aliases to (declared once, in coopeval.evaluation.dr_rules), default first."""
    from coopeval.evaluation.deviation import canonical_rule
    from coopeval.evaluation.dr_rules import DR_RULE_ALIASES
    from coopeval.pipeline.config import config_schema

    rule = config_schema()["properties"]["evaluation"]["properties"]["dr_rule"]
    assert rule["enum"] == ["strictest", "reference-vertex"] and rule["default"] == "strictest"
    assert sorted({canonical_rule(name) for name in DR_RULE_ALIASES}) == sorted(rule["enum"])


@pytest.mark.parametrize(
    ("overlay", "expected"),
    [
        # JSON Schema's `number` admits NaN and infinities; they would switch a budget off or break a cell id
        ("max_usd: .nan\n", "config max_usd: nan is not a finite number"),
        ("mechanism_params:\n  Repetition: {discount: .inf}\n", "config mechanism_params.Repetition.discount: inf is not a finite number"),
        ("agents:\n  - {model: openai/gpt-4o, params: {temperature: .nan}}\n", "config agents[0].params.temperature: nan is not a finite number"),
        # sampling bounds the project reads itself
        ("agents:\n  - {model: openai/gpt-4o, params: {max_tokens: 0}}\n", "config agents[0].params.max_tokens is 0; use a whole number of tokens >= 1"),
        ("agents:\n  - {model: openai/gpt-4o, params: {max_tokens: '100'}}\n", "config agents[0].params.max_tokens is '100'"),
        ("agents:\n  - {model: openai/gpt-4o, params: {temperature: -1}}\n", "config agents[0].params.temperature is -1; use a number >= 0"),
        ("prompts_dir: /nonexistent/prompts\n", "config prompts_dir: '/nonexistent/prompts' holds no prompt templates"),
        ("agents: [\n", "is not valid YAML"),
    ],
)
def test_values_no_run_could_use_are_refused_naming_the_field(tmp_path, monkeypatch, overlay, expected):
    monkeypatch.chdir(REPO)
    path = tmp_path / "overlay.yaml"
    path.write_text(overlay, encoding="utf-8")
    with pytest.raises(ConfigError) as raised:
        load_config([REPO / "config" / DEFAULT_CONFIG, path])
    assert expected in str(raised.value)
    if "YAML" in expected:
        assert str(path) in str(raised.value)
