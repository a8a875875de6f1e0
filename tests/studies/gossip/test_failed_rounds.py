"""Issue 36 items 3 and 4: failed gossip rounds are counted per run and per agent, a run whose
every round failed is left out of the cross-run means and marked, and every mean over fewer runs
than were played says how many it used."""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest

from coopeval.agents.protocol import DecisionRequest, Reply
from coopeval.studies.gossip.formats import GossipFormat
from coopeval.studies.gossip.summary import (
    FAILED_ROUNDS_FOOTNOTE,
    FEWER_RUNS_FOOTNOTE,
    GINI_FOOTNOTE,
    METRICS,
    footnotes,
    paper_table,
    replicate_summary,
    to_latex,
    to_markdown,
)
from tests.helpers import play_study_cell, study_cells
from tests.studies.gossip.fakes import FakeGossipLLM


class FailingGossip(FakeGossipLLM):
    """Answers every action well and every assessment with a tone that does not exist."""

    async def generate(self, request: DecisionRequest) -> Reply:
        if isinstance(request.answer_format, GossipFormat):
            self.calls += 1
            return Reply(text='{"justification": "x", "tone": "mumbling", "gossip": "?"}')
        return await super().generate(request)


def _play(agent: Any) -> dict[str, pl.DataFrame]:
    (cell,) = study_cells("gossip", {"seed": 1, "gossip": {"testbeds": ["donation"], "conditions": ["align"], "models": [{"model": "fake/gossip"}]}})
    return play_study_cell("gossip", cell, {agent.name: agent})[0]


def _agent_rounds(rounds: pl.DataFrame, statuses: set[str]) -> dict[str, int]:
    """Per agent, the rounds with one of ``statuses`` it took part in (either side), counted by hand."""
    counts: dict[str, int] = {}
    for r in rounds.iter_rows(named=True):
        if r["status"] in statuses:
            for side in ("first_agent", "second_agent"):
                counts[r[side]] = counts.get(r[side], 0) + 1
    return counts


def test_a_run_whose_every_assessment_failed_counts_every_round() -> None:
    """The issue's run: 36 rounds, every assessment failed its 6 attempts (all stored);
    a71c17f stored n_failed_rounds = 0 and a normal-looking Gini."""
    agent = FailingGossip()
    tables = _play(agent)
    assert tables["decisions"].filter(pl.col("kind") == "gossip")["status"].to_list() == ["failed"] * 36
    assert tables["llm_calls"].height == 36 + 36 * 6  # one action and six assessment attempts per round
    run = tables["gossip_run_metrics"].row(0, named=True)
    assert (run["n_rounds"], run["n_failed_rounds"]) == (36, 36)
    assert (run["n_failed_gossip_rounds"], run["n_failed_action_rounds"]) == (36, 0)
    assert run["all_rounds_failed"] is True
    agents = tables["gossip_agent_metrics"]
    expected = _agent_rounds(tables["gossip_rounds"], {"failed_gossip"})
    assert dict(zip(agents["agent"], agents["n_failed_rounds"], strict=True)) == expected
    assert sum(expected.values()) == 72  # two agents per round


def test_failed_actions_are_counted_per_run_and_agent() -> None:
    tables = _play(FakeGossipLLM(bad_rounds=frozenset({3, 7, 20})))
    run = tables["gossip_run_metrics"].row(0, named=True)
    assert (run["n_failed_rounds"], run["n_failed_action_rounds"], run["n_failed_gossip_rounds"]) == (3, 3, 0)
    assert run["all_rounds_failed"] is False
    agents = tables["gossip_agent_metrics"]
    expected = _agent_rounds(tables["gossip_rounds"], {"failed_action"})
    assert {a: n for a, n in zip(agents["agent"], agents["n_failed_rounds"], strict=True) if n} == expected
    assert dict(zip(agents["agent"], agents["n_voided"], strict=True)) == dict(zip(agents["agent"], agents["n_failed_rounds"], strict=True))


def _run(replicate: int, coop: float, gini: float, failed: int = 0, n_rounds: int = 36, **extra: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"testbed": "donation", "condition": "align", "model": "m", "gamma": 0.9, "horizon": "finite",
                           "matching": "m", "replicate": replicate, "n_rounds": n_rounds, "n_failed_rounds": failed}
    for metric in METRICS:
        row[f"{metric}_mean"] = coop
        row[f"{metric}_se"] = 0.1
    row["gini"] = gini
    row["n_negative_returns"] = 0
    row["gini_out_of_range"] = False
    row.update(extra)
    return row


