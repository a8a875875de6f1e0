"""EvolutionStudy: config validation, cells and hashes, tables, resumable generations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from coopeval.cache.response_cache import ResponseCache
from coopeval.core.errors import ConfigError
from coopeval.core.schemas import TRANSPORT_COLUMNS
from coopeval.studies.evolution.config import validate_evolution_config
from coopeval.studies.evolution.records import TABLES
from coopeval.studies.evolution.study import EvolutionStudy, run_key
from tests.helpers import play_study, play_study_cell, study_cells

from .helpers import FakeLLM, SimulatedKill

MODEL = "bot/evo-reciprocal"
"""The configured model; the fake LLMs stand in for it."""


def _config(**evo: Any) -> dict[str, Any]:
    return {"seed": 5, "evolution": {"models": [{"model": MODEL}], **evo}}


@pytest.mark.parametrize(
    ("evo", "key", "words"),
    [
        ({"n_agents": 13}, "evolution.n_agents", "even"),
        ({"n_agents": 2}, "evolution.n_agents", "minimum"),
        ({"variants": ["bribery"]}, "evolution.variants[0]", "unknown variant"),
        ({"variants": [{"name": "x", "punishment": "bribery"}]}, "evolution.variants[0]", "invalid variant"),
        ({"percent_base": "initial"}, "evolution.percent_base", "not allowed"),
        ({"protocols": ["axelrod"]}, "evolution.protocols[0]", "not allowed"),
        ({"matrix": {"monotonicity_constant_rows": "drop"}}, "evolution.matrix.monotonicity_constant_rows", "not allowed"),
        ({"generation": 3}, "evolution", "Additional properties"),
        ({"models": [{"model": "bot/always-cooperate"}]}, "evolution.models[0].model", "not an evolution bot"),
        ({"variants": ["none", {"name": "default"}]}, "evolution.variants[1]", "used twice"),
        (
            {"models": [{"model": "bot/evo-zero"}, {"model": "bot/evo-zero", "protocols": ["horibe"]}]},
            "evolution.models[1]",
            "duplicates models[0] (bot/evo-zero) under protocol horibe",
        ),
    ],
)
def test_bad_config_names_the_key(evo: dict[str, Any], key: str, words: str) -> None:
    with pytest.raises(ConfigError) as err:
        EvolutionStudy().cells(_config(**evo))
    assert f"config {key}" in str(err.value) and words in str(err.value)


def test_one_model_may_have_one_entry_per_protocol() -> None:
    models = [{"model": "bot/evo-zero", "protocols": ["vh"]}, {"model": "bot/evo-zero", "protocols": ["horibe"], "params": {"x": 1}}]
    cells = EvolutionStudy().cells(_config(models=models))
    assert sorted((c["protocol"], c["model_label"], tuple(c["model"]["params"])) for c in cells) == [
        ("horibe", "bot/evo-zero", ("x",)),
        ("vh", "bot/evo-zero", ()),
    ]


def test_defaults_filled() -> None:
    section = validate_evolution_config({})["evolution"]
    assert section["n_agents"] == 12 and section["generations"] == 10 and section["protocols"] == ["vh", "horibe"]
    assert section["matrix"]["x_c"] == 50 and section["invasion"]["per_generation"] == 10
    assert section["compat"]["vh_score_game2_only"] is False and section["percent_base"] == "current"


def test_cells_enumeration_and_hashes() -> None:
    cfg = _config(
        replicates=2,
        variants=["none", "costly_punishment", "partner_choice", {"name": "gain3", "multiplier": 3}],
        models=[{"model": "bot/evo-reciprocal"}, {"model": "bot/evo-constant-50", "label": "half"}],
    )
    cells = EvolutionStudy().cells(cfg)
    # vh: 2 models x 4 variants x 2 reps; horibe: punishment variants skipped -> 2 x 2 x 2
    assert len(cells) == 16 + 8
    assert len({c["cell_id"] for c in cells}) == len(cells)
    assert all(len(c["cell_id"]) == 12 and c["path"].endswith(c["cell_id"]) for c in cells)
    assert cells == EvolutionStudy().cells(cfg)  # stable
    gain3 = next(c for c in cells if c["variant"] == "gain3")
    assert gain3["params"]["multiplier"] == 3.0
    horibe = next(c for c in cells if c["protocol"] == "horibe")
    assert horibe["params"]["word_limit"] == 350 and horibe["params"]["amount_unit"] == "percent"
    assert horibe["params"]["selection"] == "roulette" and horibe["params"]["gameplay_temperature"] == 0.3
    vh = cells[0]
    assert vh["params"]["amount_unit"] == "units" and vh["params"]["selection"] == "truncation_top_half"
    longer = EvolutionStudy().cells({**cfg, "evolution": {**cfg["evolution"], "generations": 12}})
    assert longer[0]["cell_id"] != vh["cell_id"] and run_key(longer[0]) == run_key(vh)
    analysis = EvolutionStudy().cells({**cfg, "evolution": {**cfg["evolution"], "invasion": {"per_generation": 3}}})
    assert run_key(analysis[0]) == run_key(vh)
    assert EvolutionStudy().label(vh) == "evolution/vh/default/bot_evo-reciprocal/r1"
    compat = EvolutionStudy().cells({**cfg, "evolution": {**cfg["evolution"], "compat": {"vh_score_game2_only": True}}})
    assert compat[0]["params"]["score_rule"] == "game2_double" and run_key(compat[0]) != run_key(vh)


def test_play_returns_every_table_with_its_schema() -> None:
    out = play_study("evolution", _config(generations=2, n_agents=4, invasion={"per_generation": 1}, matrix={"per_generation": 1}), cell=0)
    assert set(out) == set(EvolutionStudy.play_tables)
    for name, schema in TABLES.items():
        assert dict(out[name].schema) == schema, name
    assert out["evo_strategies"].height == 8 and out["evo_generations"].height == 2
    assert out["invasion_tests"].height == 2 and out["matrix_features"].height == 2
    assert out["evo_events"].filter(pl.col("context") == "evolution").height == 2 * 2 * 4 * 2
    assert out["llm_calls"].height == out["decisions"].height  # bots answer validly at once


def _llm(fail_after: int | None = None) -> FakeLLM:
    """A fake LLM for every role of the configured model (one per play, so calls are counted per play)."""
    return FakeLLM(0.8, percent=lambda s: 50.0 if s.get("recipient_last_percent") is None else min(100.0, s["recipient_last_percent"] + 5), fail_after=fail_after)


def _play(
    cell: dict[str, Any], llm: FakeLLM, cache: ResponseCache | None = None, state_dir: Path | None = None, label: str = MODEL
) -> dict[str, pl.DataFrame]:
    return play_study_cell("evolution", cell, {label: llm}, cache=cache, state_dir=state_dir)[0]


def _frames_equal(a: dict[str, pl.DataFrame], b: dict[str, pl.DataFrame], skip: tuple[str, ...] = ()) -> None:
    for name in a:
        left, right = a[name], b[name]
        drop = [c for c in ("cell_id", "latency_s", "cache_hit", *TRANSPORT_COLUMNS, *skip) if c in left.columns]
        assert left.drop(drop).equals(right.drop(drop)), name


def test_kill_during_generation_2_then_rerun(tmp_path: Path) -> None:
    cfg = _config(generations=3, n_agents=4, invasion={"per_generation": 1}, matrix={"per_generation": 0}, protocols=["horibe"])
    cell = study_cells("evolution", cfg)[0]

    clean = _llm()
    reference = _play(cell, clean)
    total = clean.calls

    cache = ResponseCache(tmp_path / "cache")
    killer = _llm(fail_after=total // 3 + 10)  # inside generation 2
    with pytest.raises(SimulatedKill):
        _play(cell, killer, cache, tmp_path / "ckpt")
    done_before_kill = killer.calls
    folders = sorted(p.name for p in next((tmp_path / "ckpt").iterdir()).iterdir())
    assert folders == ["gen_0001"]

    resume = _llm()
    out = _play(cell, resume, cache, tmp_path / "ckpt")
    assert resume.calls + done_before_kill == total  # no repeated model call
    _frames_equal(reference, out)
    cache.close()


def test_extend_generations_without_replaying(tmp_path: Path) -> None:
    base = _config(n_agents=4, invasion={"per_generation": 1}, matrix={"per_generation": 0}, protocols=["vh"])
    short = study_cells("evolution", {**base, "evolution": {**base["evolution"], "generations": 2}})[0]
    long = study_cells("evolution", {**base, "evolution": {**base["evolution"], "generations": 3}})[0]

    full = _llm()
    reference = _play(long, full)

    first = _llm()
    _play(short, first, state_dir=tmp_path)
    second = _llm()
    out = _play(long, second, state_dir=tmp_path)
    assert first.calls + second.calls == full.calls
    assert set(out["evo_events"]["cell_id"].unique()) == {long["cell_id"]}
    _frames_equal(reference, out)


def test_tables_do_not_depend_on_completion_order() -> None:
    import asyncio
    import random

    class Jittery(FakeLLM):
        def __init__(self, seed: int) -> None:
            super().__init__(0.8)
            self.random = random.Random(seed)

        async def generate(self, request):  # type: ignore[no-untyped-def]
            await asyncio.sleep(self.random.random() / 1000)
            return await super().generate(request)

    cell = study_cells("evolution", _config(generations=2, n_agents=4, invasion={"per_generation": 2}, matrix={"per_generation": 1}, protocols=["horibe"]))[0]
    outs = [_play(cell, Jittery(seed)) for seed in (1, 2)]
    _frames_equal(outs[0], outs[1])


def test_models_and_replicates_per_protocol() -> None:
    cfg = _config(
        replicates={"vh": 2, "horibe": 3},
        models=[{"model": "bot/evo-reciprocal", "protocols": ["horibe"]}, {"model": "bot/evo-constant-50"}],
    )
    cells = EvolutionStudy().cells(cfg)
    count = {(c["protocol"], c["model_label"]): 0 for c in cells}
    for c in cells:
        count[(c["protocol"], c["model_label"])] += 1
    assert count == {("vh", "bot/evo-constant-50"): 2, ("horibe", "bot/evo-reciprocal"): 3, ("horibe", "bot/evo-constant-50"): 3}
    plain = EvolutionStudy().cells(_config())
    assert "protocols" not in plain[0]["model"]  # cell hashes do not depend on the new keys


def test_the_composed_config_validates_the_section() -> None:
    from coopeval.pipeline.config import validate_config
    from coopeval.pipeline.studies import STUDIES, all_cells

    assert "evolution" in STUDIES and STUDIES["evolution"].default_enabled
    agents = {"agents": [{"model": "bot/tit-for-tat"}]}
    config = validate_config({**agents, "evolution": {"models": [{"model": "bot/evo-zero"}], "n_agents": 4, "generations": 1}})
    assert config["studies"] == ["coopeval", "gossip", "evolution"] and config["evolution"]["matrix"]["x_c"] == 50
    assert len(all_cells(config)["evolution"]) == 2
    bad_options = {"models": [{"model": "local/smollm2-135m", "params": {"max_reasoning_chars": -1}}]}
    for bad, key in (
        ({"n_agents": 5}, "evolution.n_agents"),
        ({"models": [{"model": "bot/tit-for-tat"}]}, "evolution.models[0].model"),
        (bad_options, "evolution.models[0].params.max_reasoning_chars is -1"),
    ):
        with pytest.raises(ConfigError, match=key.replace("[", r"\[").replace("]", r"\]")):
            validate_config({**agents, "evolution": bad})


def test_the_default_config_runs_every_part_of_both_protocols() -> None:
    """Issue 21 item 8: config/config.yaml's evolution section plays ≥ 2 generations with
    selection under both protocols, the later strategy prompts, one Horibe invasion test and one
    strategy matrix (a stand-in model replaces the embedded one)."""
    import yaml

    config = yaml.safe_load(Path("config/config.yaml").read_text(encoding="utf-8"))
    cells = study_cells("evolution", {"seed": config["seed"], "evolution": config["evolution"]})
    assert sorted(c["protocol"] for c in cells) == ["horibe", "vh"]
    llm = _llm()  # one stand-in for both cells, so its prompts cover both protocols
    out = {c["protocol"]: _play(c, llm, label=c["model_label"]) for c in cells}
    for protocol, tables in out.items():
        strategies = tables["evo_strategies"]
        assert sorted(set(strategies["generation"].to_list())) == [1, 2]
        second = strategies.filter(pl.col("generation") == 2)
        if protocol == "vh":
            assert second["survived"].sum() == 2 and second.filter(~pl.col("survived"))["born_generation"].to_list() == [2, 2]
        else:
            assert second["parent_rank"].null_count() == 0 and second["born_generation"].to_list() == [2] * 4
    assert any("How would you approach this game?" in p for p in llm.prompts)  # the later prompts ran
    horibe, vh = out["horibe"], out["vh"]
    assert horibe["invasion_tests"]["generation"].to_list() == [2] and horibe["matrix_features"]["generation"].to_list() == [2]
    assert horibe["strategy_matrix"].height == 121 and horibe["matrix_features"]["n_failed_cells"].to_list() == [0]
    assert vh["invasion_tests"].height == 0 and vh["strategy_matrix"].height == 0
    calls = sum(t["decisions"].height for t in out.values())
    vh_calls = (4 + 16) + (2 + 16)  # strategies + donations, generations 1 and 2
    horibe_calls = (4 + 16) + (4 + 16 + 12 + 121)  # ... + the invasion test's 12 model donations + 121 probes
    assert calls == vh_calls + horibe_calls + 4  # + the free rider's 4 scripted answers
