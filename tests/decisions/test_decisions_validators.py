"""Validators of every non-judge decision kind, with their exact error texts (docs/protocol/answers.md#output-formats, #parsing)."""

from __future__ import annotations

import pytest

from coopeval.decisions import (
    ActionDistribution,
    AnswerError,
    AnswerFormat,
    ContractDesign,
    ContractVote,
    MediatorDesign,
    MediatorVote,
    Signature,
    parse_answer,
    validate_answer,
)
from coopeval.decisions.parsing import PARSER_VERSION

PD = ActionDistribution(("A0", "A1"))
PD_MEDIATION = ActionDistribution(("A0", "A1", "A2"))  # A2 = delegate to the mediator
TD = ActionDistribution(("A0", "A1", "A2", "A3"))

INT_HINT = 'every value must be a whole number of percentage points (an integer such as 50, not 50.0 or "50"); '

STRICT_HINT = " (write strict JSON: double-quoted keys, plain numbers without %, no trailing comma)"


def error_of(fmt: AnswerFormat, text: str, **kwargs: bool) -> AnswerError:
    with pytest.raises(AnswerError) as info:
        parse_answer(fmt, text, **kwargs)
    return info.value


def test_parser_version_is_an_int() -> None:
    assert isinstance(PARSER_VERSION, int) and PARSER_VERSION >= 1


# ---------------------------------------------------------------- action distribution


@pytest.mark.parametrize(
    ("fmt", "text", "expected"),
    [
        (PD, '{"A0": 50, "A1": 50}', {"A0": 50, "A1": 50}),
        (PD, '{"A1": 100, "A0": 0}', {"A0": 0, "A1": 100}),  # returned in token order
        (PD, 'I will defect.\n```json\n{"A0": 0, "A1": 100}\n```\nThat is final.', {"A0": 0, "A1": 100}),
        (PD_MEDIATION, '{"A0":0,"A1":0,"A2":100}', {"A0": 0, "A1": 0, "A2": 100}),
        (TD, '{"A0": 25, "A1": 25, "A2": 25, "A3": 25}', {"A0": 25, "A1": 25, "A2": 25, "A3": 25}),
        (PD, 'Draft {"A0": 30, "A1": 30} was wrong; final {"A0": 30, "A1": 70}', {"A0": 30, "A1": 70}),
    ],
)
def test_action_accepts(fmt: AnswerFormat, text: str, expected: dict[str, int]) -> None:
    result = parse_answer(fmt, text)
    assert result == expected
    assert list(result) == list(fmt.keys)
    assert all(type(v) is int for v in result.values())