def test_a_failed_run_is_left_out_of_the_means_and_marked() -> None:
    runs = pl.DataFrame([
        _run(1, 0.5, 0.2, failed=2, all_rounds_failed=False),
        _run(2, 0.7, 0.4, all_rounds_failed=False),
        _run(3, 0.0037, 0.0037, failed=36, all_rounds_failed=True),  # looks like a run, measures nothing
    ])
    row = replicate_summary(runs).row(0, named=True)
    assert row["n_replicates"] == 3 and row["failed_runs"] == 1 and row["runs_with_failed_rounds"] == 2
    assert (row["n_failed_rounds"], row["n_rounds"]) == (38, 108)
    assert row["cooperation_ratio"] == pytest.approx(0.6) and row["n_valid_cooperation_ratio"] == 2
    assert row["gini"] == pytest.approx(0.3) and row["n_valid_gini"] == 2
    table = paper_table(replicate_summary(runs))
    cells = table.row(0, named=True)
    # mean 0.6, se = std(0.5, 0.7; ddof 0) / √2 = 0.1 / √2 = 0.0707
    assert cells["Cooperation"] == "0.60 ± 0.07 (2/3 runs)"
    assert cells["Condition"] == "align ¶ (38/108 rounds failed)"
    assert footnotes(table) == [GINI_FOOTNOTE, FEWER_RUNS_FOOTNOTE, FAILED_ROUNDS_FOOTNOTE]
    assert r"align \P{} (38/108 rounds failed)" in to_latex(table)


def test_runs_stored_before_the_flag_fall_back_to_the_round_counts() -> None:
    runs = pl.DataFrame([_run(1, 0.5, 0.2), _run(2, 0.0, math.nan, failed=36)])  # no all_rounds_failed column
    row = replicate_summary(runs).row(0, named=True)
    assert row["failed_runs"] == 1 and row["cooperation_ratio"] == 0.5 and row["n_valid_cooperation_ratio"] == 1


def test_a_gini_over_partly_missing_runs_says_how_many_it_used() -> None:
    """The issue's cell: 2 of 5 runs NaN. Gini (0.1, 0.2, 0.4): mean 0.2333, deviations
    (−0.1333, −0.0333, 0.1667), variance 0.04667 / 3 = 0.015556, s.e. 0.12472 / √3 = 0.0720."""
    runs = pl.DataFrame([_run(i + 1, 0.5, g) for i, g in enumerate((0.1, 0.2, 0.4, math.nan, math.nan))])
    table = paper_table(replicate_summary(runs))
    assert table["Gini"].to_list() == ["0.23 ± 0.07† (3/5 runs)"]
    assert table["Cooperation"].to_list() == ["0.50"]  # every run used: no count
    markdown = to_markdown(table)
    assert "0.23 ± 0.07† (3/5 runs)" in markdown and FEWER_RUNS_FOOTNOTE in markdown
    assert "leaves the undefined runs out" in GINI_FOOTNOTE  # the † note covers the partial case too


def test_the_round_figures_leave_a_failed_run_out() -> None:
    """Run r1 cooperates in its 2 rounds but every assessment failed; r2 defects once and
    cooperates once: per round, cooperation is r2's alone (0.0 then 1.0), never 1.0 / 1.0."""
    from coopeval.studies.gossip.summary import cooperation_by_round

    def _round(run: str, t: int, action: str, status: str) -> dict[str, Any]:
        return {"cell_id": "c", "run": run, "model": "m", "testbed": "donation", "condition": "align", "round": t,
                "first_action": action, "status": status}

    rounds = pl.DataFrame([
        _round("r1", 1, "cooperate", "failed_gossip"), _round("r1", 2, "cooperate", "failed_gossip"),
        _round("r2", 1, "defect", "ok"), _round("r2", 2, "cooperate", "failed_gossip"),
    ])
    by_round = cooperation_by_round(rounds)
    assert by_round["cooperation"].to_list() == [0.0, 1.0] and by_round["n"].to_list() == [1, 1]


def test_run_metrics_written_before_the_failed_round_columns_still_compare(tmp_path: Any) -> None:
    """A cell's Parquet file from before issue 36 lacks the new columns: they read as null."""
    from coopeval.studies.gossip.comparisons import write_gossip_comparisons
    from coopeval.studies.gossip.records import TABLES

    new = ("n_failed_action_rounds", "n_failed_gossip_rounds", "all_rounds_failed")
    paths = []
    for model in ("a", "b"):
        for replicate in (1, 2):
            row = {c: None for c in TABLES["gossip_run_metrics"] if c not in new}
            row.update(cell_id=f"{model}{replicate}", run=f"r{replicate}", testbed="donation", condition="align", model=model,
                       replicate=replicate, matching="m", cooperation_ratio_mean=0.5 if model == "a" else 0.25 * replicate,
                       discounted_return_mean=1.0, gini=0.1, utility_gap=0.0)
            path = tmp_path / f"{model}{replicate}.parquet"
            pl.DataFrame([row], schema={c: t for c, t in TABLES["gossip_run_metrics"].items() if c not in new}).write_parquet(path)
            paths.append(str(path))
    rows = write_gossip_comparisons(paths, tmp_path / "out.parquet")
    assert rows.height > 0
