"""Design-quality stage (docs/protocol/design-checks.md#ns-wd): NS/WD of every submitted design, per-agent summaries, and
hand-reasoned checks of designs from the released run1 data."""

from __future__ import annotations

import json
import math
import runpy
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl
import pytest

from coopeval.core.io import write_parquet_atomic
from coopeval.games import get_game
from coopeval.studies.coopeval.design_quality import (
    DESIGN_QUALITY_SCHEMA,
    DESIGN_QUALITY_SUMMARY_SCHEMA,
    design_quality_rows,
    design_quality_summary,
)
from coopeval.studies.coopeval.reference.importer.layout import reference_enum_members
from tests.helpers import play_bots

REPO = Path(__file__).resolve().parents[3]
CELL = {"cell_id": "c1", "source": "ours", "run": "r1"}


def design_row(game: str, mechanism: str, designer: str, design: dict[str, Any] | None, run: str = "r1") -> dict[str, Any]:
    agent, seat = designer.rsplit("#P", 1)
    return {
        **CELL,
        "run": run,
        "mechanism": mechanism,
        "game": get_game(game).name,
        "designer": designer,
        "agent": agent,
        "seat": int(seat),
        "design_kind": "mediator" if mechanism == "Mediation" else "contract",
        "design": json.dumps(design) if design is not None else None,
        "status": "ok" if design is not None else "failed",
    }


def quality(rows: pl.DataFrame) -> dict[str, tuple[bool, bool]]:
    return {d: (ns, wd) for d, ns, wd in zip(rows["designer"], rows["ns"], rows["wd"], strict=True)}


def test_hand_designs_and_schema() -> None:
    frame = pl.DataFrame(
        [
            # PD {C: 0, D: −1}: deviating from (C, C) pays 3 − 1 = 2 (no gain) → NS; but vs C
            # 2 = 2 and vs D 1 = 1, never strictly better → not WD.
            design_row("prisoners_dilemma", "Contracting", "a#P1", {"A0": 0, "A1": -1}),
            design_row("prisoners_dilemma", "Contracting", "a#P2", {"A0": 0, "A1": -2}),  # NS, WD
            design_row("prisoners_dilemma", "Contracting", "b#P1", {"A0": 0, "A1": 0}),  # base PD
            design_row("prisoners_dilemma", "Contracting", "b#P2", None),  # failed decision: skipped
        ]
    )
    rows = design_quality_rows(frame)
    assert dict(rows.schema) == DESIGN_QUALITY_SCHEMA
    assert quality(rows) == {"a#P1": (True, False), "a#P2": (True, True), "b#P1": (False, False)}
    summary = design_quality_summary(rows, frame).sort("agent")
    assert dict(summary.schema) == DESIGN_QUALITY_SUMMARY_SCHEMA
    a, b = summary.to_dicts()
    assert (a["n_designs"], a["ns_count"], a["wd_count"], a["n_failed"]) == (2, 2, 1, 0)
    assert a["ns_rate"] == 1.0 and a["wd_rate"] == 0.5
    assert a["ns_se"] == 0.0 and a["wd_se"] == pytest.approx(math.sqrt(0.5 * 0.5 / 2))
    assert (b["n_designs"], b["n_failed"], b["ns_rate"]) == (1, 1, 0.0)


def test_pooled_across_runs_and_seats() -> None:
    frame = pl.DataFrame(
        [
            design_row("public_goods", "Mediation", "x#P1", {"1": "A1", "2": "A1", "3": "A0"}, run="r1"),  # NS, WD
            design_row("public_goods", "Mediation", "x#P2", {"1": "A1", "2": "A0", "3": "A0"}, run="r1"),  # neither
            design_row("public_goods", "Mediation", "x#P3", {"1": "A1", "2": "A1", "3": "A1"}, run="r2"),  # neither
        ]
    )
    summary = design_quality_summary(design_quality_rows(frame), frame).to_dicts()
    assert len(summary) == 1
    (s,) = summary
    assert (s["n_runs"], s["n_designs"], s["ns_count"], s["wd_count"]) == (2, 3, 1, 1)
    assert s["ns_rate"] == pytest.approx(1 / 3) and s["ns_se"] == pytest.approx(math.sqrt(2 / 27))


