"""The judge's shards: one job per (mechanism, game) when every eligible decision is judged,
one job for a sample; the gathered shards equal one job over all cells."""

from __future__ import annotations

import polars as pl

from coopeval.core.schemas import TRANSPORT_COLUMNS
from coopeval.studies.coopeval.judge.shards import ALL, gather_judgements, judge_shards
from coopeval.studies.coopeval.judge.stage import run_judge
from tests.fakes import ScriptedJudge, decision_rows, judge_answer
from tests.shared_data import REPO

LONG = "Defecting pays more whatever the other player does, so I maximise my own payoff by defecting. "
AGENTS = [{"model": "local/smollm2-135m", "style": "CoT", "label": "x"}, {"model": "bot/tit-for-tat"}]
JUDGE = {"model": "fake/judge", "style": "IO", "params": {}, "sample_size": 0, "min_chars": 80}


def _cell(mechanism, game, replicate, variant="default", agents=AGENTS):
    return {"mechanism": mechanism, "game": game, "replicate": replicate, "variant": variant, "agents": agents}


def test_every_decision_judged_gives_one_shard_per_mechanism_and_game():
    cells = [_cell(m, g, r) for m in ("Repetition", "Mediation") for g in ("stag_hunt", "trust_game") for r in (1, 2, 3)]
    cells.append(_cell("Repetition", "stag_hunt", 1, variant="rounds_5"))  # ablations are never judged
    shards = judge_shards(cells, sample_size=0)
    assert sorted(shards) == ["Mediation-stag_hunt", "Mediation-trust_game", "Repetition-stag_hunt", "Repetition-trust_game"]
    assert [c["replicate"] for c in shards["Repetition-stag_hunt"]] == [1, 2, 3]
    assert all(c["variant"] == "default" for cs in shards.values() for c in cs)


def test_a_sample_is_one_shard_and_no_default_cell_still_gives_the_empty_job():
    cells = [_cell("Repetition", "stag_hunt", r) for r in (1, 2)] + [_cell("Repetition", "stag_hunt", 1, "rounds_5")]
    assert {k: len(v) for k, v in judge_shards(cells, sample_size=50).items()} == {ALL: 2}
    assert judge_shards([_cell("Repetition", "stag_hunt", 1, "rounds_5")], sample_size=0) == {ALL: []}


def test_cells_without_a_cot_agent_are_not_read():
    """They have no eligible decision; reading them would hold the judge until the last cell."""
    io_only = [{"model": "local/smollm2-135m", "style": "IO"}, {"model": "bot/tit-for-tat"}]
    cells = [_cell("NoMechanism", "stag_hunt", 1), _cell("Repetition", "stag_hunt", 1, agents=io_only)]
    assert judge_shards(cells, sample_size=50) == {ALL: [cells[0]]}
    assert list(judge_shards(cells, sample_size=0)) == ["NoMechanism-stag_hunt"]
    assert judge_shards(cells[1:], sample_size=50) == {ALL: []}


def _judge(tmp_path, name, frames):
    paths = []
    for i, frame in enumerate(frames):
        path = tmp_path / name / f"decisions{i}.parquet"
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.write_parquet(path)
        paths.append(path)
    outputs = {t: tmp_path / name / "out" / f"{t}.parquet" for t in ("judgements", "llm_calls")}
    agent = ScriptedJudge({"[b": [judge_answer("Strategic equilibrium focus")], "[": [judge_answer("Individual utility maximization")]})
    run_judge(paths, outputs, JUDGE, AGENTS, seed=7, cache_dir=str(tmp_path / name / "cache"),
              prompts_dir=REPO / "resources" / "prompts", judge_agent=agent)
    return outputs


def test_gathered_shards_equal_one_job_over_all_cells(tmp_path):
    cell_a = decision_rows([{"decision_id": f"a{i}", "response": LONG + f"[a{i}]"} for i in range(3)])
    cell_b = decision_rows(
        [{"decision_id": f"b{i}", "response": LONG + f"[b{i}]"} for i in range(2)]
        + [{"decision_id": "b9", "response": "short"}]  # not eligible
    ).with_columns(pl.lit("cell00000002").alias("cell_id"), pl.lit("Repetition").alias("mechanism"))
    whole = _judge(tmp_path, "whole", [cell_b, cell_a])
    shard_outputs = [_judge(tmp_path, "shard_b", [cell_b]), _judge(tmp_path, "shard_a", [cell_a])]
    gathered = {t: tmp_path / "gathered" / f"{t}.parquet" for t in ("judgements", "llm_calls")}
    counts = gather_judgements({t: [o[t] for o in shard_outputs] for t in gathered}, gathered)
    assert counts == {"judgements": 5, "llm_calls": 5}
    judged = pl.read_parquet(gathered["judgements"])
    assert judged["decision_id"].to_list() == ["a0", "a1", "a2", "b0", "b1"]
    assert judged.filter(pl.col("decision_id") == "b0")["labels"].to_list() == [["Strategic equilibrium focus"]]
    assert judged.equals(pl.read_parquet(whole["judgements"]))
    volatile = ["latency_s", *TRANSPORT_COLUMNS]  # wall clock and timing-dependent transport counts
    assert pl.read_parquet(gathered["llm_calls"]).drop(volatile).equals(
        pl.read_parquet(whole["llm_calls"]).sort(["decision_id", "attempt"]).drop(volatile)
    )