@pytest.mark.parametrize(
    ("text", "message", "code"),
    [
        ('{"A0": 50.0, "A1": 50}', INT_HINT + '"A0" is 50.0 (a decimal number)', "type"),
        ('{"A0": 50.0, "A1": 50.0}', INT_HINT + '"A0" is 50.0 (a decimal number); "A1" is 50.0 (a decimal number)', "type"),
        ('{"A0": true, "A1": 99}', INT_HINT + '"A0" is true (a boolean)', "type"),
        ('{"A0": "50", "A1": 50}', INT_HINT + '"A0" is "50" (a string)', "type"),
        ('{"A0": null, "A1": 100}', INT_HINT + '"A0" is null (null)', "type"),
        ('{"A0": 1e2, "A1": 0}', INT_HINT + '"A0" is 100.0 (a decimal number)', "type"),
        ('{"A0": 50, "A1": 49}', "the probabilities sum to 99, not 100", "sum"),
        ('{"A0": 60, "A1": 50}', "the probabilities sum to 110, not 100", "sum"),
        ('{"A0": 0, "A1": 0}', "the probabilities sum to 0, not 100", "sum"),
        ('{"A0": -10, "A1": 110}', 'every value must be between 0 and 100; "A0" is -10; "A1" is 110', "range"),
        ('{"A0": 50, "A1": 50, "A2": 0}', 'the JSON object must have exactly the keys "A0", "A1"; unexpected key "A2"', "keys"),
        ('{"A0": 100}', 'the JSON object must have exactly the keys "A0", "A1"; missing key "A1"', "keys"),
        ('{"a0": 50, "a1": 50}',
         'the JSON object must have exactly the keys "A0", "A1"; missing keys "A0", "A1"; unexpected keys "a0", "a1"', "keys"),
        ('{"Cooperate": 50, "A1": 50}',
         'the JSON object must have exactly the keys "A0", "A1"; missing key "A0"; unexpected key "Cooperate"', "keys"),
        ('{"A0": 50, "A0": 40, "A1": 60}', 'the JSON object repeats the key "A0"', "keys"),
        # issue 13: an object-like span that is not strict JSON is an error of its own, not "no JSON"
        ("{'A0': 50, 'A1': 50}",
         "the last JSON object {'A0': 50, 'A1': 50} is not valid JSON: expecting property name enclosed in "
         "double quotes at: 'A0': 50, 'A1': 50}" + STRICT_HINT, "syntax"),
        ('{"A0": 50, "A1": 50,}',
         """the last JSON object {"A0": 50, "A1": 50,} is not valid JSON: a trailing comma before '}'""" + STRICT_HINT,
         "syntax"),
        ("I choose A0 with 100% probability.", "no JSON object found", "no_json"),
        ("", "no JSON object found", "no_json"),
        # the last object is used: a valid draft followed by an invalid final object is invalid
        ('{"A0": 50, "A1": 50} ... final: {"A0": 50, "A1": 40}', "the probabilities sum to 90, not 100", "sum"),
    ],
)
def test_action_rejects(text: str, message: str, code: str) -> None:
    error = error_of(PD, text)
    assert str(error) == message
    assert error.code == code
    assert isinstance(error, ValueError)


def test_action_trailing_text_after_json_is_fine() -> None:
    assert parse_answer(PD, '{"A0": 70, "A1": 30}\n\nThis keeps some chance of cooperation.') == {"A0": 70, "A1": 30}


def test_action_under_mediation_needs_the_delegate_token() -> None:
    error = error_of(PD_MEDIATION, '{"A0": 50, "A1": 50}')
    assert str(error) == 'the JSON object must have exactly the keys "A0", "A1", "A2"; missing key "A2"'


def test_action_long_string_values_are_shortened_in_messages() -> None:
    error = error_of(PD, '{"A0": "' + "x" * 100 + '", "A1": 100}')
    assert str(error) == INT_HINT + '"A0" is "' + "x" * 37 + '..." (a string)'


def test_validate_answer_takes_a_decoded_object() -> None:
    assert validate_answer(PD, {"A0": 1, "A1": 99}) == {"A0": 1, "A1": 99}
    with pytest.raises(AnswerError, match=r"^the answer must be a JSON object$"):
        validate_answer(PD, [1, 99])  # type: ignore[arg-type]


# ---------------------------------------------------------------- mediator design

