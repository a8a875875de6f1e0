"""The decision loop's own text comes from templates (issue 20): the re-ask frame, every answer
format's error messages (engine, gossip, evolution) and the gossip bots' log messages.

Properties: every template of those folders is rendered by the code for some input (so none
is dead and the code reads them instead of a copy of their wording), an edited template reaches
the text the model gets, and :func:`answer_texts_hash` follows each folder's content. On top,
a regression check: the texts equal what the code wrote before the move (strings taken from
main at 0a09e99, where they were Python literals).
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from coopeval.core.prompts import PromptLibrary, TemplateFolder
from coopeval.decisions import formats
from coopeval.decisions.errors import AnswerError
from coopeval.decisions.extract import _decode
from coopeval.decisions.parsing import check_answer, validate_answer
from coopeval.decisions.reask import reask_messages
from coopeval.decisions.texts import ENGINE_TEXTS, answer_texts_hash
from coopeval.studies.evolution.amounts import ERRORS as EVOLUTION_ERRORS
from coopeval.studies.evolution.formats import DonationFormat, StrategyFormat
from coopeval.studies.gossip.bots import BOT_TEXTS, CollusiveAttacker, factual_message
from coopeval.studies.gossip.formats import ERRORS as GOSSIP_ERRORS
from coopeval.studies.gossip.formats import (
    AmountFormat,
    ChoiceFormat,
    GossipFormat,
    ReflectionFormat,
    SignalFormat,
)

FOLDERS = {"engine": ENGINE_TEXTS, "gossip errors": GOSSIP_ERRORS, "gossip bots": BOT_TEXTS, "evolution errors": EVOLUTION_ERRORS}

ENGINE_CASES: list[tuple[Any, str]] = [
    (formats.ActionDistribution(("A0", "A1")), text)
    for text in ("", "hello", '{"A0": 50', '{"A0": 50, "A1": 50,}', '{"A0": NaN, "A1": 1}', '{"A0": 50 "A1": 50}', '{"A0": 50 "A1"',
                 '{"A0": 50, "A1": 50, "A0": 1}', '{"A0": 10, "A1": 10, "A2": 5}', '{"A0": 100}', '{"A0": 50.0, "A1": "50"}',
                 '{"A0": 150, "A1": -50}', '{"A0": 40, "A1": 50}', '{"A0": true, "A1": null}', '{"A0": [1], "A1": {"x": 1}}',
                 '{"A0": 1' + '0' * 60 + ', "A1": 0}')
] + [
    (formats.ContractDesign(("A0", "A1"), (-5, 5)), '{"A0": 3.5, "A1": "4"}'),
    (formats.ContractDesign(("A0", "A1"), (-5, 5)), '{"A0": 3, "A1": -9}'),
    (formats.MediatorDesign.for_players(3, ("A0", "A1")), '{"1": "A0", " 2": "A1", "02": "A0", "5": "A0"}'),
    (formats.MediatorDesign.for_players(2, ("A0", "A1")), '{"1": "A0", "2": "A2"}'),
    (formats.Signature(), '{"x": 1}'),
    (formats.Signature(), '{"sign": "yes"}'),
    (formats.MediatorVote.over(2), '{"M1": 1, "M2": true}'),
    (formats.ContractVote.over(2), '{"C1": true}'),
    *((formats.JudgeLabels(("Fairness", "Self-interest")), '{{"reasoning": {}, "confidence": {}, "justification_type": {}}}'.format(*case))
      for case in (("1", "0.5", '"Fairness"'), ('"r"', '"high"', '"Fairness"'), ('"r"', "2", '"Fairness"'), ('"r"', "0.5", "3"),
                   ('"r"', "0.5", '"Greed, Lust"'), ('"r"', "0.5", '" , "'))),
]
GOSSIP_CASES: list[tuple[Any, str]] = [
    (ChoiceFormat("donor", "donor_action", ("cooperate", "defect")), '{"justification": "j", "donor_action": "maybe"}'),
    (ChoiceFormat("donor", "donor_action", ("cooperate", "defect")), '{"justification": 3, "x": "defect"}'),
    (ChoiceFormat("donor", "donor_action", ("cooperate", "defect")), '{"justification": 3, "donor_action": "defect"}'),
    (GossipFormat(), '{"justification": "j", "tone": "angry", "gossip": "x"}'),
    (GossipFormat(), '{"justification": "j", "tone": "neutral", "gossip": 3}'),
    (SignalFormat(), '{"justification": "j", "signal": 2}'),
    (AmountFormat("investor", "investor_action", 0.0, 10.0), '{"justification": "j", "investor_action": "5"}'),
    (AmountFormat("investor", "investor_action", 0.0, 10.0), '{"justification": "j", "investor_action": 12.5}'),
    (ReflectionFormat(), '{"reflection": "a", "b": 1}'),
    (ReflectionFormat(), '{"reflection": " "}'),
]
EVOLUTION_CASES: list[tuple[Any, str]] = [
    (StrategyFormat("horibe"), "Strategy: ."),
    (DonationFormat(), "no answer part"),
    (DonationFormat(), "Answer: 5"),  # valid, but cut off when the finish reason is "length"
    (DonationFormat(), "Answer: about 5"),
    (DonationFormat(), "Answer: 5%"),
    (DonationFormat(), "Answer: 1,5"),
    (DonationFormat(), "Answer: 11"),
    (DonationFormat("percent"), "Answer: 5%3"),
    (DonationFormat("percent"), "Answer: 101"),
    (DonationFormat(variant="costly_punishment"), "Answer: hmm"),
    (DonationFormat(variant="partner_choice"), "Answer: hmm"),
    (DonationFormat(variant="partner_choice"), "Answer: Refuse, 5"),
]
BOT_STATES = [
    {"cooperated": True}, {"partner": "Ann"},
    {"partner": "Di", "co_attackers": ["Bo", "Cy"], "third_party_praise": True}, {"partner": "Bo", "co_attackers": ["Bo"]},
]


def _exercise() -> None:
    """Every kind of text: errors of each format (cut off too), re-asks, bot messages."""
    for fmt, text in ENGINE_CASES + GOSSIP_CASES + EVOLUTION_CASES:
        check_answer(fmt, text)
        check_answer(fmt, text, "length", 64)
        check_answer(fmt, text, "length", None)
    with pytest.raises(AnswerError, match="must be a JSON object"):
        validate_answer(formats.ActionDistribution(("A0", "A1")), [50, 50])  # type: ignore[arg-type]
    with pytest.raises(AnswerError, match="at its end"):  # a closed span always has its "}" left to show
        _decode('{"A0": 5', "last")
    for previous in ("", "x" * 30):
        reask_messages([{"role": "user", "content": "Pick."}], previous, "bad", "Think.", max_response_chars=10)
    for state in BOT_STATES:
        factual_message(state)
        attacker = CollusiveAttacker()
        attacker.message(state, attacker.tone(state))


def test_every_text_template_is_rendered_by_the_code(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: dict[Path, set[str]] = defaultdict(set)
    original = PromptLibrary.render

    def recording(self: PromptLibrary, name: str, /, **values: object) -> str:
        rendered[self.directory.resolve()].add(name)
        return original(self, name, **values)

    monkeypatch.setattr(PromptLibrary, "render", recording)
    _exercise()
    for label, texts in FOLDERS.items():
        assert set(PromptLibrary(texts.directory).templates) == rendered[texts.directory.resolve()], label


def test_an_edited_template_reaches_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    library = PromptLibrary(ENGINE_TEXTS.directory)
    library.templates = {**library.templates, "reask_rejection": "Unusable ($error)", "error_action_sum": "sum $total != $expected"}
    monkeypatch.setattr(ENGINE_TEXTS, "_library", library)
    error = check_answer(formats.ActionDistribution(("A0", "A1")), '{"A0": 40, "A1": 50}').error
    assert error == "sum 90 != 100"
    user = reask_messages([{"role": "user", "content": "Pick."}], "x", error, "")[-1]["content"]
    assert "Unusable (sum 90 != 100)." in user.split("\n\n")


def test_the_hash_follows_each_folder(tmp_path: Path) -> None:
    folder = tmp_path / "errors"
    folder.mkdir()
    (folder / "a.txt").write_text("one $x\n")
    texts = TemplateFolder(folder)
    before = answer_texts_hash(texts)
    assert answer_texts_hash(texts) == before != answer_texts_hash()
    assert texts.render("a", x=1) == "one 1"
    (folder / "a.txt").write_text("one  $x\n")
    assert answer_texts_hash(texts) != before


REGRESSION = [  # (format, reply, finish reason, max_tokens) -> error, as main wrote it
    (formats.ActionDistribution(("A0", "A1")), '{"A0": 50.0, "A1": "50", "A2": 1}', None, None,
     'the JSON object must have exactly the keys "A0", "A1"; unexpected key "A2"'),
    (formats.ActionDistribution(("A0", "A1")), '{"A0": 40, "A1": 50}', None, None, "the probabilities sum to 90, not 100"),
    (formats.ActionDistribution(("A0", "A1")), 'x {"A0": 40, "A1": 50,}', None, None,
     "the last JSON object {\"A0\": 40, \"A1\": 50,} is not valid JSON: a trailing comma before '}' (write strict JSON: "
     "double-quoted keys, plain numbers without %, no trailing comma)"),
    (formats.ActionDistribution(("A0", "A1")), '{"A0": 4', "length", 64,
     "the answer was cut off at max_tokens = 64 before it was complete (the last JSON object is not closed: {\"A0\": 4 has "
     "no matching '}'); give a shorter answer"),
    (formats.MediatorDesign.for_players(3, ("A0", "A1")), '{"1": "A0", " 2": "A1", "02": "A0", "5": "A0"}', None, None,
     'the JSON object must have exactly the keys "1", "2", "3" (one per number of delegating players); keys " 2" and "02" '
     'both mean 2; key "5" is outside 1..3; missing key "3"'),
    (formats.JudgeLabels(("Fairness", "Self-interest")), '{"reasoning": "r", "confidence": 0.5, "justification_type": "Greed, Lust"}',
     None, None, 'unknown justification types "Greed", "Lust"; use only the category names listed (or "Other" when none '
     "fits), separated by commas"),
    (ChoiceFormat("donor", "donor_action", ("cooperate", "defect")), '{"justification": "j", "donor_action": "maybe", "x": 1}',
     None, None, 'the JSON object must have exactly the keys "justification", "donor_action"; unexpected "x"'),
    (AmountFormat("investor", "investor_action", 0.0, 10.0), '{"justification": "j", "investor_action": 12.5}', None, None,
     '"investor_action" must be between 0 and 10, not 12.5'),
    (DonationFormat(max_value=182.97), "Answer: 183", None, None,
     "the number of units 183 is outside the allowed range 0 to 182.97 (your units)"),
    (DonationFormat(variant="partner_choice"), "Answer: 1,5", None, None,
     "the number '1,5' cannot be read unambiguously; write it with digits and at most one decimal point (e.g. 1.5 or "
     "1250.5), with commas only between groups of three digits (e.g. 1,250.5)"),
]


@pytest.mark.parametrize(("fmt", "reply", "finish", "max_tokens", "expected"), REGRESSION)
def test_error_texts_are_unchanged(fmt: Any, reply: str, finish: str | None, max_tokens: int | None, expected: str) -> None:
    assert check_answer(fmt, reply, finish, max_tokens).error == expected


def test_reask_and_bot_texts_are_unchanged() -> None:
    cut = reask_messages([{"role": "system", "content": "sys"}, {"role": "user", "content": "Pick.\n"}], "x" * 30, "bad", "Think.",
                         max_response_chars=10)
    assert cut == ({"role": "system", "content": "sys"}, {"role": "user", "content": (
        "Pick.\n\n---\n\nYour previous answer to this request was:\n\n[... the first 20 characters are left out ...]\nxxxxxxxxxx"
        "\n\n---\n\nThat answer could not be used: bad.\n\nPlease answer the request above again, following its output format "
        "exactly.\n\nThink.")})
    empty = reask_messages([{"role": "user", "content": "Pick."}], " ", "why?", "Answer now.", style_position="system")
    assert empty == ({"role": "system", "content": "Answer now."}, {"role": "user", "content": (
        "Pick.\n\n---\n\nYour previous answer to this request was:\n\n(an empty answer)\n\n---\n\nThat answer could not be "
        "used: why?\n\nPlease answer the request above again, following its output format exactly.")})
    attacker = CollusiveAttacker()
    assert factual_message({}) == "they did not cooperate with me."
    assert attacker.message(BOT_STATES[2], "criticism") == (
        "Di let me down and cannot be trusted. By contrast, Bo is the most reliable agent here.")
    assert attacker.message(BOT_STATES[3], "praising") == "Bo was generous and fair with me. Completely trustworthy."
