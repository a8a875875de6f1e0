"""Donation amounts as a donor sees, writes and gives them (docs/protocol/evolution.md#donation-game, #vh-prompts, #horibe-prompts).

Three rules, each declared once here:

* **Shown.** Units appear in every prompt with at most two decimals and no trailing zeros
  (:func:`shown_units`); the holdings a donor is shown are also the largest amount it may
  state (:func:`stated_limit`), so the prompt and the parser never disagree (issue 21 item 2).
* **Read.** An answer's number is read as one whole token (:func:`read_number`, the rule of
  :mod:`coopeval.decisions.numbers`): digits, or groups of exactly three digits after commas
  or single spaces (``1,250``, ``1 250``), an optional decimal part, then the end, a line
  break, ``%`` where a percentage is asked, or whitespace or punctuation not followed by a
  digit. Anything else (``1,5``, ``12 5``, ``3.2.1``, ``1e3``, ``5units``) is ambiguous and
  re-asked; no number is ever guessed or substituted.
* **Given.** A stated amount at or above the donor's shown holdings gives everything it holds
  (:func:`units_given`, :func:`units_for_percent`): the shown holdings are rounded, so
  ``182.97`` shown for 182.96875 units means "all of it"; below that the stated amount is given
  exactly. Amounts above the shown limit never get here: the parser re-asks them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from coopeval.core.prompts import TemplateFolder
from coopeval.decisions.errors import AnswerError
from coopeval.decisions.numbers import (
    MISSING,
    PERCENT_SIGN,
    NumberFormError,
    NumberToken,
    read_number_token,
)
from coopeval.games.donation import ContinuousDonationGame

ERRORS = TemplateFolder(Path(__file__).resolve().parent / "prompts" / "errors")
"""The error messages of the evolution formats (sent back to the model in a re-ask; part of
every evolution cell id through :func:`~coopeval.decisions.texts.answer_texts_hash`)."""


def shown_units(value: float) -> str:
    """Units as every prompt shows them: two decimals at most, no trailing zeros (``5``,
    ``2.5``, ``182.97`` for 182.96875; round half to even on the binary value)."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def stated_limit(holdings: float) -> float:
    """The largest amount a donor holding ``holdings`` units may state: its holdings as shown."""
    return float(shown_units(holdings))


def units_given(stated: float, holdings: float) -> float:
    """Units actually given for a validated stated amount in units (``0 <= stated <=
    stated_limit(holdings)``).

    A positive statement at or above ``min(shown holdings, holdings)`` gives exactly
    ``holdings`` (the all-in donation); anything below, and 0, is given as stated.

    Raises
    ------
    ValueError
        A negative amount or one above the shown holdings (the parser re-asks those).
    """
    return _given(stated, holdings, holdings, float)


def percent_limit(holdings: float, base: float) -> float:
    """The largest percentage of ``base`` a donor holding ``holdings`` may state, as shown:
    100 when the base is the current holdings (or less than them), else the share of the base
    the holdings make up (``percent_base: endowment`` after losses), two decimals."""
    return stated_limit(_full_percent(holdings, base))


def units_for_percent(percent: float, holdings: float, game: ContinuousDonationGame) -> float:
    """Units given for a validated percentage (``0 <= percent <= percent_limit``) by a donor
    holding ``holdings`` in the stage game ``game``: the game's
    :meth:`~coopeval.games.donation.ContinuousDonationGame.units_for_percent` (``percent / 100 ·
    base``), or exactly ``holdings`` at or above the shown limit (all-in).

    Raises
    ------
    ValueError
        A percentage below 0 or above :func:`percent_limit`.
    """
    full = _full_percent(holdings, game.percent_base_units(holdings))
    return _given(percent, holdings, full, lambda p: game.units_for_percent(p, holdings))


def _full_percent(holdings: float, base: float) -> float:
    return 100.0 if holdings >= base else 100.0 * holdings / base


def _given(stated: float, holdings: float, full: float, to_units: Callable[[float], float]) -> float:
    """``stated`` (in a unit ``to_units`` converts; ``full`` of them are the whole holdings)."""
    limit = stated_limit(full)
    if stated < 0 or stated > limit:
        raise ValueError(f"stated amount {stated} is outside 0..{shown_units(full)} (the parser should have re-asked)")
    if stated > 0 and stated >= min(limit, full):
        return holdings
    return min(to_units(stated), holdings)  # min: a float guard only (stated < full means below holdings)


def read_number(text: str, start: int = 0, *, percent: bool = False) -> NumberToken:
    """Read the number that starts at ``text[start]`` (after optional whitespace) as one token,
    by the rule every number-reading answer shares (:func:`coopeval.decisions.numbers.read_number_token`).

    Parameters
    ----------
    text:
        The answer text.
    start:
        Where to start reading.
    percent:
        Whether a percentage is asked: a ``%`` right after the number is then accepted (and
        included in ``end``); otherwise it makes the answer invalid.

    Raises
    ------
    AnswerError
        ``code="invalid"``: no digit where the number should start (e.g. ``-3``, ``about 3``)
        or a ``%`` under a question in units; ``code="ambiguous"``: the token goes on with a
        letter, digit-carrying punctuation or a second number (``1,5``, ``12,5``, ``3.2.1``,
        ``1e3``, ``1,2500``, ``12 5``).
    """
    try:
        return read_number_token(text, start, percent=percent)
    except NumberFormError as exc:
        if exc.problem == MISSING:
            raise AnswerError(ERRORS.render("number_missing"), code="invalid") from None
        if exc.problem == PERCENT_SIGN:
            raise AnswerError(ERRORS.render("percent_in_units", token=exc.shown), code="invalid") from None
        raise AnswerError(ERRORS.render("ambiguous", shown=exc.shown), code="ambiguous") from None
