"""Issue 13, fault kinds 1, 2, 3 (parser side) and 12(b): which object is the answer.

Every case goes through :func:`coopeval.decisions.parsing.check_answer`, the one parser of the
decision loop and of ``coopeval check-answer``; offsets are counted by hand in the comments.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.agents.maker import DecisionMaker
from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.core.schemas import SCHEMAS
from coopeval.decisions import (
    PARSER_VERSION,
    ActionDistribution,
    ContractDesign,
    ContractVote,
    JudgeLabels,
    MediatorDesign,
    MediatorVote,
    Signature,
)
from coopeval.decisions.parsing import check_answer
from coopeval.decisions.reasoning import reasoning_capped, reasoning_spans, strip_reasoning
from coopeval.studies.evolution.formats import DonationFormat
from coopeval.studies.gossip.formats import PD_ACTION

PD = ActionDistribution(("A0", "A1"))
HINT = " (write strict JSON: double-quoted keys, plain numbers without %, no trailing comma)"
JUDGE = JudgeLabels(("Reciprocity", "Risk aversion"))


def judge_text(label: str, reasoning: str = "r") -> str:
    return json.dumps({"reasoning": reasoning, "confidence": 0.5, "justification_type": label})


# --------------------------------------------------------------------------------------------
# kind 1: the last object-like span is the answer, decoded strictly
# --------------------------------------------------------------------------------------------


def test_issue_example_percent_in_final_object() -> None:
    text = '{"A0": 100, "A1": 0} then on reflection {"A0": 70%, "A1": 30%}'
    got = check_answer(PD, text)
    assert not got.valid and got.parsed is None and got.code == "syntax"
    assert got.offset == 40  # len('{"A0": 100, "A1": 0} then on reflection ')
    assert got.error == (
        'the last JSON object {"A0": 70%, "A1": 30%} is not valid JSON: expecting \',\' delimiter at: '
        '%, "A1": 30%}' + HINT
    )


@pytest.mark.parametrize(
    ("fmt", "text", "problem"),
    [
        (PD, '{"A0": 100, "A1": 0}\nFinal: {"A0": 60, "A1": 40,}', "a trailing comma before '}'"),
        (Signature(), '{"sign": true}\nOn reflection: {"sign": False}', "expecting value at: False}"),
        (MediatorVote.over(2), '{"M1": true, "M2": true} no: {"M1": true, "M2": false,}', "a trailing comma before '}'"),
        (ContractVote.over(1), "{\"C1\": true} final {'C1': false}", "expecting property name enclosed in double quotes at: 'C1': false}"),
        (MediatorDesign.for_players(2, ("A0", "A1")), '{"1": "A0", "2": "A0"} then {"1": "A1", 2: "A1"}',
         'expecting property name enclosed in double quotes at: 2: "A1"}'),
        (ContractDesign(("A0", "A1")), '{"A0": 0, "A1": 0} so {"A0": 3, "A1": -2 // pay}', "expecting ',' delimiter at: // pay}"),
        (PD_ACTION, '{"justification": "ok", "player_action": "C"} {"justification": "no", "player_action": D}',
         "expecting value at: D}"),
    ],
)
def test_malformed_final_object_never_falls_back_to_a_draft(fmt: Any, text: str, problem: str) -> None:
    got = check_answer(fmt, text)
    assert not got.valid and got.code == "syntax"
    assert got.offset == text.rindex("{")  # none of these final objects nests a brace
    assert problem in got.error and got.error.startswith("the last JSON object {")


def test_judge_first_object_must_decode_no_fall_forward() -> None:
    text = '{"reasoning": "r", "confidence": 0.5, "justification_type": "Reciprocity",}\n' + judge_text("Risk aversion")
    got = check_answer(JUDGE, text)
    assert not got.valid and got.offset == 0
    assert "the first JSON object" in got.error and "a trailing comma before '}'" in got.error


def test_unclosed_final_object_after_a_valid_draft() -> None:
    got = check_answer(PD, '{"A0": 50, "A1": 50}\nActually: {"A0": 20, "A1": 8')
    assert not got.valid and got.offset == 31
    assert got.error == "the last JSON object is not closed: {\"A0\": 20, \"A1\": 8 has no matching '}'"


@pytest.mark.parametrize(
    ("text", "parsed", "offset"),
    [
        # several objects: the last one, at its offset
        ('{"A0": 90, "A1": 10} maybe {"A0": 10, "A1": 90}', {"A0": 10, "A1": 90}, 27),
        # fenced code block
        ('Plan.\n```json\n{"A0": 30, "A1": 70}\n```\n', {"A0": 30, "A1": 70}, 14),
        # braces that are not object-like (LaTeX, a set in prose) are not answers
        ('{"A0": 40, "A1": 60} where $\\frac{1}{2}$ and {A0, A1} are the options', {"A0": 40, "A1": 60}, 0),
        # a span nested in the answer is part of it
        ('[{"A0": 5, "A1": 95}]', {"A0": 5, "A1": 95}, 1),
    ],
)
def test_valid_answers_and_offsets(text: str, parsed: dict[str, int], offset: int) -> None:
    got = check_answer(PD, text)
    assert got.valid and got.parsed == parsed and got.offset == offset and got.error == ""


def test_braces_inside_strings_do_not_end_the_object() -> None:
    text = 'Draft {"reasoning": "x"}. ' + judge_text("Reciprocity", reasoning='payoff {A0} } ends "here"')
    got = check_answer(JudgeLabels(("Reciprocity",)), text.replace("Draft ", "", 1))
    assert not got.valid  # the first object {"reasoning": "x"} lacks keys: no fall-forward
    final = judge_text("Reciprocity", reasoning='payoff {A0} } ends "here"')
    got = check_answer(JudgeLabels(("Reciprocity",)), "Result: " + final)
    assert got.valid and got.offset == 8 and got.parsed is not None
    assert got.parsed["reasoning"] == 'payoff {A0} } ends "here"'


# --------------------------------------------------------------------------------------------
# kind 2: reasoning blocks never supply the answer
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        '<think>{"A0": 50, "A1": 50}</think>',
        '<think>{"A0": 50, "A1": 50}</think>\n',
        '<thinking>\n{"A0": 50, "A1": 50}\n</thinking>  ',
        '<reasoning type="draft">{"A0": 50, "A1": 50}</reasoning>',
        '<think>{"A0": 50, "A1": 50}',  # unclosed: all the rest is reasoning
        'Answer soon <Reflection>{"A0": 50, "A1": 50}',
        '{"A0": 50, "A1": 50}</think>',  # orphan closing tag: all before it is reasoning
    ],
)
def test_object_only_inside_reasoning_is_no_answer(text: str) -> None:
    got = check_answer(PD, text)
    assert not got.valid and got.error == "no JSON object found" and got.code == "no_json" and got.offset is None


def test_answer_after_reasoning_block() -> None:
    text = '<think>draft {"A0": 50, "A1": 50}</think>\n{"A0": 20, "A1": 80}'
    got = check_answer(PD, text)
    assert got.valid and got.parsed == {"A0": 20, "A1": 80} and got.offset == 42
    # a draft after the block and a reasoning block after the answer change nothing
    got = check_answer(PD, '{"A0": 20, "A1": 80}<think>{"A0": 1, "A1": 99}</think>')
    assert got.valid and got.parsed == {"A0": 20, "A1": 80} and got.offset == 0
    # R1-style reply that starts inside the block
    got = check_answer(PD, 'hmm {"A0": 0, "A1": 100}</think>{"A0": 60, "A1": 40}')
    assert got.valid and got.parsed == {"A0": 60, "A1": 40} and got.offset == 32


def test_judge_draft_inside_block_does_not_win() -> None:
    text = "<think>" + judge_text("Risk aversion") + "</think>\n" + judge_text("Reciprocity")
    got = check_answer(JUDGE, text)
    assert got.valid and got.parsed is not None and got.parsed["labels"] == ["Reciprocity"]
    assert got.offset == text.index("</think>") + len("</think>\n")


def test_free_text_format_ignores_reasoning_blocks() -> None:
    fmt = DonationFormat("units", 10.0)
    got = check_answer(fmt, "<think>Answer: 9</think>Justification: fair.\nAnswer: 3")
    assert got.valid and got.parsed == {"action": "donate", "value": 3.0, "justification": "fair."}
    assert got.offset is None
    got = check_answer(fmt, "<think>Justification: x\nAnswer: 9</think>")
    assert not got.valid and got.error.startswith("the reply has no 'Answer:' part")


def test_reasoning_spans() -> None:
    assert reasoning_spans("a<think>b</think>c") == [(1, 17)]
    assert reasoning_spans("a<think>b<think>c</think>d</think>e") == [(1, 34)]  # nested: one block
    assert reasoning_spans("x<THINK >y") == [(1, 10)]  # unclosed: to the end
    assert reasoning_spans("ab</thought>c") == [(0, 12)]  # orphan close: from the start
    assert reasoning_spans("no tags <b>bold</b> <thinker>") == []
    assert strip_reasoning("a<think>b</think>c<scratchpad>d") == "ac"
    # inside a JSON object a tag is string content (SmolLM2 writes the judge's placeholder)
    assert reasoning_spans('{"reasoning": "<reason>", "confidence": 0.2}') == []
    assert reasoning_spans('{"a": "<think>"} <think>x') == [(17, 25)]
    assert reasoning_spans('<think>{"a": 1} x') == [(0, 17)]  # the tag is before the object


def test_judge_placeholder_tag_in_the_reasoning_string_is_parsed() -> None:
    text = '{"reasoning": "<reason>", "confidence": 0.2, "justification_type": "Reciprocity"}'
    got = check_answer(JUDGE, text)
    assert got.valid, got.error
    assert got.parsed["reasoning"] == "<reason>"


@dataclass(frozen=True)
class ReasoningReply(Reply):
    """A reply carrying the provider's separate reasoning field and finish reason."""

    reasoning_content: str = ""
    finish_reason: str | None = None


