"""Re-ask prompts after a parse or validation failure (docs/protocol/answers.md#re-asks).

A re-ask is a *fresh single-turn* prompt, never a conversation: the original prompt, the
previous invalid response, the validator's error message, a request to answer again, and then
the CoT/IO style instruction, exactly where the original prompt would carry it. Up to
``MAX_ATTEMPTS`` attempts are made per decision (the first ask plus 5 re-asks).

The wording is in the templates ``decisions/prompts/reask*.txt`` (:mod:`coopeval.decisions.texts`):
it is part of every cell id, and of the re-ask prompts' cache keys.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from coopeval.decisions.texts import ENGINE_TEXTS

__all__ = ["MAX_ATTEMPTS", "MAX_REASKS", "reask_messages"]

MAX_ATTEMPTS = 6
MAX_REASKS = MAX_ATTEMPTS - 1

StylePosition = Literal["user", "system"]


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text.endswith((".", "!", "?")) else text + "."


def reask_messages(
    original_messages: Sequence[Mapping[str, str]],
    previous_response: str,
    error_message: str,
    style_instruction: str,
    *,
    style_position: StylePosition = "user",
    max_response_chars: int | None = None,
) -> tuple[dict[str, str], ...]:
    """Build the messages of a re-ask (docs/protocol/answers.md#re-asks).

    Parameters
    ----------
    original_messages:
        The decision's messages *without* the style instruction: optional ``system`` messages
        followed by exactly one ``user`` message (every call is single-turn, docs/protocol/answers.md#prompt-content).
    previous_response:
        The raw text of the invalid answer (may be empty).
    error_message:
        ``str(AnswerError)`` from the validator, e.g. "the probabilities sum to 90, not 100".
    style_instruction:
        The CoT or IO instruction; appended to the end of the user message
        (``style_position="user"``, the default, as in the released logs) or sent as a system
        message just before it (``"system"``, ``prompt.style_instruction_position``, docs/protocol/reference-data.md#compatibility-flags).
        An empty string adds nothing.
    max_response_chars:
        If set, only the last that many characters of the previous response are quoted (the
        JSON answer sits at its end), with a note saying how many were left out.

    Returns
    -------
    A new tuple of ``{"role", "content"}`` dicts; the input is not modified.

    Raises
    ------
    ValueError
        ``original_messages`` does not hold exactly one user message, or holds an assistant turn.
    """
    roles = [m.get("role") for m in original_messages]
    if roles.count("user") != 1 or any(r not in ("system", "user") for r in roles):
        raise ValueError(f"a re-ask needs single-turn messages (system*, one user), got roles {roles}")
    if style_position not in ("user", "system"):
        raise ValueError(f"style_position must be 'user' or 'system', not {style_position!r}")

    quoted = previous_response
    if max_response_chars is not None and len(quoted) > max_response_chars:
        omitted = len(quoted) - max_response_chars
        tail = quoted[-max_response_chars:] if max_response_chars > 0 else ""
        quoted = ENGINE_TEXTS.render("reask_cut", omitted=omitted, tail=tail)
    if not quoted.strip():
        quoted = ENGINE_TEXTS.render("reask_empty_answer")

    out: list[dict[str, str]] = []
    for message in original_messages:
        if message["role"] == "system":
            out.append({"role": "system", "content": message["content"]})
            continue
        if style_instruction.strip() and style_position == "system":
            out.append({"role": "system", "content": style_instruction})
        content = ENGINE_TEXTS.render(
            "reask",
            original=message["content"].rstrip(),
            previous=quoted.strip(),
            rejection=_sentence(ENGINE_TEXTS.render("reask_rejection", error=error_message)),
        )
        if style_instruction.strip() and style_position == "user":
            content += "\n\n" + style_instruction.strip()
        out.append({"role": "user", "content": content})
    return tuple(out)
