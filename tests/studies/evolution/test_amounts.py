"""Donation amounts (issue 21 items 1–2): numbers read as one whole token in both protocols,
ambiguous forms re-asked, nothing clipped or substituted; the holdings a prompt shows are the
limit the parser accepts, and stating them gives everything (the all-in donation)."""

from __future__ import annotations

import asyncio
import re
from decimal import Decimal

import pytest
from hypothesis import assume, given
from hypothesis import settings as hsettings
from hypothesis import strategies as st

from coopeval.decisions.errors import AnswerError
from coopeval.studies.evolution.amounts import (
    read_number,
    shown_units,
    stated_limit,
    units_for_percent,
    units_given,
)
from coopeval.studies.evolution.bots import ConstantFraction
from coopeval.studies.evolution.formats import DonationFormat
from coopeval.studies.evolution.runner import RunAgents
from coopeval.studies.evolution.traces import Trace

from .helpers import FakeLLM, bot_agents, make_run, settings

UNITS = DonationFormat("units", 2414.8)
PERCENT = DonationFormat("percent", 100.0)
PUNISH = DonationFormat("units", 2414.8, "costly_punishment")
CHOICE = DonationFormat("units", 2414.8, "partner_choice")


def _value(fmt: DonationFormat, answer: str) -> float:
    return float(fmt.parse(f"Justification: j\nAnswer: {answer}")["value"])


def _code(fmt: DonationFormat, answer: str) -> str:
    with pytest.raises(AnswerError) as err:
        fmt.parse(f"Justification: j\nAnswer: {answer}")
    return err.value.code


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("1,250.5", 1250.5),  # read as 1.0 before
        ("1,250", 1250.0),  # read as 1.25 by the decimal-comma rule before
        ("2,414.8 units", 2414.8),
        ("1250.", 1250.0),
        ("1,250.5, because", 1250.5),
        ("12.5) so", 12.5),
        ("  7", 7.0),
        ("0", 0.0),
    ],
)
@pytest.mark.parametrize("fmt", [UNITS, PUNISH, CHOICE], ids=["none", "costly_punishment", "partner_choice"])
def test_units_numbers_are_whole_tokens(fmt: DonationFormat, answer: str, value: float) -> None:
    text = f"Donate, {answer}" if fmt.variant == "costly_punishment" else answer
    assert _value(fmt, text) == value


@pytest.mark.parametrize("answer", ["12,5", "1,5", "3.2.1", "1e3", "1,2500", "1250,5", "1.250,5", "5units", "7-8"])
@pytest.mark.parametrize("fmt", [UNITS, PUNISH, CHOICE, PERCENT], ids=["none", "costly_punishment", "partner_choice", "percent"])
def test_ambiguous_numbers_are_reasked_in_both_protocols(fmt: DonationFormat, answer: str) -> None:
    text = f"Punish, {answer}" if fmt.variant == "costly_punishment" else answer
    assert _code(fmt, text) == "ambiguous"


@pytest.mark.parametrize(("answer", "value"), [("50%", 50.0), ("50.5%.", 50.5), ("40 %", 40.0), ("100", 100.0), ("0%, nothing", 0.0)])
def test_percent_answers(answer: str, value: float) -> None:
    assert _value(PERCENT, answer) == value


@pytest.mark.parametrize(
    ("fmt", "answer", "code"),
    [
        (PERCENT, "100.5", "range"),
        (PERCENT, "1,250", "range"),  # read whole (1250), then out of range: re-asked, never clipped
        (UNITS, "2414.81", "range"),
        (UNITS, "1,000,000", "range"),
        (UNITS, "50%", "invalid"),  # a percentage where units are asked
        (UNITS, "-3", "invalid"),
        (UNITS, "about 3", "invalid"),
        (PERCENT, "5%5", "ambiguous"),
    ],
)
def test_out_of_range_and_invalid(fmt: DonationFormat, answer: str, code: str) -> None:
    assert _code(fmt, answer) == code


def test_the_reference_decimal_comma_is_not_read() -> None:
    assert _code(PUNISH, "Punish, 1,5") == "ambiguous"
    assert _value(PUNISH, "Punish, 1.5") == 1.5 and PUNISH.parse("Answer: Punish, 1.5")["action"] == "punish"


_PLAIN = st.decimals(min_value=0, max_value=10**7, places=3, allow_nan=False, allow_infinity=False)
_GOOD_END = st.sampled_from(["", " units", ".", ". Done", ",", ", because", ")", "!", "\n", ";x"])


def _grouped(number: Decimal) -> str:
    whole, _, fraction = f"{number:f}".partition(".")
    return f"{int(whole):,}" + (f".{fraction}" if fraction else "")


