"""Label shares with the correct denominator (docs/protocol/design-checks.md#label-shares) and the reference's inflated one
(compat.judge_share_denominator), on hand-computed data.

Mechanism M1, 10 judged rows (+1 failed judgement, which counts nowhere):

    (agent a, game g1): [R], [U], [U, R]     3 rows
    (agent b, game g1): [U], [U]             2 rows
    (agent a, game g2): [T]                  1 row
    (agent b, game g2): [U, S], [U], [U], [U] 4 rows

Correct shares: U 8/10, R 2/10, T 1/10, S 1/10.
Reference (subgroups = agent × game): U 8/(3+2+4) = 8/9, R 2/3, T 1/1, S 1/4.
Mechanism M2: [Other], [U] → U 1/2, Other 1/2 under both denominators.
"""

from __future__ import annotations

import polars as pl
import pytest

from coopeval.studies.coopeval.judge.aggregate import label_shares

U, R, T, S, OTHER = "Utility", "Reciprocity", "Trust", "Social", "Other"
LABELS = [U, S, R, T, "Unused", OTHER]

ROWS = [
    ("M1", "a", "g1", [R]),
    ("M1", "a", "g1", [U]),
    ("M1", "a", "g1", [U, R]),
    ("M1", "b", "g1", [U]),
    ("M1", "b", "g1", [U]),
    ("M1", "a", "g2", [T]),
    ("M1", "b", "g2", [U, S]),
    ("M1", "b", "g2", [U]),
    ("M1", "b", "g2", [U]),
    ("M1", "b", "g2", [U]),
    ("M2", "a", "g1", [OTHER]),
    ("M2", "b", "g1", [U]),
]


def judgements() -> pl.DataFrame:
    frame = pl.DataFrame(
        {
            "mechanism": [r[0] for r in ROWS] + ["M1"],
            "agent": [r[1] for r in ROWS] + ["a"],
            "game": [r[2] for r in ROWS] + ["g1"],
            "labels": [r[3] for r in ROWS] + [[]],
            "status": ["ok"] * len(ROWS) + ["failed"],
        }
    )
    return frame


def shares(frame: pl.DataFrame, mechanism: str) -> dict[str, tuple[int, int, float]]:
    part = frame.filter(pl.col("mechanism") == mechanism)
    return {
        row["label"]: (row["count"], row["denominator"], row["share"])
        for row in part.iter_rows(named=True)
    }


def test_correct_denominator_is_all_judged_rows_of_the_group():
    out = label_shares(judgements(), ["mechanism"], LABELS)
    assert out.columns == ["mechanism", "label", "count", "n_judged", "denominator", "share"]
    assert (
        out.filter(pl.col("mechanism") == "M1")["label"].to_list() == LABELS
    )  # taxonomy order, zero-filled
    m1 = shares(out, "M1")
    assert m1[U] == (8, 10, pytest.approx(0.8))
    assert m1[R] == (2, 10, pytest.approx(0.2))
    assert m1[T] == (1, 10, pytest.approx(0.1))
    assert m1[S] == (1, 10, pytest.approx(0.1))
    assert m1["Unused"] == (0, 10, 0.0) and m1[OTHER] == (0, 10, 0.0)
    assert set(out.filter(pl.col("mechanism") == "M1")["n_judged"]) == {10}
    m2 = shares(out, "M2")
    assert m2[U] == (1, 2, 0.5) and m2[OTHER] == (1, 2, 0.5)
    # several labels per row: the shares of a group do not sum to 1
    assert sum(v[2] for v in m1.values()) == pytest.approx(1.2)


def test_reference_denominator_counts_only_subgroups_where_the_label_occurs():
    out = label_shares(judgements(), ["mechanism"], LABELS, denominator="reference")
    m1 = shares(out, "M1")
    assert m1[U] == (8, 9, pytest.approx(8 / 9))
    assert m1[R] == (2, 3, pytest.approx(2 / 3))
    assert m1[T] == (1, 1, pytest.approx(1.0))
    assert m1[S] == (1, 4, pytest.approx(0.25))
    assert m1["Unused"] == (0, 0, 0.0)
    m2 = shares(out, "M2")
    assert m2[U] == (1, 1, 1.0) and m2[OTHER] == (1, 1, 1.0)  # each label seen in a one-row subgroup
    assert set(out.filter(pl.col("mechanism") == "M1")["n_judged"]) == {10}


def test_groups_by_model_and_game_and_overall():
    by_agent = label_shares(judgements(), ["agent"], LABELS)
    a = shares(by_agent.rename({"agent": "mechanism"}), "a")
    # agent a: M1 rows [R], [U], [U, R], [T] and M2 row [Other] → 5 judged rows
    assert (
        a[U] == (2, 5, pytest.approx(0.4))
        and a[R] == (2, 5, pytest.approx(0.4))
        and a[OTHER] == (1, 5, pytest.approx(0.2))
    )
    by_game = label_shares(judgements(), ["game"], LABELS)
    g2 = shares(by_game.rename({"game": "mechanism"}), "g2")
    assert g2[U] == (4, 5, pytest.approx(0.8)) and g2[T] == (1, 5, pytest.approx(0.2))
    overall = label_shares(judgements(), [], LABELS)
    assert overall.columns == ["label", "count", "n_judged", "denominator", "share"]
    assert overall.filter(pl.col("label") == U).row(0) == (U, 9, 12, 12, pytest.approx(0.75))


def test_explicit_subgroups_and_bad_denominator():
    # subgroups by game only: U occurs in g1 (5 rows) and g2 (5 rows) of M1 → 8/10
    out = label_shares(
        judgements(),
        ["mechanism"],
        LABELS,
        denominator="reference",
        subgroups=["mechanism", "game"],
    )
    assert shares(out, "M1")[U] == (8, 10, pytest.approx(0.8))
    assert shares(out, "M1")[R] == (2, 5, pytest.approx(0.4))
    with pytest.raises(ValueError, match="denominator"):
        label_shares(judgements(), ["mechanism"], LABELS, denominator="inflated")  # type: ignore[arg-type]


def test_no_judged_rows_gives_an_empty_frame():
    empty = judgements().filter(pl.col("status") == "failed")
    assert label_shares(empty, ["mechanism"], LABELS).height == 0
