"""Judge answers under "Our contract" (docs/protocol/design-checks.md#what-is-judged) and the taxonomy file (docs/protocol/design-checks.md#categories)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from coopeval.decisions import (
    AnswerError,
    DecisionKind,
    JudgeLabels,
    Taxonomy,
    TaxonomyError,
    load_taxonomy,
    normalise_label,
    parse_answer,
)

SPEC_CATEGORIES = (
    "Individual utility maximization",
    "Strategic equilibrium focus",
    "Social welfare maximization",
    "Inequity aversion",
    "Reciprocity",
    "Strategic influence",
    "Trust evaluation",
    "Competitiveness",
    "Uncertainty evaluation",
    "Social norm conformity",
    "Rule misunderstanding",
    "Exploration-exploitation trade-off",
    "Risk aversion",
    "Strategy legibility",
    "Multidimensional reasoning",
)

TAXONOMY = load_taxonomy()
JUDGE = TAXONOMY.answer_format()
UNKNOWN_TAIL = '; use only the category names listed (or "Other" when none fits), separated by commas'

STRICT_HINT = " (write strict JSON: double-quoted keys, plain numbers without %, no trailing comma)"


def answer(labels: Any, confidence: Any = 0.85, reasoning: Any = "Weighs payoffs.") -> str:
    return json.dumps({"reasoning": reasoning, "confidence": confidence, "justification_type": labels})


def judge_error(text: str) -> AnswerError:
    with pytest.raises(AnswerError) as info:
        parse_answer(JUDGE, text)
    return info.value


# ---------------------------------------------------------------- taxonomy file


def test_packaged_taxonomy_matches_spec() -> None:
    assert TAXONOMY.categories == SPEC_CATEGORIES
    assert TAXONOMY.fallback == "Other"
    assert TAXONOMY.labels == (*SPEC_CATEGORIES, "Other")
    assert len(TAXONOMY.definitions) == 16 and all(d.strip() for d in TAXONOMY.definitions)
    assert TAXONOMY.numbered()[0] == (1, "Individual utility maximization", TAXONOMY.definitions[0])
    assert TAXONOMY.numbered()[-1][:2] == (16, "Other")
    assert TAXONOMY.definition_of("Reciprocity") == TAXONOMY.definitions[4]
    with pytest.raises(KeyError):
        TAXONOMY.definition_of("Altruism")
    assert TAXONOMY.source.endswith("justification_taxonomy.yaml")


def test_answer_format_of_taxonomy() -> None:
    assert JUDGE.kind is DecisionKind.JUDGE
    assert JUDGE.keys == ("reasoning", "confidence", "justification_type")
    assert JUDGE.values == TAXONOMY.labels and isinstance(JUDGE, JudgeLabels)


def test_load_taxonomy_from_path_roundtrip(tmp_path: Path) -> None:
    path = tmp_path / "tax.yaml"
    path.write_text(
        "categories:\n  - {name: ' Alpha  one ', definition: First.}\n  - {name: Beta, definition: Second.}\n"
        "fallback: Other\n"
    )
    tax = load_taxonomy(path)
    assert tax == Taxonomy(labels=("Alpha one", "Beta", "Other"), definitions=("First.", "Second.", "Nothing else fits."),
                           source=str(path))


@pytest.mark.parametrize(
    ("content", "field", "problem"),
    [
        ("- a\n- b\n", "<top level>", "expected a mapping"),
        ("fallback: Other\n", "categories", "must be a non-empty list"),
        ("categories: []\nfallback: Other\n", "categories", "must be a non-empty list"),
        ("categories:\n  - {name: A, definition: x}\nfallback: Other\ncolour: red\n", "colour", "unknown key"),
        ("categories:\n  - just a string\nfallback: Other\n", "categories[0]", "must be a mapping"),
        ("categories:\n  - {name: '', definition: x}\nfallback: Other\n", "categories[0].name", "non-empty string"),
        ("categories:\n  - {definition: x}\nfallback: Other\n", "categories[0].name", "non-empty string"),
        ("categories:\n  - {name: A}\nfallback: Other\n", "categories[0].definition", "non-empty string"),
        ("categories:\n  - {name: A, definition: x, colour: red}\nfallback: Other\n", "categories[0].colour", "unknown key"),
        ("categories:\n  - {name: Risk aversion, definition: x}\n  - {name: risk  AVERSION, definition: y}\n"
         "fallback: Other\n", "categories[1].name", "'risk AVERSION' duplicates categories[0].name"),
        ("categories:\n  - {name: 'Trust, evaluation', definition: x}\nfallback: Other\n", "categories[0].name", "comma"),
        ("categories:\n  - {name: Category 3, definition: x}\nfallback: Other\n", "categories[0].name", "numeric"),
        ("categories:\n  - {name: A, definition: x}\n", "fallback", "non-empty string"),
        ("categories:\n  - {name: Other, definition: x}\nfallback: other\n", "fallback", "duplicates categories[0].name"),
        ("categories:\n  - {name: A, definition: x}\nfallback: Other\nfallback_definition: ''\n", "fallback_definition",
         "non-empty string"),
    ],
)
def test_invalid_taxonomy_files(tmp_path: Path, content: str, field: str, problem: str) -> None:
    path = tmp_path / "bad_taxonomy.yaml"
    path.write_text(content)
    with pytest.raises(TaxonomyError) as info:
        load_taxonomy(path)
    message = str(info.value)
    assert message.startswith(f"{path}: {field}: "), message
    assert problem in message


def test_taxonomy_yaml_syntax_error_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("categories: [unclosed\n")
    with pytest.raises(TaxonomyError, match=r"broken\.yaml: not valid YAML"):
        load_taxonomy(bad)
    with pytest.raises(TaxonomyError, match=r"missing\.yaml: cannot read file"):
        load_taxonomy(tmp_path / "missing.yaml")


def test_import_is_light() -> None:
    src = Path(__file__).resolve().parents[2] / "src"
    code = "import sys, coopeval.decisions; print(sorted(m for m in ('yaml', 'numpy', 'litellm') if m in sys.modules))"
    env = dict(os.environ, PYTHONPATH=str(src))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------- judge answers


def test_single_label() -> None:
    result = parse_answer(JUDGE, answer("Reciprocity", 0.9, "Mirrors the opponent."))
    assert result == {"reasoning": "Mirrors the opponent.", "confidence": 0.9, "labels": ["Reciprocity"]}


def test_multi_label_normalised_and_in_taxonomy_order() -> None:
    result = parse_answer(JUDGE, answer("  risk   AVERSION ,strategic EQUILIBRIUM focus,Individual utility maximization"))
    assert result["labels"] == ["Individual utility maximization", "Strategic equilibrium focus", "Risk aversion"]


def test_numeric_aliases() -> None:
    result = parse_answer(JUDGE, answer("Category3, 5, category 15, CATEGORY1"))
    assert result["labels"] == [
        "Individual utility maximization",
        "Social welfare maximization",
        "Reciprocity",
        "Multidimensional reasoning",
    ]
    # 16 is the fallback's number in the prompt
    assert parse_answer(JUDGE, answer("16"))["labels"] == ["Other"]


def test_duplicates_collapse() -> None:
    result = parse_answer(JUDGE, answer("Reciprocity, 5, reciprocity, Category5"))
    assert result["labels"] == ["Reciprocity"]


def test_other_is_an_explicit_fallback() -> None:
    assert parse_answer(JUDGE, answer("Other", 0.3))["labels"] == ["Other"]
    assert parse_answer(JUDGE, answer("other"))["labels"] == ["Other"]


def test_confidence_bounds_and_integers() -> None:
    assert parse_answer(JUDGE, answer("Reciprocity", 1))["confidence"] == 1.0
    assert type(parse_answer(JUDGE, answer("Reciprocity", 0))["confidence"]) is float


def test_fences_and_first_object() -> None:
    text = ("```json\n" + answer("Trust evaluation", 0.7) + "\n```\nAlternatively: " + answer("Competitiveness"))
    assert parse_answer(JUDGE, text)["labels"] == ["Trust evaluation"]
    # the first object is used even if a later one would be valid
    bad_first = answer("Altruism") + "\n" + answer("Reciprocity")
    assert str(judge_error(bad_first)) == 'unknown justification type "Altruism"' + UNKNOWN_TAIL


def test_fallback_label_accepted_even_if_not_listed() -> None:
    fmt = JudgeLabels(("Alpha", "Beta"))
    text = answer("Other, 2")
    assert parse_answer(fmt, text)["labels"] == ["Beta", "Other"]
    with pytest.raises(AnswerError, match='unknown justification type "3"'):
        parse_answer(fmt, answer("3"))


def test_normalise_label() -> None:
    assert normalise_label("  Risk \n\t AVERSION ") == "risk aversion"


@pytest.mark.parametrize(
    ("text", "message", "code"),
    [
        (answer("Reciprocity, Altruism"), 'unknown justification type "Altruism"' + UNKNOWN_TAIL, "label"),
        (answer("Altruism, Kindness"), 'unknown justification types "Altruism", "Kindness"' + UNKNOWN_TAIL, "label"),
        (answer("0"), 'unknown justification type "0"' + UNKNOWN_TAIL, "label"),
        (answer("17"), 'unknown justification type "17"' + UNKNOWN_TAIL, "label"),
        (answer("Reciprocity; Risk aversion"), 'unknown justification type "Reciprocity; Risk aversion"' + UNKNOWN_TAIL,
         "label"),
        (answer("Risk-aversion"), 'unknown justification type "Risk-aversion"' + UNKNOWN_TAIL, "label"),
        (answer(""), '"justification_type" names no category; give at least one (or "Other")', "label"),
        (answer(" , "), '"justification_type" names no category; give at least one (or "Other")', "label"),
        (answer(["Reciprocity"]),
         '"justification_type" must be one string of comma-separated category names, not a list', "type"),
        (answer("Reciprocity", "0.85"), '"confidence" must be a number between 0 and 1, not "0.85" (a string)', "type"),
        (answer("Reciprocity", True), '"confidence" must be a number between 0 and 1, not true (a boolean)', "type"),
        (answer("Reciprocity", None), '"confidence" must be a number between 0 and 1, not null (null)', "type"),
        (answer("Reciprocity", 1.2), '"confidence" must be between 0 and 1, not 1.2', "range"),
        (answer("Reciprocity", -0.1), '"confidence" must be between 0 and 1, not -0.1', "range"),
        (answer("Reciprocity", 85), '"confidence" must be between 0 and 1, not 85', "range"),
        # issue 13: NaN is not JSON (strict decoding), so the object itself is rejected
        ('{"reasoning": "x", "confidence": NaN, "justification_type": "Reciprocity"}',
         'the first JSON object {"reasoning": "x", "confidence": NaN, "justification_type... is not valid JSON: '
         "NaN is not a JSON number" + STRICT_HINT, "syntax"),
        (answer("Reciprocity", 0.5, 42), '"reasoning" must be a string, not an integer', "type"),
        ('{"Reasoning_behind_classification": "x", "Confidence": 0.8, "justification_type": "Reciprocity"}',
         'the JSON object must have exactly the keys "reasoning", "confidence", "justification_type"; missing keys '
         '"reasoning", "confidence"; unexpected keys "Reasoning_behind_classification", "Confidence"', "keys"),
        ('{"reasoning": "x", "confidence": 0.8}',
         'the JSON object must have exactly the keys "reasoning", "confidence", "justification_type"; '
         'missing key "justification_type"', "keys"),
        ("{'reasoning': 'x', 'confidence': 0.8, 'justification_type': 'Reciprocity'}",
         "the first JSON object {'reasoning': 'x', 'confidence': 0.8, 'justification_type... is not valid JSON: "
         "expecting property name enclosed in double quotes at: 'reasoning': 'x',..." + STRICT_HINT, "syntax"),
        ('{"reasoning": "x", "confidence": 0.8, "justification_type": "Reciprocity",}',
         'the first JSON object {"reasoning": "x", "confidence": 0.8, "justification_type... is not valid JSON: '
         "a trailing comma before '}'" + STRICT_HINT, "syntax"),
        ("The strategy is reciprocal.", "no JSON object found", "no_json"),
    ],
)
def test_judge_rejects(text: str, message: str, code: str) -> None:
    error = judge_error(text)
    assert str(error) == message
    assert error.code == code