MEDIATOR = MediatorDesign.for_players(3, ("A0", "A1"))
MED_KEYS = 'the JSON object must have exactly the keys "1", "2", "3" (one per number of delegating players); '


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"1": "A1", "2": "A1", "3": "A0"}', {"1": "A1", "2": "A1", "3": "A0"}),
        ('Design:\n{"3": "A0", "1": "A1", "2": "A0"}', {"1": "A1", "2": "A0", "3": "A0"}),
        ('{" 1": "A1", "2 ": "A1", "03": "A0"}', {"1": "A1", "2": "A1", "3": "A0"}),  # keys parse as integers
    ],
)
def test_mediator_design_accepts(text: str, expected: dict[str, str]) -> None:
    result = parse_answer(MEDIATOR, text)
    assert result == expected
    assert list(result) == ["1", "2", "3"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"1": "A1", "2": "A1"}', MED_KEYS + 'missing key "3"'),
        ('{"0": "A1", "1": "A1", "2": "A0"}', MED_KEYS + 'key "0" is outside 1..3; missing key "3"'),
        ('{"1": "A1", "2": "A1", "3": "A0", "4": "A0"}', MED_KEYS + 'key "4" is outside 1..3'),
        ('{"one": "A1", "2": "A1", "3": "A0"}', MED_KEYS + 'key "one" is not a whole number; missing key "1"'),
        ('{"1.0": "A1", "2": "A1", "3": "A0"}', MED_KEYS + 'key "1.0" is not a whole number; missing key "1"'),
        ('{"1": "A1", "01": "A1", "2": "A1", "3": "A0"}', MED_KEYS + 'keys "1" and "01" both mean 1'),
        ('{"1": "A1", "2": "A1", "3": "A2"}', 'every value must be one of the base actions "A0", "A1"; "3" is "A2"'),
        ('{"1": "a1", "2": 1, "3": "Defect"}',
         'every value must be one of the base actions "A0", "A1"; "1" is "a1"; "2" is 1; "3" is "Defect"'),
        ('{"1": "A1", "1": "A0", "2": "A1", "3": "A0"}', 'the JSON object repeats the key "1"'),
    ],
)
def test_mediator_design_rejects(text: str, message: str) -> None:
    assert str(error_of(MEDIATOR, text)) == message


# ---------------------------------------------------------------- approval votes

M_VOTE = MediatorVote.over(2)
C_VOTE = ContractVote.over(3)


def test_votes_accept() -> None:
    assert parse_answer(M_VOTE, 'I approve the first.\n{"M1": true, "M2": false}') == {"M1": True, "M2": False}
    assert parse_answer(C_VOTE, '{"C3": false, "C1": true, "C2": true}') == {"C1": True, "C2": True, "C3": False}


@pytest.mark.parametrize(
    ("fmt", "text", "message"),
    [
        (M_VOTE, '{"M1": 1, "M2": false}', 'every value must be true or false; "M1" is 1 (an integer)'),
        (M_VOTE, '{"M1": "true", "M2": "no"}',
         'every value must be true or false; "M1" is "true" (a string); "M2" is "no" (a string)'),
        (M_VOTE, '{"1": true, "2": true}',
         'the JSON object must have exactly the keys "M1", "M2"; missing keys "M1", "M2"; unexpected keys "1", "2"'),
        (M_VOTE, '{"M1": true}', 'the JSON object must have exactly the keys "M1", "M2"; missing key "M2"'),
        (C_VOTE, '{"C1": true, "C2": true, "C3": null}', 'every value must be true or false; "C3" is null (null)'),
        (C_VOTE, '{"C1": true, "C2": true, "C3": true, "M1": true}',
         'the JSON object must have exactly the keys "C1", "C2", "C3"; unexpected key "M1"'),
    ],
)
def test_votes_reject(fmt: AnswerFormat, text: str, message: str) -> None:
    assert str(error_of(fmt, text)) == message


# ---------------------------------------------------------------- contract design

CONTRACT = ContractDesign(("A0", "A1"))
BOUNDED = ContractDesign(("A0", "A1"), int_bounds=(-5, 5))
CONTRACT_HINT = 'every value must be a whole number of points (an integer such as 3 or -2, not 3.0 or "3"); '


