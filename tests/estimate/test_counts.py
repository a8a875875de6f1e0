"""Decision counts of the estimate against hand-computed protocol counts (issue 24), and shrunk
evolution cells (:mod:`coopeval.estimate.shrink`) against the same cells played in full."""

from __future__ import annotations

import pytest
import yaml

from coopeval.estimate.report import estimate_config
from coopeval.pipeline.config import merge_overlay, validate_config
from tests.shared_data import REPO

LLM = "openai/gpt-4o-mini"


def _config(tmp_path, *overlays):
    config = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    for overlay in overlays:
        config = merge_overlay(config, overlay)
    return validate_config({**config, "cache_dir": str(tmp_path / "cache")})


def _calls(estimate, group, model):
    return sum(r["calls"] for r in estimate.rows if r["study"] == "evolution" and r["group"] == group and r["model"] == model)


def test_paper_evolution_calls_per_model_are_the_papers_call_budget(tmp_path):
    """config/paper.yaml's evolution grid, counted by hand (docs/protocol/evolution.md#call-budget):
    N = 12 (144 donations a generation, 12 by each agent), G = 10; Horibe: 12 strategies a
    generation, 1 invasion test (132 model donations + the free rider's 12) and 1 matrix (121
    probes) per run and generation, 10 runs of 4 models; V&H: 12 strategies, then 6 a generation,
    2 tests and 2 matrices per run and generation, 5 runs of 3 models x 2 variants."""
    paper = yaml.safe_load((REPO / "config" / "paper.yaml").read_text(encoding="utf-8"))
    estimate = estimate_config(_config(tmp_path, paper, {"studies": ["evolution"]}))
    horibe_run = 10 * 144 + 10 * 12 + 10 * 1 * 132 + 10 * 1 * 121
    vh_run = 10 * 144 + (12 + 9 * 6) + 10 * 2 * 132 + 10 * 2 * 121
    assert (horibe_run, vh_run) == (4_090, 6_566)
    for model in ("openrouter/anthropic/claude-3.5-sonnet-20240620", "openrouter/google/gemini-flash-1.5",
                  "openrouter/google/gemini-2.0-flash-001", "openrouter/google/gemini-2.5-flash"):
        assert _calls(estimate, "horibe", model) == 10 * horibe_run == 40_900, model
    for model in ("openrouter/anthropic/claude-3.5-sonnet-20240620", "openrouter/google/gemini-flash-1.5",
                  "openrouter/openai/gpt-4o-2024-08-06"):
        assert _calls(estimate, "vh", model) == 2 * 5 * vh_run, model
    free_rider = 40 * 10 * 1 * 12 + 30 * 10 * 2 * 12
    model_calls = 4 * 10 * horibe_run + 3 * 2 * 5 * vh_run
    assert estimate.totals["model_calls"] == model_calls == 360_580
    assert estimate.studies["evolution"]["decisions_max"] == model_calls + free_rider == 372_580


SMALL_EVOLUTION = {
    "studies": ["evolution"],
    "evolution": {
        "protocols": ["vh", "horibe"], "variants": ["none"], "n_agents": 4, "generations": 4, "replicates": 1,
        "models": [{"model": LLM, "params": {"max_tokens": 60}}],
        "invasion": {"per_generation": {"vh": 3, "horibe": 2}, "first_generation": 2},
        "matrix": {"per_generation": {"vh": 5, "horibe": 1}, "first_generation": 3},
    },
}


