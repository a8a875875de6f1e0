"""Reading a number written in a free-text answer: one rule for every study (docs/protocol/answers.md#numbers; issue 36 item 1).

A number is read as **one whole token** or not at all; it is never cut to its first digits
and never guessed. The token is

* digits (``1207``), or groups of exactly three digits after a first group of one to three
  digits, joined by commas (``1,207``) or by one space, no-break space (U+00A0), thin space
  (U+2009) or narrow no-break space (U+202F) (``1 207``): the thousands separators of English
  and of the locales that group with a space;
* then an optional decimal part (``.`` and digits: ``1 207.4``);
* then the end of the text, a line break, ``%`` where a percentage is asked, or other
  whitespace or punctuation not followed by a digit.

Anything else is ambiguous (:data:`AMBIGUOUS`): a decimal comma (``1,5``), a group that is not
three digits (``12 5``, ``1,2500``), a second point (``3.2.1``), an exponent (``1e3``), letters
(``5units``), a range (``7-8``) or two numbers side by side (``12 5``, ``1 207 4``). The caller
turns the :class:`NumberFormError` into its re-ask. JSON answers never come here: their numbers
are JSON numbers, where any separator is a syntax error (also re-asked).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "AMBIGUOUS",
    "GROUP_SPACES",
    "MISSING",
    "PERCENT_SIGN",
    "NumberFormError",
    "NumberToken",
    "read_number_token",
]

GROUP_SPACES = " \u00a0\u2009\u202f"
"""The spaces accepted between thousands groups: space, no-break, thin and narrow no-break space."""

MISSING = "missing"
"""Problem: no digit where the number should start (``-3``, ``about 3``)."""
PERCENT_SIGN = "percent_sign"
"""Problem: a ``%`` right after the number where no percentage is asked."""
AMBIGUOUS = "ambiguous"
"""Problem: the token goes on in a way that admits more than one reading (see the module doc)."""

_SPACE = f"[{GROUP_SPACES}]"
_TOKEN = re.compile(
    rf"(?P<whole>[0-9]{{1,3}}(?:,[0-9]{{3}})+|[0-9]{{1,3}}(?:{_SPACE}[0-9]{{3}})+|[0-9]+)(?P<fraction>\.[0-9]+)?"
)
_HORIZONTAL_SPACE = re.compile(r"[^\S\n\r\v\f]*")
"""Whitespace that stays on the line (a space or tab run; a line break ends the answer line)."""


class NumberFormError(ValueError):
    """The text at the reading position is not one whole number.

    Attributes
    ----------
    problem:
        :data:`MISSING`, :data:`PERCENT_SIGN` or :data:`AMBIGUOUS`.
    shown:
        The text to quote in the re-ask: the token read so far (:data:`PERCENT_SIGN`) or the
        whole run-on token (:data:`AMBIGUOUS`; ``""`` for :data:`MISSING`).
    """

    def __init__(self, problem: str, shown: str = "") -> None:
        super().__init__(f"{problem}: {shown!r}")
        self.problem = problem
        self.shown = shown


@dataclass(frozen=True)
class NumberToken:
    """A number read from an answer: ``value``, the ``text`` it was read from (separators kept)
    and ``end``, the offset just after the number (and its ``%`` sign, when there is one)."""

    value: float
    text: str
    end: int


def read_number_token(text: str, start: int = 0, *, percent: bool = False) -> NumberToken:
    """Read the number that starts at ``text[start]`` (after optional whitespace) as one token.

    Parameters
    ----------
    text:
        The answer text.
    start:
        Where to start reading.
    percent:
        Whether a percentage is asked: a ``%`` right after the number is then accepted (and
        included in ``end``); otherwise it is a :data:`PERCENT_SIGN` problem.

    Returns
    -------
    NumberToken
        ``value`` is the number with its separators removed (``1 207.4`` → 1207.4).

    Raises
    ------
    NumberFormError
        :data:`MISSING`, :data:`PERCENT_SIGN` or :data:`AMBIGUOUS` (the rules in the module doc).
    """
    i = start
    while i < len(text) and text[i].isspace():
        i += 1
    match = _TOKEN.match(text, i)
    if match is None:
        raise NumberFormError(MISSING)
    end = match.end()
    token = match.group(0)
    nxt = text[end] if end < len(text) else ""
    after = text[end + 1] if end + 1 < len(text) else ""
    if nxt == "%":
        if not percent:
            raise NumberFormError(PERCENT_SIGN, token)
        if after.isdigit():
            raise NumberFormError(AMBIGUOUS, _run_on(text, i))
        end += 1
    elif nxt and not nxt.isspace() and (nxt.isalnum() or after.isdigit()):
        raise NumberFormError(AMBIGUOUS, _run_on(text, i))
    elif nxt.isspace():
        gap = _HORIZONTAL_SPACE.match(text, end)
        assert gap is not None  # the pattern matches the empty string
        if text[gap.end() : gap.end() + 1].isdigit():  # "12 5": two numbers, or a broken group
            raise NumberFormError(AMBIGUOUS, _run_on(text, i))
    whole = re.sub(f"[,{GROUP_SPACES}]", "", match.group("whole"))
    return NumberToken(float(whole + (match.group("fraction") or "")), token, end)


_RUN_ON = re.compile(r"[0-9](?:[0-9.,%]|[^\S\n\r\v\f]+(?=[0-9]))*")
"""A run of digits, points, commas, ``%`` and in-line spaces between digits: how far a
run-on number goes when it is quoted in a re-ask (``12 5``, ``1 207 4``)."""


def _run_on(text: str, start: int) -> str:
    """The run-on token from ``start`` as a re-ask quotes it: up to the next whitespace, or
    the run of :data:`_RUN_ON` when that is longer (``12 5``, ``1 2070`` quoted whole)."""
    word = text[start:].split()[0]
    match = _RUN_ON.match(text, start)
    spaced = match.group(0) if match else ""
    return spaced if len(spaced) > len(word) else word
