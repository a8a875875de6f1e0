"""Import of small synthetic reference folders: every schema variant of docs/protocol/reference-data.md#layout / data README,
and strict, all-or-nothing failure on missing or malformed files."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from coopeval.evaluation.scores import discounted_average
from coopeval.studies.coopeval.reference.cli import reproduce
from coopeval.studies.coopeval.reference.importer import (
    IMPORTED_TABLES,
    ReferenceImportError,
    discover_runs,
    import_reference,
)
from coopeval.studies.coopeval.tables.defaults import TableSettings

TYPES = ["test/alpha(CoT)", "test/beta(IO)"]  # the synthetic roster of conftest.py
ALPHA, BETA = TYPES
PD = "prisoners_dilemma"


def _only(frame: pl.DataFrame, **eq: object) -> pl.DataFrame:
    for key, value in eq.items():
        frame = frame.filter(pl.col(key) == value)
    return frame


# ----------------------------------------------------------------------------------------------
# Variants that must import


def test_every_mechanism_imports_with_expected_rows(tmp_path: Path, make_run: Callable[..., Path]) -> None:
    run = make_run(tmp_path / "run7_test")
    data = import_reference(run)
    assert set(data.frames) == set(IMPORTED_TABLES)
    assert data.runs == ["run7_test"]
    assert len(data.experiments) == 6
    matchups = data["matchups"]
    # 2 types, 2 seats: 4 ordered matchups; reputation: one row per seated agent (4)
    assert matchups.group_by("mechanism").len().sort("mechanism").to_dict(as_series=False) == {
        "mechanism": ["Contracting", "Mediation", "NoMechanism", "Repetition", "Reputation", "ReputationFirstOrder"],
        "len": [4, 4, 4, 4, 4, 4],
    }
    assert (data["scores"]["source"] == "reference").all()
    assert set(data["scores"]["cell_id"].unique()) == {f"run7_test/{s}_{PD}" for s in
                                                       ("no_mechanism", "repetition", "reputation", "reputation_first_order", "mediation", "contracting")}
    actions = _only(data["decisions"], kind="action")
    per_mech = dict(actions.group_by("mechanism").len().iter_rows())
    assert per_mech == {"NoMechanism": 8, "Repetition": 24, "Reputation": 12, "ReputationFirstOrder": 12, "Mediation": 8, "Contracting": 8}
    assert data["import_flags"].is_empty()


def test_actions_map_through_enum_members_and_rounds_are_synthetic(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    make_experiment(tmp_path / "r1", "repetition")
    data = import_reference(tmp_path / "r1")
    dec = _only(data["decisions"], kind="action")
    # beta defects in round 1 only, alpha always cooperates
    beta = _only(dec, agent=BETA)
    assert set(_only(beta, round=1)["action_token"]) == {"A1"}
    assert set(beta.filter(pl.col("round") > 1)["action"]) == {0}
    assert set(_only(dec, agent=ALPHA)["action"]) == {0}
    assert sorted(dec["round"].unique()) == [1, 2, 3]
    # each decision links to its matchup; matchup ids come from matchup_payoffs.json
    assert set(dec["matchup_id"]) == set(data["matchups"]["matchup_id"])
    assert dec["decision_id"].n_unique() == dec.height
    # no response field in this variant
    assert dec["response"].null_count() == dec.height


def test_scores_use_the_stored_discount(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    make_experiment(tmp_path / "r1", "repetition")
    data = import_reference(tmp_path / "r1")
    # alpha (P1) vs beta (P2): rounds (C, D) then (C, C), (C, C): alpha gets 0, 2, 2
    row = data["matchups"].filter(pl.col("agents") == [ALPHA, BETA])
    mid = row["matchup_id"][0]
    score = _only(data["scores"], matchup_id=mid, seat=1)["score"][0]
    # δ-weighted: 0.2·0 + 0.16·2 + 0.64·2 (docs/protocol/tournament.md#delta-weighted-score)
    assert score == pytest.approx(0.2 * 0 + 0.16 * 2 + 0.8**2 * 2, abs=1e-12)
    assert score == pytest.approx(discounted_average([0, 2, 2], 0.8), abs=1e-15)
    assert row["discount"][0] == 0.8 and row["n_rounds"][0] == 3


def test_gzip_records_and_response_variant(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    folder = make_experiment(tmp_path / "r1", "no_mechanism", records="gz", response=True)
    assert (folder / "records.jsonl.gz").is_file() and not (folder / "records.jsonl").exists()
    data = import_reference(tmp_path / "r1")
    dec = _only(data["decisions"], kind="action")
    assert dec.height == 8
    assert dec["response"].null_count() == 0
    assert set(dec["response"]) == {'{"A0": 100}', '{"A1": 100}'}
    assert data["experiments"]["records_file"][0] == "records.jsonl.gz"


def test_missing_records_is_flagged_not_fatal(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    make_experiment(tmp_path / "r1", "repetition", records=None)
    data = import_reference(tmp_path / "r1")
    assert data["decisions"].is_empty()
    assert data["matchups"].height == 4 and data["scores"].height == 8
    assert data["import_flags"]["flag"].to_list() == ["records_missing"]
    assert data["experiments"]["records_file"][0] is None


@pytest.mark.parametrize("vote_prefix", [False, True], ids=["keys-1..N", "keys-M1..MN"])
@pytest.mark.parametrize("bare_record", [False, True], ids=["[record]", "record"])
def test_mediation_variants(tmp_path: Path, make_experiment: Callable[..., Path], vote_prefix: bool, bare_record: bool) -> None:
    make_experiment(tmp_path / "r1", "mediation", response=True, vote_prefix=vote_prefix, bare_record=bare_record)
    data = import_reference(tmp_path / "r1")
    dec = _only(data["decisions"], kind="action")
    # alpha always delegates: flagged mediated; beta never
    assert set(_only(dec, agent=ALPHA)["mediated"]) == {True}
    assert set(_only(dec, agent=BETA)["mediated"]) == {False}
    # alpha vs alpha: both delegate (d = 2) → mapping[2] = cooperate; alpha vs beta: d = 1 → defect
    aa = data["matchups"].filter(pl.col("agents") == [ALPHA, ALPHA])["matchup_id"][0]
    ab = data["matchups"].filter(pl.col("agents") == [ALPHA, BETA])["matchup_id"][0]
    assert set(_only(dec, matchup_id=aa)["action_token"]) == {"A0"}
    assert set(_only(dec, matchup_id=ab)["action_token"]) == {"A1"}
    votes = data["votes"]
    assert votes.height == 4 * 2 * 2 and votes["approve"].all()
    assert sorted(votes["option"].unique()) == [1, 2]
    vote_decisions = _only(data["decisions"], kind="mediator_vote")
    assert json.loads(vote_decisions["parsed"][0]) == {"M1": True, "M2": True}
    sel = data["selections"]
    assert sel.height == 4 and set(sel["selected_index"]) == {1} and sel["all_signed"].null_count() == 4
    designs = data["designs"]
    assert designs.height == 4 and set(designs["design_kind"]) == {"mediator"}
    assert json.loads(designs["design"][0]) == {"1": "A1", "2": "A0"}
    assert _only(data["decisions"], kind="mediator_design")["response"].null_count() == 4  # no response in design file
    assert data["import_flags"].is_empty()


@pytest.mark.parametrize("design_response", [False, True])
def test_contracting_variants(tmp_path: Path, make_experiment: Callable[..., Path], design_response: bool) -> None:
    make_experiment(tmp_path / "r1", "contracting", design_response=design_response, response=True)
    data = import_reference(tmp_path / "r1")
    sel = data["selections"]
    # beta in seat 1 refuses: (beta, alpha) and (beta, beta) are not active
    assert sorted(sel["all_signed"].to_list()) == [False, False, True, True]
    signs = _only(data["decisions"], kind="sign")
    assert signs.height == 8
    design = data["designs"]
    assert json.loads(design["design"][0]) == {"A0": 2, "A1": 0}
    responses = _only(data["decisions"], kind="contract_design")["response"]
    assert responses.null_count() == (0 if design_response else 4)
    # recorded points are post-contract; base points are the game's
    dec = _only(data["decisions"], kind="action")
    ab = data["matchups"].filter(pl.col("agents") == [ALPHA, BETA])["matchup_id"][0]
    rows = _only(dec, matchup_id=ab).sort("seat")
    # (C, D) with contract {C: 2, D: 0}: alpha 0 + 2 = 2, beta 3 − 2 = 1
    assert rows["points"].to_list() == [2.0, 1.0]
    assert rows["base_points"].to_list() == [0.0, 3.0]
    assert data["import_flags"].is_empty()


def test_reputation_records_one_line(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    make_experiment(tmp_path / "r1", "reputation_first_order", response=False)
    data = import_reference(tmp_path / "r1")
    m = data["matchups"]
    assert m.height == 4 and set(m["n_rounds"]) == {3}
    assert set(m["matchup_id"]) == {f"{t}#P{s}" for t in TYPES for s in (1, 2)}
    dec = _only(data["decisions"], kind="action")
    assert dec.height == 12 and sorted(dec["round"].unique()) == [1, 2, 3]
    # every seated agent plays once per round
    assert dec.group_by(["matchup_id", "round"]).len()["len"].max() == 1
    assert data["released_metrics"]["metric"].unique().to_list() == ["Mean"]


def test_three_player_public_goods(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    make_experiment(tmp_path / "r1", "mediation", game_key="public_goods")
    data = import_reference(tmp_path / "r1")
    assert data["matchups"].height == 8  # 2^3 ordered triples
    assert data["votes"].height == 8 * 3 * 3
    assert data["designs"].height == 6
    assert json.loads(data["designs"]["design"][0]) == {"1": "A1", "2": "A1", "3": "A0"}
    assert data["import_flags"].is_empty()


def test_folder_of_runs_and_discovery(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    root = tmp_path / "main_study"
    make_experiment(root / "run1_20260101_000000", "no_mechanism")
    make_experiment(root / "run2_20260102_000000", "no_mechanism")
    (root / "run1_20260101_000000" / "configs").mkdir()  # run-level clutter is ignored
    (root / "run1_20260101_000000" / "batch_config.json").write_text("{}")
    runs = discover_runs(root)
    assert [r for r, _, _ in runs] == ["run1_20260101_000000", "run2_20260102_000000"]
    data = import_reference(root)
    assert sorted(data["scores"]["run"].unique()) == ["run1_20260101_000000", "run2_20260102_000000"]
    assert data["scores"]["cell_id"].n_unique() == 2


def test_released_values_are_kept_apart(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    make_experiment(tmp_path / "r1", "no_mechanism")
    data = import_reference(tmp_path / "r1")
    rel = data["released_metrics"]
    assert set(rel["rule"]) == {"released"}
    assert sorted(rel["metric"].unique()) == ["DR", "DR_rank", "FinalPopulation", "Fitness", "Mean"]
    assert rel.height == 2 * 5


# ----------------------------------------------------------------------------------------------
# Strict validation, all or nothing


REQUIRED = [
    ("no_mechanism", "config.json"),
    ("no_mechanism", "matchup_payoffs.json"),
    ("no_mechanism", "agent_average_payoff.json"),
    ("no_mechanism", "replicator_dynamics_fitness.json"),
    ("no_mechanism", "deviation_ratings.json"),
    ("mediation", "mediator_design.json"),
    ("contracting", "contract_design.json"),
    ("reputation", "agent_average_payoff.json"),
]


def _assert_nothing_written(data_dir: Path, out: Path) -> None:
    with pytest.raises(ReferenceImportError):
        reproduce(data_dir, out, settings=TableSettings(n_bootstrap=0), progress=None)
    assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize(("stem", "filename"), REQUIRED)
def test_missing_file_names_the_file(tmp_path: Path, make_run: Callable[..., Path], stem: str, filename: str) -> None:
    run = make_run(tmp_path / "run1")
    (run / f"{stem}_{PD}" / filename).unlink()
    with pytest.raises(ReferenceImportError) as info:
        import_reference(run)
    message = str(info.value)
    assert str(run / f"{stem}_{PD}" / filename) in message
    assert "missing file; expected" in message
    assert "nothing imported" in message
    assert len(info.value.problems) == 1
    _assert_nothing_written(run, tmp_path / "out")


def _corrupt(path: Path, transform: Callable[[object], object]) -> None:
    path.write_text(json.dumps(transform(json.loads(path.read_text()))))


def _drop_first_key(d: object) -> object:
    assert isinstance(d, dict)
    return dict(list(d.items())[1:])


def _bad_enum(lines: list[str]) -> list[str]:
    return [lines[0].replace("PrisonersDilemmaAction.DEFECT", "PrisonersDilemmaAction.BETRAY").replace("PrisonersDilemmaAction.COOPERATE", "PrisonersDilemmaAction.BETRAY"), *lines[1:]]


def _bad_points(lines: list[str]) -> list[str]:
    first = json.loads(lines[0])
    first[0]["points"] = 99
    return [json.dumps(first), *lines[1:]]


MALFORMED = [
    # (stem, file, mutation, expected fragment)
    ("no_mechanism", "matchup_payoffs.json", lambda p: p.write_text("{not json"), "invalid JSON"),
    ("no_mechanism", "agent_average_payoff.json", lambda p: _corrupt(p, _drop_first_key), "keys must be exactly config.json's agent types"),
    ("no_mechanism", "deviation_ratings.json", lambda p: _corrupt(p, lambda d: dict.fromkeys(d, 1.0)), "expected a rating ≤ 0"),
    ("no_mechanism", "replicator_dynamics_fitness.json", lambda p: _corrupt(p, lambda d: {k: {"fitness": 1.0} for k in d}), "final_population"),
    ("no_mechanism", "config.json", lambda p: _corrupt(p, lambda d: {**d, "mechanism": {"type": "Repetition", "kwargs": {"num_rounds": 1}}}),
     "does not match the folder name"),
    ("no_mechanism", "config.json", lambda p: _corrupt(p, lambda d: {**d, "game": {"type": "PrisonersDilemma", "kwargs": {"payoff_matrix": {"CC": [3, 3], "CD": [0, 3], "DC": [3, 0], "DD": [1, 1]}}}}),
     "payoff_matrix['CC']"),
    ("no_mechanism", "config.json", lambda p: _corrupt(p, lambda d: {**d, "agents": [{**d["agents"][0], "type": "FooAgent"}, d["agents"][1]]}),
     "agents[0]"),
    ("no_mechanism", "records.jsonl", lambda p: p.write_text("\n".join(_bad_enum(p.read_text().splitlines())) + "\n"), "expected one of PrisonersDilemmaAction.COOPERATE"),
    ("no_mechanism", "records.jsonl", lambda p: p.write_text("\n".join(_bad_points(p.read_text().splitlines())) + "\n"), "differ from matchup_payoffs.json"),
    ("no_mechanism", "records.jsonl", lambda p: p.write_text("\n".join(p.read_text().splitlines()[1:]) + "\n"), "expected one line per match"),
    ("no_mechanism", "records.jsonl", lambda p: p.write_text(p.read_text() + "[1, 2\n"), "invalid JSON"),
    ("repetition", "matchup_payoffs.json", lambda p: _corrupt(p, lambda d: {**d, "discount": 0.5}), "mechanism.kwargs"),
    ("mediation", "records.jsonl", lambda p: p.write_text(p.read_text().replace('"selected_mediator_index": 1', '"selected_mediator_index": 2', 1)),
     "selected_mediator_designer_name"),
    ("mediation", "records.jsonl", lambda p: p.write_text(p.read_text().replace('"1": true', '"X1": true')), "expected keys '1'..'2'"),
    ("mediation", "mediator_design.json", lambda p: _corrupt(p, lambda d: {k: {"mediator": [[1, "PrisonersDilemmaAction.DEFECT"]]} for k in d}),
     "must map each k = 1..2 exactly once"),
    ("contracting", "contract_design.json", lambda p: _corrupt(p, lambda d: {k: {"contract": {"PrisonersDilemmaAction.COOPERATE": "2", "PrisonersDilemmaAction.DEFECT": 0}} for k in d}),
     "expected an integer"),
    ("contracting", "records.jsonl", lambda p: p.write_text(p.read_text().replace('"all_signed": false', '"all_signed": true')), "every signature agrees"),
    ("reputation", "records.jsonl", lambda p: p.write_text(p.read_text() + p.read_text()), "expected exactly one line"),
    ("reputation", "matchup_payoffs.json", lambda p: _corrupt(p, lambda d: {**d, "profile": d["profile"][1:]}), "expected one entry per type and seat"),
]


@pytest.mark.parametrize(("stem", "filename", "mutate", "fragment"), MALFORMED,
                         ids=[f"{s}-{f}-{i}" for i, (s, f, _, _) in enumerate(MALFORMED)])
def test_malformed_file_names_the_file_and_expectation(
    tmp_path: Path, make_run: Callable[..., Path], stem: str, filename: str, mutate: Callable[[Path], None], fragment: str
) -> None:
    run = make_run(tmp_path / "run1")
    target = run / f"{stem}_{PD}" / filename
    mutate(target)
    with pytest.raises(ReferenceImportError) as info:
        import_reference(run)
    message = str(info.value)
    assert str(target) in message, message
    assert fragment in message, message
    _assert_nothing_written(run, tmp_path / "out")


def test_corrupt_gzip_and_duplicate_records(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    folder = make_experiment(tmp_path / "r1", "no_mechanism", records="gz")
    (folder / "records.jsonl.gz").write_bytes(b"\x1f\x8b\x08\x00 this is not gzip data")
    with pytest.raises(ReferenceImportError, match=r"records\.jsonl\.gz: unreadable"):
        import_reference(tmp_path / "r1")
    folder2 = make_experiment(tmp_path / "r2", "no_mechanism", records="gz")
    (folder2 / "records.jsonl").write_text("")
    with pytest.raises(ReferenceImportError, match=r"both records\.jsonl and records\.jsonl\.gz exist"):
        import_reference(tmp_path / "r2")


def test_all_problems_are_reported_together(tmp_path: Path, make_run: Callable[..., Path]) -> None:
    run = make_run(tmp_path / "run1", stems=("no_mechanism", "repetition", "mediation"))
    (run / f"no_mechanism_{PD}" / "agent_average_payoff.json").unlink()
    (run / f"mediation_{PD}" / "mediator_design.json").write_text("[]")
    with pytest.raises(ReferenceImportError) as info:
        import_reference(run)
    paths = sorted(p.path.name for p in info.value.problems)
    assert paths == ["agent_average_payoff.json", "mediator_design.json"]


def test_not_a_data_folder(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ReferenceImportError, match="no experiment folders found"):
        import_reference(tmp_path / "empty")
    with pytest.raises(ReferenceImportError, match="missing folder"):
        import_reference(tmp_path / "nope")
    (tmp_path / "data.duckdb").write_text("not a folder")
    with pytest.raises(ReferenceImportError, match="a file, not a folder; expected a run folder"):
        import_reference(tmp_path / "data.duckdb")


def test_ablation_folder_and_optional_evaluation_files(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    # ablation batches ran replicator dynamics only (docs/protocol/evaluation.md): no deviation_ratings.json expected
    folder = make_experiment(tmp_path / "ablations1_x", "repetition")
    config = json.loads((folder / "config.json").read_text())
    config["evaluation"]["methods"] = [m for m in config["evaluation"]["methods"] if m["type"] != "deviation_rating"]
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "deviation_ratings.json").unlink()
    folder.rename(folder.parent / f"ablation_abl_repetition_d08_{PD}")
    data = import_reference(tmp_path / "ablations1_x")
    assert set(data["scores"]["mechanism"]) == {"Repetition[repetition_d08]"}
    assert "DR" not in set(data["released_metrics"]["metric"])
    assert data["import_flags"].is_empty()


def test_cli_reproduce_progress_and_exit_codes(tmp_path: Path, make_run: Callable[..., Path], capsys: pytest.CaptureFixture[str]) -> None:
    import argparse

    from coopeval.studies.coopeval.reference.cli import add_reproduce_parser, main

    run = make_run(tmp_path / "run1", stems=("no_mechanism", "mediation"))
    out = tmp_path / "out"
    assert main(["reproduce", str(run), "--out", str(out), "--bootstrap", "20"]) == 0
    err = capsys.readouterr().err
    assert f"[1/2] run1/mediation_{PD}" in err and f"[2/2] run1/no_mechanism_{PD}" in err
    assert (out / "coopeval.duckdb").is_file() and (out / "per_game.csv").is_file()
    # the wiring function works on any sub-parser set and sets the handler
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    add_reproduce_parser(sub)
    args = parser.parse_args(["reproduce", str(run), "--out", str(out), "--dr-rule", "reference-vertex"])
    assert args.handler is args.func and args.dr_rule == "reference-vertex" and args.bootstrap == 1000
    # invalid data: exit code 2, the file is named, nothing new written
    (run / f"mediation_{PD}" / "mediator_design.json").unlink()
    out2 = tmp_path / "out2"
    assert main(["reproduce", str(run), "--out", str(out2), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "mediator_design.json: missing file" in err
    assert not out2.exists()
    # --out naming a file fails at once, before the import
    (tmp_path / "a_file").write_text("x")
    assert main(["reproduce", str(run), "--out", str(tmp_path / "a_file"), "--quiet"]) == 2
    assert "--out " + str(tmp_path / "a_file") + " is a file; pass a folder" in capsys.readouterr().err


def test_reproduce_two_runs_has_standard_errors(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    root = tmp_path / "study"
    for run in ("run1_a", "run2_b"):
        make_experiment(root / run, "repetition")
    result = reproduce(root, tmp_path / "out", settings=TableSettings(n_bootstrap=30), progress=None)
    per_game = pl.read_csv(tmp_path / "out" / "per_game.csv")
    mean_rows = per_game.filter(pl.col("metric") == "Mean")
    assert mean_rows["se"].null_count() == 0  # two runs: se over runs (identical runs → 0)
    assert (mean_rows["se"] == 0).all()
    assert set(result.metrics["run"]) == {"run1_a", "run2_b"}


def test_selection_details_match_our_runs_payload(tmp_path: Path, make_experiment: Callable[..., Path]) -> None:
    make_experiment(tmp_path / "r1", "contracting")
    sel = import_reference(tmp_path / "r1")["selections"]
    row = sel.filter(pl.col("all_signed").not_()).row(0, named=True)
    details = json.loads(row["details"])
    assert details["approvals"] == [2, 2] and details["tied_options"] == [1, 2]
    assert details["signatures"] == [False, True] and details["rejecting_seats"] == [1] and details["active"] is False
    assert json.loads(row["design"]) == {"A0": 2, "A1": 0}


def test_missing_experiment_folder_is_flagged(run1_dir, tmp_path):
    import shutil

    from coopeval.studies.coopeval.reference.importer import import_reference

    run = tmp_path / "run1_copy"
    shutil.copytree(run1_dir, run)
    shutil.rmtree(run / "reputation_trust_game")
    messages: list[str] = []
    data = import_reference(run, progress=messages.append)
    flags = data.frames["import_flags"].filter(pl.col("flag") == "experiment_missing")
    assert flags["cell_id"].to_list() == ["run1_copy/reputation_trust_game"]
    assert any("WARNING: run1_copy/reputation_trust_game/ is missing" in m for m in messages)
