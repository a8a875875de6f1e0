"""Issue 36 item 1: a space inside a number is never cut to its first digits.

Every row of the table in docs/protocol/answers.md#numbers is a test: the free-text column
through every evolution answer that states a number (a donation without punishment, with
costly punishment, with partner choice, a percentage, a strategy-matrix probe), the JSON column
through the gossip investor and responder amounts and CoopEval's action percentages, all via
:func:`coopeval.decisions.parsing.check_answer`, the parser of the decision loop and of
``coopeval check-answer``.
"""

from __future__ import annotations

import re
from decimal import Decimal
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopeval.decisions import ActionDistribution
from coopeval.decisions.numbers import AMBIGUOUS, GROUP_SPACES, NumberFormError, read_number_token
from coopeval.decisions.parsing import check_answer
from coopeval.pipeline.study_answers import StudyAnswerContext, study_answer_format
from coopeval.studies.evolution.formats import DonationFormat
from coopeval.studies.gossip.formats import investor_format, responder_format

ANSWERS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "protocol" / "answers.md"
SPACES = {"space": " ", "two spaces": "  ", "no-break space": "\u00a0", "thin space": "\u2009", "narrow no-break space": "\u202f"}
BIG = 10.0**9
"""A limit no row reaches: the rows test how a number is read, not the range check."""


def _table_rows() -> list[tuple[str, str, str]]:
    """(written form with its real spaces, free-text reading, JSON reading) per table row."""
    section = ANSWERS_PAGE.read_text(encoding="utf-8").split("## Numbers in answers", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        match = re.fullmatch(r"\| `([^`]+)`(?: \(([a-z -]+)\))? \| ([^|]+) \| ([^|]+) \|", line)
        if match:
            form, space, text_reading, json_reading = match.groups()
            form = form.replace(" ", SPACES[space]) if space else form
            rows.append((form, text_reading.strip(), json_reading.strip()))
    return rows


ROWS = _table_rows()


def test_the_table_has_the_issue_examples() -> None:
    forms = {form for form, _, _ in ROWS}
    assert {"1 207.4", "12 5", "1\u202f207", "1,5"} <= forms
    assert len(ROWS) >= 20


TEXT_FORMATS = {
    "units": (DonationFormat("units", BIG), "{}"),
    "costly_punishment": (DonationFormat("units", BIG, "costly_punishment"), "Donate, {}"),
    "partner_choice": (DonationFormat("units", BIG, "partner_choice"), "{}"),
    "percent": (DonationFormat("percent", BIG), "{}"),
}


def _reading(fmt: object, text: str, key: str) -> float | str:
    """The value ``check_answer`` reads, or ``"re-asked"``."""
    result = check_answer(fmt, text)  # type: ignore[arg-type]
    return float(result.parsed[key]) if result.valid and result.parsed else "re-asked"


def _expected(cell: str) -> float | str:
    return cell if cell == "re-asked" else float(cell)


def _text_reading(fmt: DonationFormat, answer: str) -> float | str:
    return _reading(fmt, f"Justification: j\nAnswer: {answer}", "value")


@pytest.mark.parametrize(("form", "text_reading", "json_reading"), ROWS, ids=[repr(r[0]) for r in ROWS])
def test_a_table_row(form: str, text_reading: str, json_reading: str) -> None:
    for variant, (fmt, template) in TEXT_FORMATS.items():
        assert _text_reading(fmt, template.format(form)) == _expected(text_reading), variant
    probe = study_answer_format("matrix_probe", StudyAnswerContext(protocol="vh", holdings=BIG))
    assert _text_reading(probe, form) == _expected(text_reading), "matrix probe"
    for amount in (investor_format(BIG), responder_format(BIG)):
        text = f'{{"justification": "j", "{amount.key}": {form}}}'
        assert _reading(amount, text, amount.key) == _expected(json_reading), amount.key
    if json_reading == "re-asked":  # CoopEval's percentages: a JSON integer 0..100 summing to 100
        assert not check_answer(ActionDistribution(("A0", "A1")), f'{{"A0": {form}, "A1": 0}}').valid


def test_the_reask_quotes_the_whole_number() -> None:
    result = check_answer(DonationFormat("units", 2000.0), "Answer: 12 5")
    assert not result.valid and "'12 5'" in result.error
    with pytest.raises(NumberFormError) as err:
        read_number_token("1 2070 units")
    assert (err.value.problem, err.value.shown) == (AMBIGUOUS, "1 2070")


def test_a_line_break_ends_the_number() -> None:
    assert read_number_token("12\n5").value == 12.0
    assert read_number_token("40 %", percent=True).value == 40.0


_NUMBERS = st.decimals(min_value=1000, max_value=10**9, places=2, allow_nan=False, allow_infinity=False)


@settings(max_examples=200, deadline=None)
@given(number=_NUMBERS, space=st.sampled_from(list(GROUP_SPACES)))
def test_any_space_grouped_number_reads_exactly(number: Decimal, space: str) -> None:
    whole, _, fraction = f"{number:f}".partition(".")
    grouped = f"{int(whole):,}".replace(",", space) + (f".{fraction}" if fraction else "")
    assert read_number_token(f"{grouped} units").value == float(number)


@settings(max_examples=200, deadline=None)
@given(first=st.integers(0, 10**6), second=st.integers(0, 10**6), space=st.sampled_from([*GROUP_SPACES, "\t", "  "]))
def test_two_numbers_side_by_side_are_never_read(first: int, second: int, space: str) -> None:
    text = f"{first}{space}{second}"
    if space in GROUP_SPACES and len(str(second)) == 3 and re.fullmatch(r"[0-9]{1,3}", str(first)):
        assert read_number_token(text).value == float(f"{first}{second}")  # a thousands group
    else:
        with pytest.raises(NumberFormError) as err:
            read_number_token(text)
        assert err.value.problem == AMBIGUOUS