class OneReplyAgent:
    """Answers every attempt with the same reply; records the prompts."""

    name = "fake/r(CoT)"
    model = "fake/r"
    style = "CoT"
    cacheable = False

    def __init__(self, reply: Reply, params: dict[str, Any] | None = None, local: bool = False) -> None:
        self.reply = reply
        self.params = params or {}
        self.uses_local_llm = local
        self.prompts: list[str] = []

    async def generate(self, request: DecisionRequest) -> Reply:
        self.prompts.append(request.messages[-1]["content"])
        return self.reply

    def classify_error(self, exc: BaseException) -> ErrorClass:
        return ErrorClass.FATAL


def decide(agent: OneReplyAgent, fmt: Any = PD) -> Any:
    maker = DecisionMaker(None, {"CoT": "Think.", "IO": ""})
    return asyncio.run(maker.decide(agent, "Play.", fmt, {"round": 1}))


def test_provider_reasoning_field_never_supplies_the_answer() -> None:
    agent = OneReplyAgent(ReasoningReply(text="", latency_s=0.1, reasoning_content='{"A0": 50, "A1": 50}'))
    outcome = decide(agent)
    assert outcome.status == "failed" and outcome.error == "no JSON object found" and len(agent.prompts) == 6


# --------------------------------------------------------------------------------------------
# kind 3 (parser side): cut-off answers
# --------------------------------------------------------------------------------------------


