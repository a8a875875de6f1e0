"""Reduced rosters (:mod:`coopeval.estimate.roster`): a CoopEval cell played with one stand-in
per prompt class counts as the cell played with its whole roster."""

from __future__ import annotations

import pytest
import yaml

from coopeval.estimate.report import estimate_config
from coopeval.estimate.roster import reduce_roster
from coopeval.pipeline.config import merge_overlay, validate_config
from coopeval.pipeline.studies import all_cells
from tests.shared_data import REPO

MINI, BIG = "openai/gpt-4o-mini", "openai/gpt-4o"
ROSTER = {
    "studies": ["coopeval"],
    "agents": [
        {"model": MINI, "style": "CoT", "params": {"max_tokens": 50}},
        {"model": BIG, "style": "CoT", "params": {"max_tokens": 80}},
        {"model": MINI, "label": "mini-again", "style": "CoT", "params": {"max_tokens": 50}},
        {"model": MINI, "label": "mini-io", "style": "IO", "params": {"max_tokens": 20}},
        {"model": "bot/tit-for-tat"},
    ],
    "games": ["prisoners_dilemma", "public_goods"],
    "mechanisms": ["NoMechanism", "Repetition", "Mediation", "Contracting"],
    "mechanism_params": {"Repetition": {"num_rounds": 4, "lookup_depth": 1}},
    "replicates": 1,
}
"""Five agents in three prompt classes (three CoT stand-ins, one IO stand-in, one bot)."""


def _config(tmp_path):
    base = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    return validate_config({**merge_overlay(base, ROSTER), "cache_dir": str(tmp_path / "cache")})


def test_a_roster_is_reduced_to_one_agent_per_prompt_class(tmp_path):
    config = _config(tmp_path)
    by_mechanism = {c["mechanism"]: c for c in all_cells(config)["coopeval"] if c["game"] == "public_goods"}
    roster = reduce_roster("coopeval", by_mechanism["Contracting"])
    assert roster is not None
    assert [a.get("label") or a["model"] for a in roster.spec["agents"]] == [MINI, "mini-io", "bot/tit-for-tat"]
    assert roster.size == {f"{MINI}(CoT)": 3, "mini-io(IO)": 1, "bot/tit-for-tat": 1}
    assert roster.members[f"{MINI}(CoT)"] == {(MINI, 50): 2, (BIG, 80): 1}
    assert reduce_roster("coopeval", {**by_mechanism["Contracting"], "mechanism": "Reputation"}) is None


def test_reduced_rosters_count_as_the_whole_roster(tmp_path):
    """NoMechanism over the five agents: 5^2 = 25 prisoner's-dilemma match-ups (2 seats) and
    5^3 = 125 public-goods ones (3 seats), so each agent sits 2 x 5 + 3 x 25 = 85 times: gpt-4o
    85 action decisions, gpt-4o-mini (three entries) 255; Repetition with T = 4 four times as
    many. Every count, output bound and critical path equals the cells played with the whole
    roster (``every_replicate``); input tokens within 1 %."""
    config = _config(tmp_path)
    fast, full = estimate_config(config), estimate_config(config, every_replicate=True)
    keyed = {(r["group"], r["model"], r["kind"]): r for r in full.rows}
    assert keyed[("NoMechanism", BIG, "action")]["decisions_max"] == 85
    assert keyed[("NoMechanism", MINI, "action")]["decisions_max"] == 3 * 85
    assert keyed[("Repetition", BIG, "action")]["decisions_max"] == 4 * 85
    assert fast.studies == full.studies
    assert fast.totals["critical_path_calls"] == full.totals["critical_path_calls"]
    assert {(r["group"], r["model"], r["kind"]) for r in fast.rows} == set(keyed)
    for r in fast.rows:
        row = keyed[(r["group"], r["model"], r["kind"])]
        assert (r["decisions_min"], r["decisions_max"], r["output_tokens"]) == (
            row["decisions_min"], row["decisions_max"], row["output_tokens"]), r
        assert r["input_tokens"] == pytest.approx(row["input_tokens"], rel=0.01), r
    assert [r["decisions_max"] > 0 for r in full.rows if r["group"] == "judge"] == [True]
