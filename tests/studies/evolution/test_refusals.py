"""Issue 36 item 2: a refusal is the answer line's leading token(s), never a mention elsewhere.

Each answer goes through :func:`coopeval.decisions.parsing.check_answer` with the
partner-choice donation format (the parser of the decision loop and of ``coopeval check-answer``).
"""

from __future__ import annotations

import pytest

from coopeval.decisions.parsing import check_answer
from coopeval.studies.evolution.formats import DonationFormat
from coopeval.studies.evolution.study import EVOLUTION_PARSER_VERSION, EvolutionStudy

CHOICE = DonationFormat("units", 10.0, "partner_choice")


def _read(answer: str, fmt: DonationFormat = CHOICE) -> tuple[str, float] | str:
    """(action, value) of a valid answer, else the failure code."""
    result = check_answer(fmt, f"Justification: j\nAnswer: {answer}")
    if not result.valid:
        return result.code
    assert result.parsed is not None
    return result.parsed["action"], result.parsed["value"]


@pytest.mark.parametrize(
    "answer",
    [
        "Refuse to play",
        "refuse",
        "Refuse.",
        "REFUSE!",
        "**Refuse to play**",
        '"Refuse to play".',
        "I refuse to play",
        "Refuse to play with Player 3",  # a player's name is no amount
        "Refuse to play\n5 would have been my offer",  # only the answer line counts
    ],
)
def test_a_leading_refusal_is_a_refusal(answer: str) -> None:
    assert _read(answer) == ("refuse", 0.0)


@pytest.mark.parametrize(
    "answer",
    [
        "I will not refuse; 5",  # the case, read as a refusal on a71c17f
        "5, I will not refuse",
        "Refuse, 5",
        "Refuse to play 0",
        "refuse or 2.5",
        "3 units, or else refuse",
    ],
)
def test_a_refusal_named_with_an_amount_is_ambiguous(answer: str) -> None:
    assert _read(answer) == "ambiguous"


@pytest.mark.parametrize("answer", ["I will not refuse", "Refused", "refusing is unwise", "Do not refuse"])
def test_a_negated_or_embedded_mention_is_not_a_refusal(answer: str) -> None:
    assert _read(answer) == "invalid"  # no leading number either: re-asked


def test_a_mention_on_a_later_line_leaves_the_amount() -> None:
    assert _read("2\nI thought about whether to refuse.") == ("donate", 2.0)


@pytest.mark.parametrize("variant", ["none", "costly_punishment"])
def test_refuse_means_nothing_without_partner_choice(variant: str) -> None:
    fmt = DonationFormat("units", 10.0, variant)
    answer = "Donate, 4, I refuse to give more" if variant == "costly_punishment" else "4, I refuse to give more"
    assert _read(answer, fmt) == ("donate", 4.0)


def test_the_changed_reading_has_a_new_parser_version() -> None:
    """The readings above differ from a71c17f's (version 3): the version is in every evolution
    cell id, so a rerun re-parses instead of keeping the old reading."""
    assert EVOLUTION_PARSER_VERSION == 4
    cells = EvolutionStudy().cells({"evolution": {"models": [{"model": "bot/evo-constant-50"}]}})
    assert cells and all(c["parser_version"] == 4 for c in cells)


def test_the_manifest_says_which_parser_read_the_answers() -> None:
    from coopeval.studies.evolution.study import MANIFEST_SCHEMA

    study = EvolutionStudy()
    cells = study.cells({"evolution": {"models": [{"model": "bot/evo-constant-50"}]}})
    header, *lines = study.manifest(cells).splitlines()
    assert header.split("\t")[-1] == "parser_version" and list(MANIFEST_SCHEMA)[-1] == "parser_version"
    assert lines and {line.split("\t")[-1] for line in lines} == {str(EVOLUTION_PARSER_VERSION)}
