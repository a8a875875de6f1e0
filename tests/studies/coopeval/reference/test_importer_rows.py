"""The importer's row accumulator: released decisions go through the recorder."""

from __future__ import annotations

import pytest

from coopeval.studies.coopeval.reference.importer.rows import CellRows, TableRows, to_frames


def test_add_decision_builds_the_recorders_row_with_the_cells_columns() -> None:
    rows = TableRows()
    cell = {"cell_id": "run1/no_mechanism_prisoners_dilemma", "source": "reference", "run": "run1",
            "mechanism": "NoMechanism", "game": "PrisonersDilemma"}
    rows.add_decision(cell, "run1/x/P1", matchup_id="a|b", round=1, seat=1, agent="m(IO)", kind="action",
                      action=1, action_token="A1", points=1.0)
    assert rows.tables["decisions"] == [{**cell, "matchup_id": "a|b", "round": 1, "seat": 1, "decision_id": "run1/x/P1",
                                         "agent": "m(IO)", "kind": "action", "status": "ok", "parsed": None, "response": None,
                                         "action": 1, "action_token": "A1", "points": 1.0}]
    decisions = to_frames(rows)["decisions"].row(0, named=True)
    assert decisions["study"] == "coopeval" and decisions["n_attempts"] is None and decisions["action"] == 1


@pytest.mark.parametrize("table", ["decisions", "llm_calls"])
def test_decisions_and_calls_rows_are_not_built_by_hand(table: str) -> None:
    with pytest.raises(ValueError, match=rf"table '{table}': its rows come from the recorder"):
        TableRows().add(table, decision_id="d")


def test_cell_rows_start_every_row_with_the_cells_columns() -> None:
    rows = TableRows()
    cell = {"cell_id": "run1/repetition_stag_hunt", "source": "reference", "run": "run1",
            "mechanism": "Repetition", "game": "StagHunt"}
    out = CellRows(rows, cell)
    out.add("import_flags", flag="records_missing", detail="no records file")
    out.add_decision(f"{out.cell_id}/m/P2", matchup_id="a|b", round=0, seat=2, agent="m(CoT)", kind="vote", parsed={"1": True})
    assert out.cell_id == "run1/repetition_stag_hunt"
    assert rows.tables["import_flags"] == [{**cell, "flag": "records_missing", "detail": "no records file"}]
    (decision,) = rows.tables["decisions"]
    assert {k: decision[k] for k in (*cell, "decision_id", "seat", "kind", "parsed")} == {
        **cell, "decision_id": "run1/repetition_stag_hunt/m/P2", "seat": 2, "kind": "vote", "parsed": '{"1": true}'}
