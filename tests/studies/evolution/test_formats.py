"""Answer formats (docs/protocol/evolution.md#vh-prompts, #punishment-variants, #horibe-prompts): parsing exactly as specified, grammars, bot texts."""

from __future__ import annotations

import pytest

from coopeval.decisions.errors import AnswerError
from coopeval.studies.evolution.formats import (
    DonationFormat,
    StrategyFormat,
    truncate_words,
    word_count,
)


def test_vh_strategy_split_at_first_phrase() -> None:
    fmt = StrategyFormat("vh")
    out = fmt.parse("Step 1: think.\nMy strategy will be to give 3 units. My strategy will be kind.")
    assert out["justification"] == "Step 1: think."
    assert out["strategy"] == "My strategy will be to give 3 units. My strategy will be kind."
    assert fmt.parse("Just be generous.")["strategy"] == "Just be generous."  # phrase missing: whole output
    assert fmt.parse("Just be generous.")["justification"] == ""
    with pytest.raises(AnswerError, match="empty"):
        fmt.parse("thinking...\nMy strategy will be")


def test_horibe_strategy_and_word_count() -> None:
    fmt = StrategyFormat("horibe", word_limit=350)
    out = fmt.parse("Strategy: give 40% to those who gave at least 30%.")
    assert out["strategy"] == "give 40% to those who gave at least 30%." and out["words"] == 9
    long = "Strategy: " + " ".join(["w"] * 400)
    assert fmt.parse(long)["words"] == 400  # the limit is enforced by the protocol, not the parser
    assert word_count(truncate_words(" ".join(["w"] * 400), 350)) == 350


def test_units_answer() -> None:
    fmt = DonationFormat("units", 12.5)
    assert fmt.parse("Justification: be nice\nAnswer: 3.5 units") == {"action": "donate", "value": 3.5, "justification": "be nice"}
    assert fmt.parse("Answer:   7")["value"] == 7.0
    assert fmt.parse("Justification: a\nAnswer: 2 Answer: 9")["value"] == 2.0  # first Answer:
    for bad, code in [("I give 3", "invalid"), ("Answer: about 3", "invalid"), ("Answer: 13", "range"), ("Answer: -1", "invalid")]:
        with pytest.raises(AnswerError) as err:
            fmt.parse(bad)
        assert err.value.code == code


def test_percent_answer_range() -> None:
    fmt = DonationFormat("percent", 100.0)
    assert fmt.parse("Justification: x Answer: 100")["value"] == 100.0
    with pytest.raises(AnswerError, match="outside the allowed range 0 to 100"):
        fmt.parse("Justification: x Answer: 100.5")


def test_costly_punishment_answers() -> None:
    fmt = DonationFormat("units", 10.0, "costly_punishment")
    assert fmt.parse("Justification: j\nAnswer: Punish, 1.5")["action"] == "punish"
    assert fmt.parse("Justification: j\nAnswer: Punish, 1.5")["value"] == 1.5
    assert fmt.parse("Answer: I will donate 4")["action"] == "donate"
    with pytest.raises(AnswerError, match="Donate"):
        fmt.parse("Answer: 4")


def test_partner_choice_answers() -> None:
    fmt = DonationFormat("units", 10.0, "partner_choice")
    assert fmt.parse("Answer: I refuse to play")["action"] == "refuse"
    assert fmt.parse("Answer: Refuse to play")["value"] == 0.0
    assert fmt.parse("Answer: 2")["action"] == "donate"


@pytest.mark.parametrize("variant", ["none", "costly_punishment", "partner_choice"])
def test_rendered_answers_round_trip(variant: str) -> None:
    fmt = DonationFormat("units", 499.375, variant)
    for value in (0.0, 91.484375, 249.6875):
        assert fmt.parse(fmt.render("donate", value))["value"] == value
    assert fmt.parse(fmt.bot_text({"bot_percent": 50, "donor_resources": 182.96875}))["value"] == 91.484375


def test_grammars_are_text_and_bounded() -> None:
    g = DonationFormat("percent", 100.0, max_justification_chars=80).complete_grammar()
    assert g.startswith('root ::= "Justification: "') and "{0,80}" in g and '"100"' in g
    assert "My strategy will be" in StrategyFormat("vh").complete_grammar()
    assert StrategyFormat("horibe", max_chars=300).complete_grammar().startswith('root ::= "Strategy: "')
    assert DonationFormat("units", 1234.5).max_output_chars() > 160


def test_grammars_compile_with_llama_cpp() -> None:
    from tests.local_runtime import runtime_fixture

    fixture = runtime_fixture()
    runtime = next(fixture)
    for text in (
        DonationFormat("percent").complete_grammar(),
        DonationFormat("units", 42.0, "costly_punishment").complete_grammar(),
        DonationFormat("units", 42.0, "partner_choice").complete_grammar(),
        StrategyFormat("vh").complete_grammar(),
        StrategyFormat("horibe").complete_grammar(),
    ):
        assert runtime.grammar_error(text) is None, text  # type: ignore[attr-defined]
    fixture.close()


