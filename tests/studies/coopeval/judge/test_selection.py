"""What the judge labels (docs/protocol/design-checks.md#what-is-judged): only the final valid action decisions of CoT agents with at
least 80 characters of response after trimming; under Mediation and Contracting only the last
decision point (the action), never designs, votes or signatures. Then a seeded sample."""

from __future__ import annotations

import polars as pl

from coopeval.studies.coopeval.judge.selection import (
    cot_agent_names,
    eligible_decisions,
    sample_decisions,
)
from tests.fakes import decision_rows

COT = ["x(CoT)", "Claude(CoT)"]
TEXT80 = "y" * 80
TEXT79 = "y" * 79


def ids(frame: pl.DataFrame) -> list[str]:
    return frame["decision_id"].to_list()


def test_cot_agent_names_use_labels_and_skip_io_and_bots():
    agents = [
        {"model": "local/smollm2-135m", "style": "IO"},
        {"model": "local/smollm2-135m", "style": "CoT"},
        {"model": "openrouter/anthropic/claude-sonnet-4.5", "style": "CoT", "label": "Claude"},
        {"model": "bot/tit-for-tat"},
    ]
    assert cot_agent_names(agents) == ["local/smollm2-135m(CoT)", "Claude(CoT)"]


def test_only_cot_actions_that_parsed_with_enough_text():
    rows = decision_rows(
        [
            {"decision_id": "keep80", "response": TEXT80},
            {"decision_id": "keep_padded", "response": "   \n" + TEXT80 + "\n\n  "},
            {"decision_id": "short79", "response": TEXT79},
            {"decision_id": "short_padded", "response": "      " + TEXT79 + "      "},
            {"decision_id": "io_agent", "agent": "x(IO)", "response": TEXT80 * 3},
            {"decision_id": "bot", "agent": "bot/tit-for-tat", "response": TEXT80 * 3},
            {"decision_id": "failed", "status": "failed", "parsed": None, "response": TEXT80 * 3},
            {"decision_id": "no_text", "response": None},
            {"decision_id": "labelled", "agent": "Claude(CoT)", "response": TEXT80},
        ]
    )
    assert ids(eligible_decisions(rows, COT)) == ["keep80", "keep_padded", "labelled"]
    assert ids(eligible_decisions(rows, COT, min_chars=79)) == [
        "keep80",
        "keep_padded",
        "labelled",
        "short79",
        "short_padded",
    ]


def test_mediation_and_contracting_only_the_last_decision_point():
    long = TEXT80 * 2
    rows = decision_rows(
        [
            {
                "decision_id": "m_design",
                "mechanism": "Mediation",
                "kind": "mediator_design",
                "round": 0,
                "response": long,
            },
            {
                "decision_id": "m_vote",
                "mechanism": "Mediation",
                "kind": "mediator_vote",
                "response": long,
            },
            {
                "decision_id": "m_action",
                "mechanism": "Mediation",
                "kind": "action",
                "response": long,
            },
            {
                "decision_id": "c_design",
                "mechanism": "Contracting",
                "kind": "contract_design",
                "round": 0,
                "response": long,
            },
            {
                "decision_id": "c_vote",
                "mechanism": "Contracting",
                "kind": "contract_vote",
                "response": long,
            },
            {"decision_id": "c_sign", "mechanism": "Contracting", "kind": "sign", "response": long},
            {
                "decision_id": "c_action",
                "mechanism": "Contracting",
                "kind": "action",
                "response": long,
            },
        ]
    )
    assert ids(eligible_decisions(rows, COT)) == ["c_action", "m_action"]


def test_game_filter_accepts_keys_and_type_names():
    rows = decision_rows(
        [
            {"decision_id": "pd", "response": TEXT80},
            {"decision_id": "sh", "game": "StagHunt", "response": TEXT80},
            {"decision_id": "tg", "game": "TrustGame", "response": TEXT80},
        ]
    )
    assert ids(eligible_decisions(rows, COT, games=["prisoners_dilemma", "TrustGame"])) == [
        "pd",
        "tg",
    ]
    assert ids(eligible_decisions(rows, COT, games=[])) == []
    assert ids(eligible_decisions(rows, COT)) == ["pd", "sh", "tg"]


def _eligible(n: int) -> pl.DataFrame:
    return decision_rows([{"decision_id": f"e{i:03d}", "response": TEXT80} for i in range(n)])


def test_sample_is_seeded_sized_and_order_independent():
    rows = _eligible(30)
    sample = sample_decisions(rows, 10, seed=42)
    assert sample.height == 10 and ids(sample) == sorted(ids(sample))
    assert ids(sample_decisions(rows, 10, seed=42)) == ids(sample)
    assert ids(sample_decisions(rows.reverse(), 10, seed=42)) == ids(sample)
    assert ids(sample_decisions(rows, 10, seed=43)) != ids(sample)


def test_sample_size_zero_or_larger_than_available_takes_everything():
    rows = _eligible(5)
    assert ids(sample_decisions(rows, 0, seed=1)) == ids(rows)
    assert ids(sample_decisions(rows, 5, seed=1)) == ids(rows)
    assert ids(sample_decisions(rows, 50, seed=1)) == ids(rows)


def test_sample_is_nearly_stable_when_decisions_are_added():
    # each decision's key comes from its own stream, so one new decision displaces at most one
    # sampled decision and cached judgements keep being reused
    before = set(ids(sample_decisions(_eligible(30), 10, seed=5)))
    after = set(ids(sample_decisions(_eligible(31), 10, seed=5)))
    assert len(before & after) >= 9