@hsettings(max_examples=200, deadline=None)
@given(number=_PLAIN, grouped=st.booleans(), end=_GOOD_END, percent=st.booleans())
def test_any_well_formed_number_reads_exactly(number: Decimal, grouped: bool, end: str, percent: bool) -> None:
    text = (_grouped(number) if grouped else f"{number:f}") + ("%" if percent and end == "" else end)
    token = read_number(text, percent=percent)
    assert token.value == float(number)


@hsettings(max_examples=200, deadline=None)
@given(
    number=_PLAIN,
    tail=st.one_of(
        st.from_regex(r"\A,[0-9]{1,2}\Z"),
        st.from_regex(r"\A,[0-9]{4,6}\Z"),
        st.from_regex(r"\A\.[0-9]+\.[0-9]\Z"),
        st.from_regex(r"\A[eE][+-]?[0-9]\Z"),
        st.from_regex(r"\A[a-zA-Z][a-z ]*\Z"),
        st.from_regex(r"\A[/:\-][0-9]\Z"),
    ),
    percent=st.booleans(),
)
def test_a_number_running_on_is_never_read(number: Decimal, tail: str, percent: bool) -> None:
    text = f"{int(number)}{tail}"
    with pytest.raises(AnswerError) as err:
        read_number(text, percent=percent)
    assert err.value.code == "ambiguous"


# --- what the prompt shows is what the parser accepts (item 2) ---------------------------------

_HOLDINGS = st.one_of(
    st.floats(min_value=0.0, max_value=1e6, allow_nan=False, allow_infinity=False),
    st.sampled_from([182.96875, 499.375, 2414.797, 15360.0, 0.005, 0.004, 10.0]),
)


def _all_in_answer(run: object, holdings: float) -> tuple[str, DonationFormat]:
    fmt = run.donation_format(holdings)  # type: ignore[attr-defined]
    body = run.prompts.donation("P1", "s", 1, 1, "P2", 1.0, Trace.empty("P2"), holdings)  # type: ignore[attr-defined]
    shown = re.search(r"between 0 and ([0-9]+(?:\.[0-9]+)?)", body).group(1)  # type: ignore[union-attr]
    return shown, fmt


@hsettings(max_examples=150, deadline=None)
@given(holdings=_HOLDINGS, variant=st.sampled_from(["none", "costly_punishment", "partner_choice"]))
def test_vh_the_shown_holdings_give_everything(holdings: float, variant: str) -> None:
    run = make_run(settings(protocol="vh", punishment=variant), bot_agents(ConstantFraction(50)))
    shown, fmt = _all_in_answer(run, holdings)
    assert shown == shown_units(holdings) and float(shown) == fmt.limit
    answer = f"Donate, {shown}" if variant == "costly_punishment" else shown
    parsed = fmt.parse(f"Justification: all\nAnswer: {answer}")
    given_units = run.resolve(parsed, fmt, holdings).amount
    assert given_units == (holdings if float(shown) > 0 else 0.0)  # all-in: exactly what it holds (0 is nothing)
    above = Decimal(shown) + Decimal("0.01")
    with pytest.raises(AnswerError, match=re.escape(f"0 to {shown} ")):
        fmt.parse(f"Answer: {'Donate, ' if variant == 'costly_punishment' else ''}{above}")


@hsettings(max_examples=150, deadline=None)
@given(holdings=_HOLDINGS, base=st.sampled_from(["current", "endowment"]))
def test_horibe_the_shown_limit_gives_everything(holdings: float, base: str) -> None:
    run = make_run(settings(protocol="horibe", percent_base=base), bot_agents(ConstantFraction(50)))
    shown, fmt = _all_in_answer(run, holdings)
    assert float(shown) == fmt.limit <= 100
    assert run.resolve(fmt.parse(f"Answer: {shown}"), fmt, holdings).amount == (holdings if float(shown) > 0 else 0.0)
    with pytest.raises(AnswerError, match="outside the allowed range"):
        fmt.parse(f"Answer: {Decimal(shown) + Decimal('0.01')}")


@hsettings(max_examples=150, deadline=None)
@given(holdings=_HOLDINGS, fraction=st.floats(min_value=0, max_value=1))
def test_a_valid_statement_never_gives_more_than_held_nor_differs_from_what_was_said(holdings: float, fraction: float) -> None:
    stated = float(shown_units(fraction * stated_limit(holdings)))
    given_units = units_given(stated, holdings)
    assert 0 <= given_units <= holdings
    assert given_units == stated or (given_units == holdings and abs(stated - holdings) <= 0.005 + 1e-9)