def test_bad_format_arguments() -> None:
    with pytest.raises(ValueError, match="variant"):
        DonationFormat("units", 10, "bribe")
    with pytest.raises(ValueError, match="unit"):
        DonationFormat("coins", 10)


def _gbnf_language(expr: str) -> set[str]:
    """All strings of a simple GBNF alternation of literal / class sequences (test helper)."""
    import itertools
    import re as _re

    out: set[str] = set()
    for alt in expr.split(" | "):
        parts = []
        for token in alt.split(" "):
            m = _re.fullmatch(r"\[(\d)-(\d)\]", token)
            parts.append([str(d) for d in range(int(m.group(1)), int(m.group(2)) + 1)] if m else [token.strip('"')])
        out.update("".join(p) for p in itertools.product(*parts))
    return out


@pytest.mark.parametrize("bound", [0, 1, 5, 9, 10, 25, 100, 182, 499, 1000, 2414])
def test_int_upto_is_exact(bound: int) -> None:
    from coopeval.studies.evolution.formats import int_upto

    assert _gbnf_language(int_upto(bound)) == {str(v) for v in range(bound + 1)}


def test_local_agent_sends_the_formats_own_grammar() -> None:
    from coopeval.agents.grammar import max_tokens_for
    from coopeval.agents.local import LocalModelMissingError
    from coopeval.agents.protocol import DecisionRequest
    from coopeval.studies.evolution.agents import role_agent

    try:
        agent = role_agent({"model": "local/smollm2-135m"}, "gameplay", 0.3)
    except LocalModelMissingError:
        pytest.skip("the embedded model is not installed")
    fmt = DonationFormat("percent", max_justification_chars=80)
    kwargs = agent.inner.call_kwargs(DecisionRequest(messages=({"role": "user", "content": "x"},), answer_format=fmt))  # type: ignore[attr-defined]
    assert kwargs["grammar"] == fmt.complete_grammar() and kwargs["max_tokens"] == max_tokens_for(fmt) == fmt.max_output_chars() + 1
    assert kwargs["temperature"] == 0.3 and agent.style == "evolution"


@pytest.mark.parametrize(
    ("fmt", "longest"),
    [
        (DonationFormat("percent", max_justification_chars=80), "Justification: " + "j" * 80 + "\nAnswer: 99.99"),
        (DonationFormat("units", 1234.5, max_justification_chars=20), "Justification: " + "j" * 20 + "\nAnswer: 1234.49"),
        (DonationFormat("units", 42.0, "costly_punishment", 10), "Justification: " + "j" * 10 + "\nAnswer: Punish, 42.00"),
        (DonationFormat("units", 9.0, "partner_choice", 10), "Justification: " + "j" * 10 + "\nAnswer: Refuse to play"),
        (StrategyFormat("vh", max_chars=50, max_reasoning_chars=30), "r" * 30 + "\nMy strategy will be " + "s" * 50),
        (StrategyFormat("horibe", max_chars=50), "Strategy: " + "s" * 50),
    ],
)
def test_max_output_chars_is_the_longest_admitted_answer(fmt: object, longest: str) -> None:
    from coopeval.agents.grammar import gbnf_for, max_tokens_for

    assert fmt.max_output_chars() == len(longest)  # type: ignore[attr-defined]
    fmt.parse(longest)  # type: ignore[attr-defined]
    assert gbnf_for(fmt, "CoT") == gbnf_for(fmt, "IO") == fmt.complete_grammar()  # type: ignore[arg-type,attr-defined]
    assert max_tokens_for(fmt, "CoT") == len(longest) + 1  # type: ignore[arg-type]


def _decimals_upto(hundredths: int) -> set[str]:
    """Independently: every number 0 … hundredths/100 with ≤ 2 decimals, no leading zeros, and
    no decimals on a whole limit itself (spelled '5', '5.0', '5.00', '5.1', '5.10', …)."""
    out = set()
    for cents in range(hundredths + 1):
        whole, frac = divmod(cents, 100)
        if frac == 0:
            out.add(str(whole))
            if cents == hundredths:
                continue  # a whole limit is written without decimals
        out.add(f"{whole}.{frac:02d}")
        if frac % 10 == 0:
            out.add(f"{whole}.{frac // 10}")
    return out


@pytest.mark.parametrize("hundredths", [0, 1, 9, 10, 50, 99, 100, 1000, 1050, 18297, 10000])
def test_decimal_upto_is_exact(hundredths: int) -> None:
    """Issue 21 item 2: the embedded model's grammar admits exactly the amounts the parser
    accepts (a donor with 0 units was offered 0.10 and re-asked six times)."""
    from coopeval.studies.evolution.formats import decimal_upto

    assert _gbnf_language(decimal_upto(hundredths)) == _decimals_upto(hundredths)
    fmt = DonationFormat("units", hundredths / 100)
    for text in _gbnf_language(decimal_upto(hundredths)):
        assert fmt.parse(f"Answer: {text}")["value"] <= hundredths / 100