def test_contract_design_accepts_negative_and_large_integers() -> None:
    assert parse_answer(CONTRACT, 'Final proposed contract (JSON, single line):\n{"A0":0,"A1":-11}') == {"A0": 0, "A1": -11}
    assert parse_answer(CONTRACT, '{"A1": 0, "A0": -1000000}') == {"A0": -1000000, "A1": 0}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"A0": 1, "A1": -0.5}', CONTRACT_HINT + '"A1" is -0.5 (a decimal number)'),
        ('{"A0": 3.0, "A1": 0}', CONTRACT_HINT + '"A0" is 3.0 (a decimal number)'),
        ('{"A0": "3", "A1": 0}', CONTRACT_HINT + '"A0" is "3" (a string)'),
        ('{"A0": true, "A1": false}', CONTRACT_HINT + '"A0" is true (a boolean); "A1" is false (a boolean)'),
        ('{"A0": 3}', 'the JSON object must have exactly the keys "A0", "A1"; missing key "A1"'),
    ],
)
def test_contract_design_rejects_non_integers(text: str, message: str) -> None:
    assert str(error_of(CONTRACT, text)) == message


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"A0": 1, "A1": -0.5}', {"A0": 1, "A1": 0}),  # truncated toward zero, as the reference
        ('{"A0": 3.9, "A1": -2.9}', {"A0": 3, "A1": -2}),
        ('{"A0": "4", "A1": " -2.5 "}', {"A0": 4, "A1": -2}),
        ('{"A0": 7, "A1": 0}', {"A0": 7, "A1": 0}),
    ],
)
def test_contract_design_lenient_compat(text: str, expected: dict[str, int]) -> None:
    result = parse_answer(CONTRACT, text, lenient=True)
    assert result == expected
    assert all(type(v) is int for v in result.values())


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"A0": "three", "A1": 0}', CONTRACT_HINT + '"A0" is "three" (a string)'),
        ('{"A0": true, "A1": 0}', CONTRACT_HINT + '"A0" is true (a boolean)'),
        ('{"A0": "nan", "A1": 0}', CONTRACT_HINT + '"A0" is "nan" (a string)'),
        ('{"A0": null, "A1": 0}', CONTRACT_HINT + '"A0" is null (null)'),
    ],
)
def test_contract_design_lenient_still_rejects(text: str, message: str) -> None:
    assert str(error_of(CONTRACT, text, lenient=True)) == message


def test_contract_design_bounds() -> None:
    assert parse_answer(BOUNDED, '{"A0": 5, "A1": -5}') == {"A0": 5, "A1": -5}
    assert str(error_of(BOUNDED, '{"A0": 6, "A1": -9}')) == 'every value must be between -5 and 5; "A0" is 6; "A1" is -9'
    # lenient truncation happens before the bounds check
    assert parse_answer(BOUNDED, '{"A0": 5.9, "A1": 0}', lenient=True) == {"A0": 5, "A1": 0}


def test_lenient_is_ignored_for_actions() -> None:
    assert str(error_of(PD, '{"A0": 50.0, "A1": 50}', lenient=True)) == INT_HINT + '"A0" is 50.0 (a decimal number)'


# ---------------------------------------------------------------- signature

SIGN = Signature()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"sign": true}', {"sign": True}),
        ('I refuse.\n```json\n{"sign": false}\n```', {"sign": False}),
        ('{"sign": true, "reason": "fair contract"}', {"sign": True}),  # extra keys tolerated
        ('{"sign": false} hmm, actually {"sign": true}', {"sign": True}),
        ('{"sign": true, "note": "a", "note": "b"}', {"sign": True}),  # repeated extra key ignored
    ],
)
def test_sign_accepts(text: str, expected: dict[str, bool]) -> None:
    assert parse_answer(SIGN, text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"agree": true}', 'the JSON object must have the key "sign"'),
        ('{"Sign": true}', 'the JSON object must have the key "sign"'),
        ('{"sign": "yes"}', '"sign" must be true or false, not "yes" (a string)'),
        ('{"sign": 1}', '"sign" must be true or false, not 1 (an integer)'),
        ('{"sign": "true"}', '"sign" must be true or false, not "true" (a string)'),
        ("{'sign': True}",
         "the last JSON object {'sign': True} is not valid JSON: expecting property name enclosed in double quotes "
         "at: 'sign': True}" + STRICT_HINT),
        ('{"sign": true, "sign": false}', 'the JSON object repeats the key "sign"'),
    ],
)
def test_sign_rejects(text: str, message: str) -> None:
    assert str(error_of(SIGN, text)) == message


def test_huge_integers_are_shortened_in_messages() -> None:
    big = "9" * 60
    error = error_of(PD, '{"A0": ' + big + ', "A1": 0}')
    assert str(error) == 'every value must be between 0 and 100; "A0" is 999999999999... (60 digits)'