@pytest.mark.parametrize(
    ("first_invasion", "first_matrix", "counts"),
    [
        # tests from generation 2 (3 generations), matrices from generation 3 (2 generations)
        (2, 3, (4 * 16 + (4 + 3 * 2) + 3 * 3 * 12 + 2 * min(5, 4) * 121, 4 * 16 + 4 * 4 + 3 * 2 * 12 + 2 * 1 * 121)),
        # both from generation 1 (config/paper.yaml's): all 4 generations test, the shrunk cell plays 2
        (1, 1, (4 * 16 + (4 + 3 * 2) + 4 * 3 * 12 + 4 * min(5, 4) * 121, 4 * 16 + 4 * 4 + 4 * 2 * 12 + 4 * 1 * 121)),
    ],
)
def test_shrunk_evolution_cells_count_as_the_cells_played_in_full(tmp_path, first_invasion, first_matrix, counts):
    """N = 4 (16 donations a generation, 4 by each agent; a test's population of 3 copies and
    the free rider gives 12 model donations), G = 4, at most N tested a generation; the shrunk
    cell plays its test and matrix in its last simulated generation only."""
    overlay = {"evolution": {"invasion": {"first_generation": first_invasion}, "matrix": {"first_generation": first_matrix}}}
    config = _config(tmp_path, SMALL_EVOLUTION, overlay)
    shrunk, full = estimate_config(config), estimate_config(config, every_replicate=True)
    vh, horibe = counts
    assert (_calls(full, "vh", LLM), _calls(full, "horibe", LLM)) == (vh, horibe) in ((1_150, 394), (2_154, 660))
    assert (_calls(shrunk, "vh", LLM), _calls(shrunk, "horibe", LLM)) == (vh, horibe)
    assert shrunk.studies == full.studies
    keyed = {(r["group"], r["model"], r["kind"]): r for r in full.rows}
    assert {(r["group"], r["model"], r["kind"]) for r in shrunk.rows} == set(keyed)
    for r in shrunk.rows:
        row = keyed[(r["group"], r["model"], r["kind"])]
        assert (r["decisions_min"], r["decisions_max"], r["output_tokens"]) == (row["decisions_min"], row["decisions_max"], row["output_tokens"])
        assert r["input_tokens"] == pytest.approx(row["input_tokens"], rel=0.05)


REPEATED = {
    "studies": ["coopeval"],
    "agents": [{"model": LLM, "style": "CoT", "params": {"max_tokens": 50}}, {"model": "bot/tit-for-tat"}],
    "games": ["prisoners_dilemma"],
    "mechanisms": ["Repetition", "ReputationFirstOrder", "Reputation"],
    "mechanism_params": {"Repetition": {"num_rounds": 6, "lookup_depth": 2},
                         "ReputationFirstOrder": {"num_rounds": 5, "lookup_depth": 2},
                         "Reputation": {"num_rounds": 7, "lookup_depth": 2}},
    "replicates": 1,
}


def test_shrunk_repeated_mechanisms_count_as_the_cells_played_in_full(tmp_path):
    """Repetition with T = 6 over the 2 x 2 seat-ordered match-ups of the LLM and a bot: the LLM
    holds 4 of the 8 seats, so 4 x 6 = 24 of its action decisions; the judge labels each of them
    (CoT, valid); the reputation games likewise keep every round's decisions and the judge's."""
    config = _config(tmp_path, REPEATED)
    shrunk, full = estimate_config(config), estimate_config(config, every_replicate=True)
    (repeated,) = [r for r in full.rows if (r["group"], r["model"], r["kind"]) == ("Repetition", LLM, "action")]
    assert repeated["decisions_max"] == 4 * 6
    assert shrunk.studies == full.studies and shrunk.totals["critical_path_calls"] == full.totals["critical_path_calls"]
    keyed = {(r["group"], r["model"], r["kind"]): r for r in full.rows}
    assert {(r["group"], r["model"], r["kind"]) for r in shrunk.rows} == set(keyed)
    for r in shrunk.rows:
        row = keyed[(r["group"], r["model"], r["kind"])]
        assert (r["decisions_min"], r["decisions_max"]) == (row["decisions_min"], row["decisions_max"]), r
        assert r["input_tokens"] == pytest.approx(row["input_tokens"], rel=0.05), r
    assert [r["decisions_max"] > 0 for r in full.rows if r["group"] == "judge"] == [True]  # the judge's row is compared too