def test_bot_designs_from_play() -> None:
    frames = []
    for mechanism in ("Mediation", "Contracting"):
        tables = play_bots(mechanism, "trust_game", ["always-cooperate", "malformed"])
        frames.append(tables["designs"])
    designs = pl.concat(frames)
    rows = design_quality_rows(designs)
    got = {(m, d): q for m, d, q in zip(rows["mechanism"], rows["designer"], zip(rows["ns"], rows["wd"], strict=True), strict=True)}
    # Enforcing mediator {1: Keep, 2: Give}: NS, not WD (the trustor delegating alone keeps: 6 < 10).
    # The malformed bot's mediator designs failed and are not evaluated.
    assert got[("Mediation", "bot/always-cooperate#P1")] == (True, False)
    assert ("Mediation", "bot/malformed#P1") not in got
    # Enforcing contract {Give: 0, Keep: −10}: NS and WD. The malformed bot's contract
    # {Give: 50, Keep: 40}: the trustee keeping against Give gets 20 + 40 − 50 = 10 = 10, and vs
    # Keep giving pays 2 + 50 − 40 = 12 > 4; the trustor: vs Give 10 vs 6 + 40 − 50 = −4; vs Keep
    # 0 + 50 − 40 = 10 > 4 → NS and WD.
    assert got[("Contracting", "bot/always-cooperate#P2")] == (True, True)
    assert got[("Contracting", "bot/malformed#P1")] == (True, True)
    summary = design_quality_summary(rows, designs)
    med = summary.filter((pl.col("mechanism") == "Mediation") & (pl.col("agent") == "bot/malformed")).to_dicts()[0]
    assert (med["n_designs"], med["n_failed"]) == (0, 2) and math.isnan(med["ns_rate"])


def test_snakemake_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    frame = pl.DataFrame([design_row("prisoners_dilemma", "Contracting", "a#P1", {"A0": 2, "A1": 0})])
    write_parquet_atomic(frame, tmp_path / "designs.parquet")
    fake = SimpleNamespace(
        input=SimpleNamespace(designs=[str(tmp_path / "designs.parquet")]),
        output=SimpleNamespace(rows=str(tmp_path / "dq.parquet"), summary=str(tmp_path / "dq_summary.parquet")),
        params={"game_params": {}},
        log=[str(tmp_path / "dq.log")],
        config={},  # the job scripts load the config's plugins (none here)
    )
    monkeypatch.setattr(sys, "stderr", sys.stderr)  # log_to replaces sys.stderr; restored after the test
    runpy.run_path(str(REPO / "workflow" / "scripts" / "design_quality.py"), init_globals={"snakemake": fake})
    rows = pl.read_parquet(tmp_path / "dq.parquet")
    assert rows["ns"].to_list() == [True] and rows["wd"].to_list() == [True]
    assert pl.read_parquet(tmp_path / "dq_summary.parquet")["n_designs"].to_list() == [1]


# ------------------------------------------------------------------------------------------------
# Released run1 designs, reasoned by hand


def run1_designs(run1: Path, folder: str) -> pl.DataFrame:
    """A ``designs`` frame from a run1 ``*_design.json`` (enum reprs → tokens via the game)."""
    path = run1 / folder
    config = json.loads((path / "config.json").read_text())
    game = get_game(config["game"]["type"])
    token = {m: f"A{i}" for i, m in enumerate(reference_enum_members(game))}
    mediation = folder.startswith("mediation")
    data = json.loads((path / ("mediator_design.json" if mediation else "contract_design.json")).read_text())
    rows = []
    for name, entry in data.items():
        if mediation:
            design: dict[str, Any] = {str(k): token[v.split(".")[1]] for k, v in entry["mediator"]}
        else:
            design = {token[k.split(".")[1]]: v for k, v in entry["contract"].items()}
        row = design_row(game.key, "Mediation" if mediation else "Contracting", name, design)
        rows.append({**row, "source": "reference", "run": "run1", "cell_id": f"run1/{folder}"})
    return pl.DataFrame(rows)


