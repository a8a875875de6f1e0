"""The judge prompt lists the numbered categories with their definitions from the taxonomy file,
names the game and carries the trimmed response; a replaced taxonomy file changes both the prompt
and the accepted labels."""

from __future__ import annotations

import pytest

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.parsing import parse_answer
from coopeval.decisions.taxonomy import load_taxonomy
from coopeval.studies.coopeval.judge.prompt import JudgePrompt, category_lines
from tests.fakes import judge_answer
from tests.shared_data import JUDGE_TEMPLATE


def test_default_prompt_lists_every_category_in_order():
    taxonomy = load_taxonomy()
    text = JudgePrompt(taxonomy, JUDGE_TEMPLATE).render(
        "Prisoner's Dilemma", "\n   I defect because it pays more.  \n"
    )
    for n, name, definition in taxonomy.numbered():
        assert f"\n{n}. {name}: {definition}\n" in text
    assert (
        text.index("1. Individual utility maximization")
        < text.index("15. Multidimensional reasoning")
        < text.index("16. Other")
    )
    assert "The game is Prisoner's Dilemma." in text
    assert "\nI defect because it pays more.\n" in text
    assert '"justification_type"' in text and '"confidence"' in text and '"reasoning"' in text
    assert JUDGE_TEMPLATE.name == "judge.txt" and JUDGE_TEMPLATE.parent.name == "judge"


def test_replaced_taxonomy_changes_prompt_and_accepted_labels(tmp_path):
    path = tmp_path / "taxonomy.yaml"
    path.write_text(
        "categories:\n"
        "  - {name: Greed, definition: Wants the most points.}\n"
        "  - {name: Kindness, definition: Helps the others.}\n"
        "fallback: Unclear\n"
        "fallback_definition: Nothing fits.\n"
    )
    taxonomy = load_taxonomy(path)
    assert (
        category_lines(taxonomy)
        == "1. Greed: Wants the most points.\n2. Kindness: Helps the others.\n3. Unclear: Nothing fits."
    )
    text = JudgePrompt(taxonomy, JUDGE_TEMPLATE).render("Trust Game", "x")
    assert "Individual utility maximization" not in text and "pick Unclear" in text
    fmt = taxonomy.answer_format()
    assert parse_answer(fmt, judge_answer("kindness, 1"))["labels"] == ["Greed", "Kindness"]
    with pytest.raises(AnswerError, match='unknown justification type "Reciprocity"'):
        parse_answer(fmt, judge_answer("Reciprocity"))


def test_template_checks(tmp_path):
    taxonomy = load_taxonomy()
    bad = tmp_path / "bad.txt"
    bad.write_text("Classify $response for $player.")
    with pytest.raises(ValueError, match=r"unknown placeholder \$player"):
        JudgePrompt(taxonomy, bad)
    bad.write_text("Classify $response.")
    with pytest.raises(ValueError, match=r"needs \$categories"):
        JudgePrompt(taxonomy, bad)
