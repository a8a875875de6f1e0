"""Re-ask prompts (docs/protocol/answers.md#re-asks)."""

from __future__ import annotations

import pytest

from coopeval.decisions import (
    MAX_ATTEMPTS,
    ActionDistribution,
    AnswerError,
    parse_answer,
    reask_messages,
)
from coopeval.decisions.reask import MAX_REASKS

ORIGINAL = (
    {"role": "system", "content": "You are a player in a game."},
    {"role": "user", "content": "Choose a probability distribution over A0 and A1.\n"},
)
STYLE = "Think step by step, then give the final answer."


def test_attempt_budget() -> None:
    assert MAX_ATTEMPTS == 6
    assert MAX_REASKS == 5


def test_golden_reask_text() -> None:
    # A change of this text changes the re-ask prompts (and cache keys): bump PARSER_VERSION with it.
    messages = reask_messages(ORIGINAL, 'I pick {"A0": 50, "A1": 40}', "the probabilities sum to 90, not 100", STYLE)
    assert messages == (
        {"role": "system", "content": "You are a player in a game."},
        {
            "role": "user",
            "content": (
                "Choose a probability distribution over A0 and A1.\n\n"
                "---\n\n"
                "Your previous answer to this request was:\n\n"
                'I pick {"A0": 50, "A1": 40}\n\n'
                "---\n\n"
                "That answer could not be used: the probabilities sum to 90, not 100.\n\n"
                "Please answer the request above again, following its output format exactly.\n\n"
                "Think step by step, then give the final answer."
            ),
        },
    )


def test_order_of_parts_with_a_real_validator_error() -> None:
    bad = '```json\n{"A0": 50.0, "A1": 50}\n```'
    with pytest.raises(AnswerError) as info:
        parse_answer(ActionDistribution(("A0", "A1")), bad)
    (user,) = reask_messages(ORIGINAL[1:], bad, str(info.value), STYLE)
    content = user["content"]
    positions = [
        content.index("Choose a probability distribution"),
        content.index(bad),
        content.index('"A0" is 50.0 (a decimal number)'),
        content.index("Please answer the request above again"),
        content.index(STYLE),
    ]
    assert positions == sorted(positions)
    assert content.endswith(STYLE)


def test_error_message_punctuation_kept() -> None:
    (user,) = reask_messages(ORIGINAL[1:], "x", "no JSON object found.", "")
    assert "That answer could not be used: no JSON object found.\n\n" in user["content"]


def test_input_not_modified_and_fresh_dicts() -> None:
    original = [dict(m) for m in ORIGINAL]
    messages = reask_messages(original, "{}", "err", STYLE)
    assert original == [dict(m) for m in ORIGINAL]
    assert all(a is not b for a, b in zip(messages, original, strict=False))
    assert isinstance(messages, tuple)


def test_style_as_system_message() -> None:
    messages = reask_messages(ORIGINAL, "{}", "err", STYLE, style_position="system")
    assert [m["role"] for m in messages] == ["system", "system", "user"]
    assert messages[1]["content"] == STYLE
    assert STYLE not in messages[2]["content"]
    assert messages[2]["content"].endswith("following its output format exactly.")


def test_empty_style_adds_nothing() -> None:
    (user,) = reask_messages(ORIGINAL[1:], "{}", "err", "")
    assert user["content"].endswith("following its output format exactly.")
    assert len(reask_messages(ORIGINAL, "{}", "err", "", style_position="system")) == 2


def test_empty_previous_response() -> None:
    (user,) = reask_messages(ORIGINAL[1:], "  \n", "no JSON object found", STYLE)
    assert "Your previous answer to this request was:\n\n(an empty answer)\n\n" in user["content"]


def test_truncated_previous_response_keeps_the_tail() -> None:
    previous = "a" * 1000 + '{"A0": 1}'
    (user,) = reask_messages(ORIGINAL[1:], previous, "err", STYLE, max_response_chars=20)
    assert "[... the first 989 characters are left out ...]\n" + previous[-20:] in user["content"]
    (full,) = reask_messages(ORIGINAL[1:], previous, "err", STYLE, max_response_chars=5000)
    assert previous in full["content"]


@pytest.mark.parametrize(
    "messages",
    [
        (),
        ({"role": "system", "content": "s"},),
        ({"role": "user", "content": "a"}, {"role": "user", "content": "b"}),
        ({"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}),
    ],
)
def test_rejects_non_single_turn(messages: tuple[dict[str, str], ...]) -> None:
    with pytest.raises(ValueError, match="single-turn"):
        reask_messages(messages, "x", "err", STYLE)


def test_rejects_unknown_style_position() -> None:
    with pytest.raises(ValueError, match="style_position"):
        reask_messages(ORIGINAL, "x", "err", STYLE, style_position="middle")  # type: ignore[arg-type]