def test_the_issue_examples_of_all_in() -> None:
    run = make_run(settings(protocol="vh"), bot_agents(ConstantFraction(50)))
    for holdings, shown in ((182.96875, "182.97"), (2414.797, "2414.8")):
        fmt = run.donation_format(holdings)
        assert run.resolve(fmt.parse(f"Answer: {shown}"), fmt, holdings).amount == holdings
    fmt = run.donation_format(2414.797)
    assert run.resolve(fmt.parse("Answer: 1,207.40"), fmt, 2414.797).amount == 1207.4


# --- the events store the raw answer, the number and the parse status (item 1) ------------------


def test_events_store_raw_answer_number_and_status() -> None:
    answers = iter(["Justification: j\nAnswer: 1,5"] + ["Justification: j\nAnswer: 2.5, as planned"] * 1000)

    class Scripted(FakeLLM):
        async def generate(self, request):  # type: ignore[no-untyped-def]
            if request.answer_format.kind == "donation":
                self.calls += 1
                from coopeval.agents.protocol import Reply

                return Reply(text=next(answers))
            return await super().generate(request)

    llm = Scripted(0.8)
    run = make_run(settings(protocol="vh", invasion_per_generation=0, matrix_per_generation=0), RunAgents(llm, llm, llm, llm))
    _, records = asyncio.run(run.step(1, None))
    events = sorted(records.tables["evo_events"], key=lambda e: (e["game"], e["round"], e["pair"]))
    reasked = [e for e in events if e["attempts"] == 2]
    assert len(reasked) == 1 and reasked[0]["parse_status"] == "ok" and reasked[0]["raw_answer"] == "2.5, as planned"
    assert {e["stated_value"] for e in events} == {2.5} and {e["amount"] for e in events} == {2.5}


def test_a_failed_decision_records_its_last_rejection_and_gives_nothing() -> None:
    class Ambiguous(FakeLLM):
        async def generate(self, request):  # type: ignore[no-untyped-def]
            from coopeval.agents.protocol import Reply

            if request.answer_format.kind == "donation":
                return Reply(text="Justification: j\nAnswer: 12,5")
            return await super().generate(request)

    llm = Ambiguous(0.8)
    run = make_run(settings(protocol="vh", invasion_per_generation=0, matrix_per_generation=0), RunAgents(llm, llm, llm, llm))
    _, records = asyncio.run(run.step(1, None))
    events = records.tables["evo_events"]
    assert {e["parse_status"] for e in events} == {"ambiguous"} and {e["raw_answer"] for e in events} == {"12,5"}
    assert {e["action"] for e in events} == {"invalid"} and {e["amount"] for e in events} == {0.0}
    assert {e["stated_value"] for e in events} == {None} and all(e["failed"] for e in events)


def test_units_given_refuses_what_the_parser_would_reask() -> None:
    with pytest.raises(ValueError, match="outside"):
        units_given(182.98, 182.96875)
    with pytest.raises(ValueError, match="outside"):
        units_given(-1, 5)


@hsettings(max_examples=100, deadline=None)
@given(holdings=_HOLDINGS, percent=st.floats(min_value=0, max_value=100))
def test_a_bot_answer_is_always_accepted_and_never_gives_more_than_asked_beyond_the_shown_rounding(holdings: float, percent: float) -> None:
    run = make_run(settings(protocol="vh"), bot_agents(ConstantFraction(50)))
    fmt = run.donation_format(holdings)
    parsed = fmt.parse(fmt.bot_text({"bot_percent": percent, "donor_resources": holdings}))
    given_units = run.resolve(parsed, fmt, holdings).amount
    assert 0 <= given_units <= holdings
    assert abs(given_units - percent / 100 * holdings) <= 0.005 + 1e-9 * holdings


@hsettings(max_examples=150, deadline=None)
@given(holdings=_HOLDINGS, percent=st.floats(min_value=0, max_value=100), base=st.sampled_from(["current", "endowment"]))
def test_percent_below_the_limit_gives_p_percent_of_the_base(holdings: float, percent: float, base: str) -> None:
    """A stated percentage below the shown limit gives p/100 of the base, bit for bit the
    formula of c0a5a29 (``p * (base / 100)``), computed by the engine's stage game."""
    s = settings(protocol="horibe", percent_base=base)
    game = s.donation_game
    units_base = holdings if base == "current" else s.endowment
    full = 100.0 if holdings >= units_base else 100.0 * holdings / units_base
    stated = float(shown_units(percent))
    assume(stated <= stated_limit(full) and not (stated > 0 and stated >= min(stated_limit(full), full)))  # all-in: above
    assert units_for_percent(stated, holdings, game) == min(stated * (units_base / 100.0), holdings)
