"""Judge answers through the decision loop (docs/protocol/design-checks.md#what-is-judged "Our contract"): valid, multi-label,
unknown-label and malformed outputs. Unknown labels are never dropped silently: the answer is
re-asked and, after the last attempt, recorded as a failed judgement."""

from __future__ import annotations

import json

import pytest

from coopeval.agents.maker import DecisionMaker
from coopeval.cache.response_cache import ResponseCache
from coopeval.core.schemas import SCHEMAS
from coopeval.decisions.reask import MAX_ATTEMPTS
from coopeval.decisions.taxonomy import load_taxonomy
from coopeval.studies.coopeval.judge.prompt import JudgePrompt
from coopeval.studies.coopeval.judge.stage import JUDGEMENT_SCHEMA, judge_decisions
from tests.fakes import ScriptedJudge, decision_rows, judge_answer
from tests.shared_data import JUDGE_TEMPLATE

TAXONOMY = load_taxonomy()
PROMPT = JudgePrompt(TAXONOMY, JUDGE_TEMPLATE)
STYLES = {"IO": "Reply with the final answer only.", "CoT": "Think step by step."}
LONG = "I compare my payoffs carefully and pick the action that is best for me whatever the other does. "


def judge(script, responses, cache=None):
    agent = ScriptedJudge(script)
    rows = decision_rows([{"response": f"{LONG}[{marker}]"} for marker in responses])
    maker = DecisionMaker(cache, STYLES)
    judgements, calls = judge_decisions(rows, agent, maker, PROMPT, seed=3)
    return judgements, calls, agent


def test_valid_single_label():
    judgements, calls, agent = judge(
        {"[v]": [judge_answer("Individual utility maximization", 0.9, "Own payoff.")]}, ["v"]
    )
    row = judgements.row(0, named=True)
    assert row["status"] == "ok" and row["labels"] == ["Individual utility maximization"]
    assert row["confidence"] == 0.9 and row["reasoning"] == "Own payoff." and row["n_attempts"] == 1
    assert (
        row["judge_model"] == "fake/judge(IO)"
        and row["decision_id"] == "d000"
        and row["agent"] == "x(CoT)"
    )
    assert dict(judgements.schema) == JUDGEMENT_SCHEMA
    assert dict(calls.schema) == SCHEMAS["llm_calls"]
    call = calls.row(0, named=True)
    assert call["kind"] == "judge" and call["error"] == "" and call["cell_id"] == "cell00000001"
    assert call["decision_id"] == row["judge_decision_id"] and call["agent"] == "fake/judge(IO)"
    assert agent.calls == 1
    # the style instruction of the judge's style closes the prompt
    assert agent.prompts[0].endswith(STYLES["IO"])


@pytest.mark.parametrize(
    ("answer", "labels"),
    [
        ("Reciprocity, Trust evaluation", ["Reciprocity", "Trust evaluation"]),
        (
            "trust   EVALUATION , reciprocity",
            ["Reciprocity", "Trust evaluation"],
        ),  # normalised, taxonomy order
        (
            "5, Category7",
            ["Reciprocity", "Trust evaluation"],
        ),  # numeric aliases of the numbered list
        ("Reciprocity, Reciprocity, 5", ["Reciprocity"]),  # duplicates collapse
        ("Other", ["Other"]),  # the explicit fallback
        ("16", ["Other"]),
    ],
)
def test_multi_label_and_aliases(answer, labels):
    judgements, _, _ = judge({"[m]": [judge_answer(answer)]}, ["m"])
    assert judgements["status"].to_list() == ["ok"]
    assert judgements["labels"].to_list() == [labels]


def test_unknown_label_is_reasked_not_dropped():
    script = {"[u]": [judge_answer("Reciprocity, Altruism"), judge_answer("Reciprocity")]}
    judgements, calls, agent = judge(script, ["u"])
    row = judgements.row(0, named=True)
    assert row["status"] == "ok" and row["labels"] == ["Reciprocity"] and row["n_attempts"] == 2
    first = calls.filter(calls["attempt"] == 0).row(0, named=True)
    assert 'unknown justification type "Altruism"' in first["error"]
    # the re-ask shows the model its previous answer and the reason it was rejected
    assert (
        "Altruism" in agent.prompts[1]
        and 'unknown justification type "Altruism"' in agent.prompts[1]
    )