def test_cut_off_answer_names_max_tokens() -> None:
    got = check_answer(PD, "Let me weigh the payoffs first", "length", 200)
    assert not got.valid and got.truncated and got.code == "truncated"
    assert got.error == (
        "the answer was cut off at max_tokens = 200 before it was complete (no JSON object found); "
        "give a shorter answer"
    )
    got = check_answer(PD, 'x {"A0": 5', "length", None)
    assert got.error.startswith("the answer was cut off at the max_tokens limit before it was complete (")


def test_complete_object_in_a_cut_off_reply_is_valid_but_flagged() -> None:
    got = check_answer(PD, '{"A0": 50, "A1": 50} and then I', "length", 12)
    assert got.valid and got.truncated and got.parsed == {"A0": 50, "A1": 50}
    assert not check_answer(PD, '{"A0": 50, "A1": 50}', "stop", 12).truncated


def test_cut_off_free_text_answer_is_invalid() -> None:
    got = check_answer(DonationFormat("units", 10.0), "Justification: x\nAnswer: 1", "length", 9)
    assert not got.valid and got.error == (
        "the answer was cut off at max_tokens = 9 before it was complete (the answer is incomplete); "
        "give a shorter answer"
    )


def test_decision_loop_reasks_with_the_cut_off_message() -> None:
    agent = OneReplyAgent(ReasoningReply(text="I think", latency_s=0.1, finish_reason="length"), params={"max_tokens": 50})
    outcome = decide(agent)
    assert outcome.status == "failed"
    assert "That answer could not be used: the answer was cut off at max_tokens = 50 before" in agent.prompts[1]


