"""JSON extraction from free text (docs/protocol/answers.md#parsing "Extraction", docs/protocol/design-checks.md#what-is-judged "Parsing")."""

from __future__ import annotations

import pytest

from coopeval.decisions import AnswerError, extract_first_json_object, extract_last_json_object
from coopeval.decisions.extract import iter_json_objects


def test_bare_object() -> None:
    assert extract_last_json_object('{"A0": 40, "A1": 60}') == {"A0": 40, "A1": 60}


def test_markdown_fence_and_prose() -> None:
    text = 'Step 1: think.\n\nFinal answer:\n```json\n{\n  "A0": 0,\n  "A1": 100\n}\n```\nGood luck!'
    assert extract_last_json_object(text) == {"A0": 0, "A1": 100}


def test_nested_object_is_one_value() -> None:
    text = 'prefix {"outer": {"inner": {"x": 1}}, "y": [1, {"z": 2}]} suffix'
    assert extract_last_json_object(text) == {"outer": {"inner": {"x": 1}}, "y": [1, {"z": 2}]}
    assert list(iter_json_objects(text)) == [{"outer": {"inner": {"x": 1}}, "y": [1, {"z": 2}]}]


def test_several_objects_last_and_first() -> None:
    text = 'Maybe {"A0": 80, "A1": 20}? No: {"A0": 100} is not it either. Final: {"A0": 30, "A1": 70}'
    assert extract_last_json_object(text) == {"A0": 30, "A1": 70}
    assert extract_first_json_object(text) == {"A0": 80, "A1": 20}
    assert len(list(iter_json_objects(text))) == 3


def test_arrays_and_scalars_are_not_objects() -> None:
    with pytest.raises(AnswerError, match=r"^no JSON object found$"):
        extract_last_json_object('[50, 50] and "A0" and 100')
    # a trailing array does not replace the object before it
    assert extract_last_json_object('{"A0": 50, "A1": 50}\n[1, 2, 3]') == {"A0": 50, "A1": 50}


def test_object_inside_array_is_found_by_the_brace_scan() -> None:
    assert extract_last_json_object('[{"A0": 1}]') == {"A0": 1}


def test_latex_braces_are_skipped() -> None:
    text = r'Expected payoff $\frac{1}{2} \cdot \text{A0}$, so {"A0": 50, "A1": 50} it is; $x^{2}$.'
    assert extract_last_json_object(text) == {"A0": 50, "A1": 50}


def test_trailing_text_after_json() -> None:
    assert extract_last_json_object('{"A0": 10, "A1": 90}\n\nThis balances risk.') == {"A0": 10, "A1": 90}


def test_broken_outer_object_is_not_replaced_by_its_inner_object() -> None:
    # issue 13: the outer span is the answer; it does not decode (trailing comma), so the
    # reply is invalid instead of falling back to the object nested in it
    with pytest.raises(AnswerError) as info:
        extract_last_json_object('{"a": {"A0": 100}, }')
    assert info.value.code == "syntax"
    assert "a trailing comma before '}'" in str(info.value)


@pytest.mark.parametrize("text", ["", "no braces at all", "prose {A0, A1} and $x^{2}$", "[50, 50]"])
def test_no_object(text: str) -> None:
    with pytest.raises(AnswerError) as info:
        extract_last_json_object(text)
    assert str(info.value) == "no JSON object found"
    assert info.value.code == "no_json"
    with pytest.raises(AnswerError, match=r"^no JSON object found$"):
        extract_first_json_object(text)


@pytest.mark.parametrize(
    "text",
    [
        "{'A0': 50, 'A1': 50}",  # single-quoted pseudo-JSON
        '{"A0": 50, "A1": 50,}',  # trailing comma
        "{A0: 50, A1: 50}",  # unquoted keys
        '{"A0": 50, "A1": 50',  # truncated
        '```json\n{"A0": 50 "A1": 50}\n```',  # missing comma
    ],
)
def test_object_like_but_not_json(text: str) -> None:
    """Issue 13: these were "no JSON object found"; they are object-like spans that do not
    decode, reported as such (code ``syntax``) so the re-ask can say what is wrong."""
    for extract in (extract_last_json_object, extract_first_json_object):
        with pytest.raises(AnswerError) as info:
            extract(text)
        assert info.value.code == "syntax"
        assert "not valid JSON" in str(info.value) or "is not closed" in str(info.value)


def test_empty_object_is_an_object() -> None:
    assert extract_last_json_object("{}}") == {}
    # a "{" left open at the end is an unfinished object (a cut-off reply), not nothing
    with pytest.raises(AnswerError, match=r"^the last JSON object is not closed: \{ has no matching '\}'$"):
        extract_last_json_object("{}}{")


def test_duplicate_keys_are_remembered() -> None:
    obj = extract_last_json_object('{"A0": 50, "A0": 40, "A1": 60}')
    assert obj == {"A0": 40, "A1": 60}
    assert obj.duplicate_keys == ("A0",)
    assert extract_last_json_object('{"A0": 50}').duplicate_keys == ()


def test_huge_integer_does_not_crash() -> None:
    text = '{"A0": ' + "9" * 5000 + '} then {"A0": 100}'
    assert extract_last_json_object(text) == {"A0": 100}


def test_first_object_error_code() -> None:
    """The judge path (first object) reports the same ``no_json`` code as the last-object path."""
    with pytest.raises(AnswerError) as info:
        extract_first_json_object("no braces at all")
    assert info.value.code == "no_json" and str(info.value) == "no JSON object found"


def test_scan_retries_at_the_very_next_brace() -> None:
    # "{" at 0 does not decode; the answer starts at index 1 and must be found.
    assert extract_last_json_object('{{"A0": 100}') == {"A0": 100}
    assert extract_first_json_object('{{"reasoning": "x"}') == {"reasoning": "x"}