def test_unknown_label_on_every_attempt_is_a_failed_judgement():
    judgements, calls, agent = judge({"[f]": [judge_answer("Altruism")]}, ["f"])
    row = judgements.row(0, named=True)
    assert row["status"] == "failed"
    assert row["labels"] == [] and row["confidence"] is None
    assert row["n_attempts"] == MAX_ATTEMPTS == agent.calls == calls.height
    assert 'unknown justification type "Altruism"' in row["error"]


@pytest.mark.parametrize(
    ("bad", "error"),
    [
        ("I think it is reciprocity.", "no JSON object"),
        (
            '{"reasoning": "x", "confidence": "high", "justification_type": "Reciprocity"}',
            '"confidence" must be a number',
        ),
        (
            '{"reasoning": "x", "confidence": 1.5, "justification_type": "Reciprocity"}',
            '"confidence" must be between 0 and 1',
        ),
        (
            '{"reasoning": "x", "confidence": 0.5, "justification_type": ["Reciprocity"]}',
            "must be one string",
        ),
        (
            '{"Reasoning_behind_classification": "x", "Confidence": 0.5, "justification_type": "Reciprocity"}',
            "exactly the keys",
        ),
        ('{"reasoning": "x", "confidence": 0.5, "justification_type": " , "}', "names no category"),
    ],
)
def test_malformed_output_is_reasked(bad, error):
    judgements, calls, _ = judge({"[x]": [bad, judge_answer("Risk aversion", 0.6)]}, ["x"])
    assert judgements["status"].to_list() == ["ok"] and judgements["labels"].to_list() == [
        ["Risk aversion"]
    ]
    assert error in calls.filter(calls["attempt"] == 0)["error"][0]


def test_fenced_json_with_prose_is_accepted():
    text = (
        "Here is my classification:\n```json\n"
        + judge_answer("Strategic influence", 0.75)
        + "\n```\nDone."
    )
    judgements, _, _ = judge({"[p]": [text]}, ["p"])
    assert judgements["labels"].to_list() == [["Strategic influence"]]


def test_several_decisions_keep_their_order_and_rerun_replays_the_cache(tmp_path):
    script = {
        "[a]": [judge_answer("Reciprocity")],
        "[b]": [judge_answer("Altruism"), judge_answer("Other")],
        "[c]": [judge_answer("Competitiveness")],
    }
    cache = ResponseCache(tmp_path / "cache")
    try:
        first, first_calls, agent = judge(script, ["a", "b", "c"], cache)
        assert agent.calls == 4
        second, second_calls, again = judge(script, ["a", "b", "c"], cache)
    finally:
        cache.close()
    assert again.calls == 0  # every answer replayed from the cache
    assert first["decision_id"].to_list() == ["d000", "d001", "d002"]
    assert first["labels"].to_list() == [["Reciprocity"], ["Other"], ["Competitiveness"]]
    assert second.equals(first)
    assert second_calls["cache_hit"].all() and not first_calls["cache_hit"].any()
    assert json.loads(second_calls["prompt"][0]) == json.loads(first_calls["prompt"][0])


def test_capped_reasoning_is_marked_not_skipped():
    """Issue 13, 12(b): answers whose CoT reasoning filled the cap are judged and marked."""
    agent = ScriptedJudge({"[t]": [judge_answer("Reciprocity")], "[f]": [judge_answer("Other")]})
    rows = decision_rows(
        [
            {"response": f"{LONG}[t]", "reasoning_truncated": True},
            {"response": f"{LONG}[f]", "reasoning_truncated": False, "decision_id": "d001"},
        ]
    )
    judgements, _ = judge_decisions(rows, agent, DecisionMaker(None, STYLES), PROMPT, seed=3)
    assert judgements["status"].to_list() == ["ok", "ok"]
    assert judgements["reasoning_truncated"].to_list() == [True, False]
    assert judgements["labels"].to_list() == [["Reciprocity"], ["Other"]]