# --------------------------------------------------------------------------------------------
# 12(b): capped CoT reasoning is flagged, and the flag reaches the decisions table
# --------------------------------------------------------------------------------------------


def test_reasoning_capped() -> None:
    answer = '{"A0": 0, "A1": 100}'
    assert reasoning_capped("x" * 39 + ".\n" + answer, 41, 40)
    assert not reasoning_capped("x" * 38 + ".\n" + answer, 40, 40)
    assert not reasoning_capped("\n" + answer, 1, 40)
    assert not reasoning_capped("x" * 39 + ".\n" + answer, 41, None)


def test_capped_reasoning_reaches_the_outcome_and_the_schema() -> None:
    text = "Cooperation pays if the other cooperates too, so I lea." + '\n{"A0": 70, "A1": 30}'
    capped = OneReplyAgent(Reply(text=text), params={"max_reasoning_chars": 55}, local=True)
    outcome = decide(capped)
    assert outcome.ok and outcome.reasoning_truncated and outcome.answer_offset == 56
    roomy = OneReplyAgent(Reply(text=text), params={"max_reasoning_chars": 320}, local=True)
    assert not decide(roomy).reasoning_truncated
    remote = OneReplyAgent(Reply(text=text), params={"max_reasoning_chars": 55}, local=False)
    assert not decide(remote).reasoning_truncated  # no grammar cap outside the embedded model
    assert SCHEMAS["decisions"]["answer_offset"].is_integer()
    assert SCHEMAS["decisions"]["reasoning_truncated"].to_python() is bool
    assert "reasoning_truncated" in SCHEMAS["judgements"]


def test_parser_version_bumped() -> None:
    assert PARSER_VERSION == 3


# --------------------------------------------------------------------------------------------
# property: whatever drafts come first, an appended valid object is the answer
# --------------------------------------------------------------------------------------------

_PROSE = st.text(st.characters(blacklist_characters='{}"<>\\', blacklist_categories=("Cs",)), max_size=30)
_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
_DRAFT_OBJECTS = st.dictionaries(st.text(max_size=6), _JSON_VALUES, max_size=3).map(json.dumps)
_BROKEN_OBJECTS = st.sampled_from(
    ['{"A0": 70%, "A1": 30%}', '{"A0": 1, "A1": 99,}', "{'A0': 50}", "{A0: 50}", '{"A0": NaN}', "{}"]
)
_BLOCKS = st.builds(lambda tag, body: f"<{tag}>{body}</{tag}>", st.sampled_from(["think", "reasoning", "reflection"]),
                    _PROSE | _DRAFT_OBJECTS | st.sampled_from(['{"A0": 100, "A1": 0}', "{ unclosed"]))
_DRAFTS = st.lists(_PROSE | _DRAFT_OBJECTS | _BROKEN_OBJECTS | _BLOCKS, max_size=6).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(drafts=_DRAFTS, a0=st.integers(0, 100), tail=_PROSE)
def test_last_valid_object_after_any_drafts_is_the_answer(drafts: str, a0: int, tail: str) -> None:
    final = json.dumps({"A0": a0, "A1": 100 - a0})
    prefix = drafts + "\n"
    got = check_answer(PD, prefix + final + tail)
    assert got.valid, got.error
    assert got.parsed == {"A0": a0, "A1": 100 - a0}
    assert got.offset == len(prefix)


def test_offset_and_flag_reach_the_decisions_rows() -> None:
    from tests.helpers import play_bots

    rows = play_bots("Repetition", "prisoners_dilemma", ["tit-for-tat", "malformed"], num_rounds=2)["decisions"]
    by_agent = {(r["agent"], r["status"], r["answer_offset"], r["reasoning_truncated"]) for r in rows.iter_rows(named=True)}
    # bots answer with a bare JSON object (offset 0); failed decisions have no object used
    assert by_agent == {("bot/tit-for-tat", "ok", 0, False), ("bot/malformed", "failed", None, False)}