@pytest.mark.parametrize(
    ("folder", "expected"),
    [
        (
            "contracting_prisoners_dilemma",
            {
                # {C: 2, D: 0}: vs C 2 > 3 − 2 = 1; vs D 0 + 2 = 2 > 1 → NS, WD.
                "google/gemini-3-flash-preview(CoT)#P1": (True, True),
                # {C: 1, D: −1}: (C,C) 2, (D,C) 3 − 1 − 1 = 1, (C,D) 0 + 1 + 1 = 2, (D,D) 1 → NS, WD.
                "anthropic/claude-sonnet-4.5(CoT)#P1": (True, True),
                # {C: 0, D: −1}: (D,C) 3 − 1 = 2 = 2 and (C,D) 1 = (D,D) 1 → NS, never strict → not WD.
                "anthropic/claude-sonnet-4.5(CoT)#P2": (True, False),
                # {C: 1, D: 0}: the same differences as {C: 0, D: −1} → NS, not WD.
                "qwen/qwen3-30b-a3b-instruct-2507(CoT)#P1": (True, False),
                # {C: 1, D: −2}: (D,C) 3 − 2 − 1 = 0 < 2, (C,D) 0 + 1 + 2 = 3 > 1 → NS, WD.
                "qwen/qwen3-30b-a3b-instruct-2507(CoT)#P2": (True, True),
            },
        ),
        (
            "contracting_trust_game",
            {
                # {G: 0, K: −10}: trustee keeping vs Give 20 − 10 = 10 = 10 (no gain), vs Keep
                # giving 2 + 10 = 12 > 4; trustor vs Give 10 > 6 − 10, vs Keep 0 + 10 > 4 → NS, WD.
                "anthropic/claude-sonnet-4.5(CoT)#P2": (True, True),
                # {G: 5, K: 0}: trustee keeping vs Give gets 20 − 5 = 15 > 10 → neither.
                "google/gemini-3-flash-preview(CoT)#P2": (False, False),
                # {G: 11, K: 0}: trustee keeping vs Give 20 − 11 = 9 < 10, vs Keep 2 + 11 = 13 > 4;
                # trustor vs Give 10 > 6 − 11, vs Keep 0 + 11 = 11 > 4 → NS, WD.
                "google/gemini-3-flash-preview(CoT)#P1": (True, True),
                # {G: −1000000, K: 0}: keeping vs Give gets 20 + 1000000 → neither.
                "qwen/qwen3-30b-a3b-instruct-2507(CoT)#P2": (False, False),
            },
        ),
        (
            "contracting_public_goods",
            {
                # {C: 1, F: 0}: switching C → F gains 0.5 and loses the bonus 1 → NS, WD.
                "google/gemini-3-flash-preview(CoT)#P1": (True, True),
                # {C: 0, F: 0}: the base game, where free-riding dominates → neither.
                "qwen/qwen3-30b-a3b-instruct-2507(CoT)#P3": (False, False),
            },
        ),
        (
            "mediation_public_goods",
            {
                # {F, F, C}: the enforcing mediator → NS, WD (see tests/studies/coopeval/mechanisms/test_mediation.py).
                "google/gemini-3-flash-preview(CoT)#P1": (True, True),
                # {F, F, F}: mapping[3] is not Contribute → neither by definition.
                "openai/gpt-5.2(CoT)#P2": (False, False),
                # {F, C, C}: a deviator free-riding while the other two delegate gets k = 2 → 2.0 > 1.5.
                "openai/gpt-4o-2024-05-13(CoT)#P1": (False, False),
            },
        ),
        (
            "mediation_trust_game",
            {
                # {K, G}: NS (a lone deviation makes the other delegator Keep: 4 < 10); not WD
                # (the trustor delegating alone keeps, 6 < 10 against a base Give).
                "openai/gpt-5.2(CoT)#P1": (True, False),
                # {G, G}: the trustee keeping while the trustor delegates alone gets 20 > 10 → neither.
                "google/gemini-3-flash-preview(CoT)#P2": (False, False),
            },
        ),
        (
            "mediation_travellers_dilemma",
            {
                # {claim 2, claim 5}: NS (a lone claim x against 2 pays ≤ 2 < 5); not WD (against a
                # base claim of 4, delegating alone claims 2 → 4, claiming 3 → 5).
                "anthropic/claude-sonnet-4.5(CoT)#P1": (True, False),
                # {claim 4, claim 4}: mapping[2] is not claim 5 → neither.
                "openai/gpt-4o-2024-05-13(CoT)#P1": (False, False),
            },
        ),
    ],
)
def test_run1_designs_by_hand(run1_dir: Path, folder: str, expected: dict[str, tuple[bool, bool]]) -> None:
    designs = run1_designs(run1_dir, folder)
    rows = design_quality_rows(designs)
    assert rows.height == designs.height  # every released design evaluates
    got = quality(rows)
    for designer, value in expected.items():
        assert got[designer] == value, designer
