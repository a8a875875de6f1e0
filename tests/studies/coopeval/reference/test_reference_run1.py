"""Regression on the full released run1 data (../shared/data/coopeval_run1): import, our
evaluation path, tables and store. Full-run checks: skipped with a reason when the full folder
is absent (failed in CI); tests/data holds only a sample."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import polars as pl
import pytest

from coopeval.evaluation.tensor import build_payoff_tensor
from coopeval.studies.coopeval.tables.metrics import observations_by_cell

RUN = "coopeval_run1"
LLM = "LLM Average"

# docs/protocol/reference-data.md#fixtures fixture 1: run1 LLM averages (raw payoffs), printed to 4 decimals; None = "–".
SPEC_LLM_AVERAGES = {
    ("PrisonersDilemma", "NoMechanism"): (1.0833, 1.0000),
    ("PrisonersDilemma", "Repetition"): (1.8117, 1.9997),
    ("PrisonersDilemma", "ReputationFirstOrder"): (1.4033, None),
    ("PrisonersDilemma", "Reputation"): (1.3672, None),
    ("PrisonersDilemma", "Mediation"): (1.7500, 1.9997),
    ("PrisonersDilemma", "Contracting"): (1.8472, 2.0000),
    ("PublicGoods", "NoMechanism"): (1.0208, 1.0000),
    ("PublicGoods", "Repetition"): (1.1655, 1.4966),
    ("PublicGoods", "ReputationFirstOrder"): (1.0902, None),
    ("PublicGoods", "Reputation"): (1.0489, None),
    ("PublicGoods", "Mediation"): (1.2423, 1.5000),
    ("PublicGoods", "Contracting"): (1.4329, 1.4995),
    ("TravellersDilemma", "NoMechanism"): (2.4167, 2.0000),
    ("TravellersDilemma", "Repetition"): (2.9534, 5.0000),
    ("TravellersDilemma", "ReputationFirstOrder"): (2.2811, None),
    ("TravellersDilemma", "Reputation"): (2.0803, None),
    ("TravellersDilemma", "Mediation"): (4.0000, 5.0000),
    ("TravellersDilemma", "Contracting"): (4.0556, 5.0000),
    ("TrustGame", "NoMechanism"): (5.1667, 4.0000),
    ("TrustGame", "Repetition"): (9.3028, 9.9831),
    ("TrustGame", "ReputationFirstOrder"): (8.3510, None),
    ("TrustGame", "Reputation"): (6.7227, None),
    ("TrustGame", "Mediation"): (8.8333, 10.0000),
    ("TrustGame", "Contracting"): (8.8333, 10.0000),
    ("StagHunt", "NoMechanism"): (3.7500, 5.0000),
    ("StagHunt", "Repetition"): (4.7736, 5.0000),
    ("StagHunt", "ReputationFirstOrder"): (5.0000, None),
    ("StagHunt", "Reputation"): (5.0000, None),
    ("StagHunt", "Mediation"): (4.8889, 5.0000),
    ("StagHunt", "Contracting"): (4.1806, 5.0000),
}
MECHANISMS = ("NoMechanism", "Repetition", "ReputationFirstOrder", "Reputation", "Mediation", "Contracting")

# docs/protocol/mechanisms.md#contracting: contract active (all signed) / matchups, delegated moves / moves.
SPEC_CONTRACT_ACTIVE = {"PrisonersDilemma": (31, 36), "PublicGoods": (200, 216), "TravellersDilemma": (30, 36),
                        "TrustGame": (28, 36), "StagHunt": (27, 36), "MatchingPennies": (32, 36)}
SPEC_DELEGATED = {"PrisonersDilemma": (55, 72), "PublicGoods": (469, 648), "TravellersDilemma": (53, 72),
                  "TrustGame": (58, 72), "StagHunt": (70, 72), "MatchingPennies": (13, 72)}


@pytest.fixture(scope="module")
def result(run1_reproduced: Any) -> Any:
    return run1_reproduced


def _wide(frame: pl.DataFrame, metric: str, rule: str) -> dict[tuple[str, str], float]:
    rows = frame.filter((pl.col("metric") == metric) & (pl.col("rule") == rule))
    return {(r["cell_id"], r["agent"]): r["value"] for r in rows.iter_rows(named=True)}


def test_import_counts(result: Any) -> None:
    data = result.data
    assert data.runs == [RUN]
    assert len(data.experiments) == 36
    exp = data["experiments"]
    assert exp.height == 36 and set(exp["run"]) == {RUN}
    assert data["matchups"].filter(pl.col("mechanism").is_in(["Reputation", "ReputationFirstOrder"])).height == 5 * 12 * 2 + 18 * 2
    # action decisions per run, docs/protocol/tournament.md#matchups-and-call-counts (repetition: only the three folders with records)
    actions = data["decisions"].filter(pl.col("kind") == "action")
    counts = {(m, g): n for m, g, n in actions.group_by(["mechanism", "game"]).len().iter_rows()}
    for game in ("PrisonersDilemma", "TravellersDilemma", "TrustGame", "StagHunt", "MatchingPennies"):
        for mech in ("NoMechanism", "Mediation", "Contracting"):
            assert counts[(mech, game)] == 72
        assert counts[("Reputation", game)] == counts[("ReputationFirstOrder", game)] == 180
    for mech in ("NoMechanism", "Mediation", "Contracting"):
        assert counts[(mech, "PublicGoods")] == 648
    assert counts[("Reputation", "PublicGoods")] == 270
    assert {g for (m, g) in counts if m == "Repetition"} == {"PrisonersDilemma", "StagHunt", "TrustGame"}
    assert all(counts[("Repetition", g)] == 1080 for g in ("PrisonersDilemma", "StagHunt", "TrustGame"))
    # designs: 12 per 2-player game, 18 for Public Goods, per mechanism (78 per mechanism)
    designs = data["designs"].group_by("mechanism").len()
    assert dict(designs.iter_rows()) == {"Mediation": 78, "Contracting": 78}
    # votes: every voter rates every design in every matchup
    votes = data["votes"].group_by("mechanism").len()
    assert dict(votes.iter_rows()) == {"Mediation": 5 * 36 * 4 + 216 * 9, "Contracting": 5 * 36 * 4 + 216 * 9}
    signs = data["decisions"].filter(pl.col("kind") == "sign").height
    assert signs == 5 * 72 + 648


def test_flags(result: Any) -> None:
    flags = result.data["import_flags"]
    dr = sorted(flags.filter(pl.col("flag") == "dr_release_not_reproducible")["cell_id"])
    assert dr == [f"{RUN}/mediation_matching_pennies", f"{RUN}/no_mechanism_stag_hunt"]
    missing = sorted(flags.filter(pl.col("flag") == "records_missing")["cell_id"])
    assert missing == [f"{RUN}/repetition_{g}" for g in ("matching_pennies", "public_goods", "travellers_dilemma")]
    assert set(flags["flag"]) == {"dr_release_not_reproducible", "records_missing"}


def test_action_mapping_spot_check(result: Any) -> None:
    dec = result.data["decisions"].filter(pl.col("cell_id") == f"{RUN}/no_mechanism_prisoners_dilemma")
    # records.jsonl line 3: Gemini-B#P1 DEFECT (3 points) vs GPT-4o#P2 COOPERATE (0 points)
    m = result.data["matchups"].filter(
        (pl.col("cell_id") == f"{RUN}/no_mechanism_prisoners_dilemma")
        & (pl.col("agents") == ["google/gemini-3-flash-preview(IO)", "openai/gpt-4o-2024-05-13(CoT)"])
    )["matchup_id"][0]
    rows = dec.filter(pl.col("matchup_id") == m).sort("seat")
    assert rows["action_token"].to_list() == ["A1", "A0"]
    assert rows["points"].to_list() == [3.0, 0.0]
    td = result.data["decisions"].filter(
        (pl.col("cell_id") == f"{RUN}/no_mechanism_travellers_dilemma") & (pl.col("kind") == "action")
    )
    assert set(td["action"].unique()) <= {0, 1, 2, 3}
    assert (td["points"] == td["base_points"]).all()


def test_mean_fitness_population_equal_released_files(result: Any) -> None:
    ours, released = result.metrics, result.data["released_metrics"]
    for metric, n_expected in (("Mean", 36 * 6), ("Fitness", 24 * 6), ("FinalPopulation", 24 * 6)):
        a = _wide(ours, metric, "")
        b = _wide(released, metric, "released")
        assert len(b) == n_expected and set(a) == set(b)
        worst = max(abs(a[k] - b[k]) for k in b)
        assert worst <= 1e-9, (metric, worst)


def test_llm_averages_of_spec_section_11(result: Any) -> None:
    per_game = result.tables.per_game.filter(pl.col("agent") == LLM)
    table = {(r["game"], r["mechanism"], r["metric"]): r["mean"] for r in per_game.iter_rows(named=True)}
    for (game, mech), (mean, fitness) in SPEC_LLM_AVERAGES.items():
        assert round(table[(game, mech, "Mean")], 4) == pytest.approx(mean, abs=1e-12), (game, mech)
        if fitness is None:
            assert (game, mech, "Fitness") not in table
        else:
            assert round(table[(game, mech, "Fitness")], 4) == pytest.approx(fitness, abs=1e-12), (game, mech)
    for mech in MECHANISMS:  # Matching Pennies: zero-sum, every LLM average is 0
        assert abs(table[("MatchingPennies", mech, "Mean")]) < 1e-12
        if ("MatchingPennies", mech, "Fitness") in table:
            assert abs(table[("MatchingPennies", mech, "Fitness")]) < 5e-5


def test_dr_equals_released_ranks(result: Any) -> None:
    released = result.data["released_metrics"].filter(pl.col("metric") == "DR_rank")
    expected = {(r["mechanism"], r["game"], r["agent"]): r["value"] for r in released.iter_rows(named=True)}
    dr = result.tables.per_game.filter((pl.col("metric") == "DR") & (pl.col("agent") != LLM))
    got = {(r["mechanism"], r["game"], r["agent"]): r["mean"] for r in dr.iter_rows(named=True)}
    assert len(expected) == 24 * 6 and got == expected
    assert set(dr["dr_source"]) == {"released"}
    llm = result.tables.per_game.filter((pl.col("metric").is_in(["DR", "DR_exact"])) & (pl.col("agent") == LLM))
    assert set(llm["mean"]) == {3.5}


def test_exact_dr_matches_oracle_vectors(result: Any, oracles: dict[str, Any]) -> None:
    vectors = oracles["sets"]["coopeval_released_data"]["vectors"]
    ours = _wide(result.metrics, "DR", "strictest")
    released = _wide(result.data["released_metrics"], "DR", "released")
    cells = observations_by_cell(result.data["scores"])
    for name, vector in vectors.items():
        experiment = name.split("__", 1)[1]
        cell = f"{RUN}/{experiment}"
        expected = vector["expected"]
        for agent, rating in expected["dr_strictest_cce"].items():
            assert ours[(cell, agent)] == pytest.approx(rating, abs=1e-8), (name, agent)
        for agent, rating in expected["dr_recorded_published"].items():
            assert released[(cell, agent)] == pytest.approx(rating, abs=1e-10)
        # the tensor rebuilt from the imported scores is the oracle's
        key = next(k for k in cells if k[0] == cell)
        _agents, tensor = build_payoff_tensor(cells[key], agents=vector["input"]["agents"])
        assert np.abs(tensor - np.asarray(vector["input"]["payoff_tensor"])).max() <= 1e-12


def test_dr_comparison_table(result: Any) -> None:
    with duckdb.connect(str(result.store), read_only=True) as con:
        cmp = con.sql("SELECT * FROM dr_comparison").pl()
    assert cmp.height == 24 * 6
    per_cell = cmp.group_by("cell_id").agg(pl.col("equal").all())
    # oracle: repetition_prisoners_dilemma published = strictest; contracting_prisoners_dilemma differs
    eq = dict(per_cell.iter_rows())
    assert eq[f"{RUN}/repetition_prisoners_dilemma"] is True
    assert eq[f"{RUN}/contracting_prisoners_dilemma"] is False


def test_contract_activation_and_delegation_counts(result: Any) -> None:
    sel = result.data["selections"].filter(pl.col("mechanism") == "Contracting")
    active = {g: (int(s), int(n)) for g, s, n in sel.group_by("game").agg(pl.col("all_signed").sum(), pl.len()).iter_rows()}
    assert active == SPEC_CONTRACT_ACTIVE
    moves = result.data["decisions"].filter((pl.col("mechanism") == "Mediation") & (pl.col("kind") == "action"))
    delegated = {g: (int(s), int(n)) for g, s, n in moves.group_by("game").agg(pl.col("mediated").sum(), pl.len()).iter_rows()}
    assert delegated == SPEC_DELEGATED


def test_output_files_and_columns(result: Any) -> None:
    out = Path(result.store).parent
    for name in ("per_game", "aggregate", "design_quality"):
        for ext in ("csv", "md", "tex"):
            assert (out / f"{name}.{ext}").is_file()
    per_game = pl.read_csv(out / "per_game.csv")
    assert per_game.columns == ["mechanism", "game", "metric", "agent", "mean", "se", "rank", "ci_low", "ci_high", "tie_group", "players", "note"]
    assert dict(per_game.select("game", "players").unique().iter_rows()) == {
        "PrisonersDilemma": 2, "PublicGoods": 3, "TravellersDilemma": 2, "TrustGame": 2, "StagHunt": 2, "MatchingPennies": 2}
    assert per_game["note"].null_count() == per_game.height  # released data: no note metrics
    assert set(per_game["game"]) == {"PrisonersDilemma", "PublicGoods", "TravellersDilemma", "TrustGame", "StagHunt", "MatchingPennies"}
    assert set(per_game["mechanism"]) == set(MECHANISMS)
    assert set(per_game["metric"]) == {"Mean", "Fitness", "DR", "DR_exact"}
    assert set(per_game.filter(pl.col("mechanism").is_in(["Reputation", "ReputationFirstOrder"]))["metric"]) == {"Mean"}
    assert per_game["se"].null_count() == per_game.height  # one run: no standard error
    assert per_game.filter(pl.col("agent") == LLM)["rank"].null_count() == per_game.filter(pl.col("agent") == LLM).height
    boot = per_game.filter(pl.col("metric").is_in(["Mean", "Fitness"]))
    assert boot["ci_low"].null_count() == 0 and boot["ci_high"].null_count() == 0
    assert (boot["ci_low"] <= boot["ci_high"]).all()
    assert per_game.filter(pl.col("metric").is_in(["DR", "DR_exact"]))["ci_low"].null_count() == per_game.filter(
        pl.col("metric").is_in(["DR", "DR_exact"])).height
    aggregate = pl.read_csv(out / "aggregate.csv")
    assert aggregate.columns == per_game.columns[:-2] and set(aggregate["game"]) == {"All"}  # no players, note
    assert aggregate["se"].null_count() == 0  # se across the four games
    design = pl.read_csv(out / "design_quality.csv")
    assert design.columns == ["mechanism", "metric", "agent", "mean", "se"]
    assert set(design["mechanism"]) == {"Mediation", "Contracting"} and set(design["metric"]) == {"NS", "WD"}
    assert design.height == 2 * 2 * 7


def test_aggregate_is_normalised_after_run_averaging(result: Any) -> None:
    from coopeval.games import get_game

    per_game = result.tables.per_game
    agg = result.tables.aggregate
    for mech in ("Mediation", "Reputation"):
        mine = agg.filter((pl.col("mechanism") == mech) & (pl.col("metric") == "Mean") & (pl.col("agent") == LLM))["mean"][0]
        values = []
        for game in ("PrisonersDilemma", "PublicGoods", "TravellersDilemma", "TrustGame"):
            raw = per_game.filter((pl.col("mechanism") == mech) & (pl.col("game") == game) & (pl.col("metric") == "Mean")
                                  & (pl.col("agent") == LLM))["mean"][0]
            values.append(get_game(game).normalise(raw))
        assert mine == pytest.approx(sum(values) / 4, abs=1e-12)


def test_store_contents(result: Any) -> None:
    with duckdb.connect(str(result.store), read_only=True) as con:
        tables = {row[0] for row in con.execute("SHOW TABLES").fetchall()}
        for table in ("matchups", "scores", "decisions", "designs", "votes", "released_metrics", "selections",
                      "experiments", "import_flags", "metrics", "dr_comparison", "store_metadata"):
            assert table in tables
        n_scores = con.execute("SELECT count(*) FROM scores").fetchone()
        agents_type = con.execute("SELECT typeof(agents) FROM matchups LIMIT 1").fetchone()
        meta = dict(con.execute("SELECT key, value FROM store_metadata").fetchall())
    assert n_scores is not None and n_scores[0] == result.data["scores"].height
    assert agents_type is not None and agents_type[0] == "VARCHAR[]"
    assert meta["dr_rule"] == "strictest" and meta["runs"] == RUN
    assert not [p for p in Path(result.store).parent.iterdir() if p.name.startswith(".")]  # no temp leftovers


def test_markdown_marks(result: Any) -> None:
    text = (Path(result.store).parent / "per_game.md").read_text()
    # Prisoner's Dilemma, Mean, Mediation: Claude and Gemini-B 2.083 (rank 1, bold); GPT-4o 1.083 and Qwen 1.500 grey
    line = next(row for row in text.splitlines() if row.startswith("| Mediation | **2.083**"))
    assert line.split(" | ")[5] == "*1.083*" and line.split(" | ")[6] == "*1.500*"
    tex = (Path(result.store).parent / "aggregate.tex").read_text()
    assert r"\textbf{" in tex and r"\textcolor{gray}{" in tex and "Reputation$-$" in tex
