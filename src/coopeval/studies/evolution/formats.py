"""Answer formats of the evolution study, one class per format (docs/protocol/evolution.md#vh-prompts, #horibe-prompts).

Each format owns

* ``parse(text)``: validation of a raw answer, returning a normalised dict or raising
  :class:`~coopeval.decisions.errors.AnswerError` with a message fit for a re-ask;
* ``complete_grammar()``: a llama.cpp GBNF grammar admitting only parseable answers, for the
  embedded model; ``max_output_chars()`` the longest answer it admits;
* ``render(...)`` / ``bot_text(state)``: the text a scripted bot answers.

Both formats subclass the engine's :class:`~coopeval.decisions.formats.TextAnswerFormat`: the
shared :class:`~coopeval.agents.maker.DecisionMaker` calls their ``parse`` like any format's, and
the embedded model decodes under their ``complete_grammar`` with a ``max_tokens`` bounded by
``max_output_chars`` (:mod:`coopeval.agents.grammar`). Formats are frozen dataclasses: hashable
and comparable, so grammars are cached per format.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.extract import excerpt
from coopeval.decisions.formats import TextAnswerFormat
from coopeval.games.donation import AMOUNT_UNITS
from coopeval.studies.evolution.amounts import ERRORS, read_number, shown_units

VH_MARKER = "My strategy will be"
HORIBE_MARKER = "Strategy:"
ANSWER_MARKER = "Answer:"
PUNISHMENT_VARIANTS = ("none", "costly_punishment", "partner_choice")
UNITS = AMOUNT_UNITS

_TEXT_CHAR = r"[\x20-\x7E]"  # printable ASCII, no newline
_JUSTIFICATION_CHAR = r"[\x20-\x39\x3B-\x7E]"  # printable ASCII minus ':' (never forms "Answer:")
_PUNISH_ANSWER = re.compile(r"(donate|punish)\s*[,:]?\s*(?=[0-9])", re.IGNORECASE)
_REFUSAL = re.compile(r"[^\w]*(?:I\s+)?refuse(?:\s+to\s+play)?(?![\w-])", re.IGNORECASE)
"""The leading token(s) of a refusal: ``refuse`` or ``refuse to play`` (the prompt's words),
optionally after ``I`` and opening punctuation (``**Refuse**``); never ``refused``, ``refuse-``."""
_REFUSAL_WORD = re.compile(r"\brefus", re.IGNORECASE)
_PLAYER_NAME = re.compile(r"\bplayer\s+[0-9]+", re.IGNORECASE)
"""A player's name (``evo_player_name.txt``: ``Player <number>``), whose digits are no amount."""


def answer_line(answer: str) -> str:
    """The answer line: the text after ``Answer:`` up to the first line break (after leading
    whitespace, so ``Answer:\n5`` has the line ``5``)."""
    stripped = answer.lstrip()
    return stripped.splitlines()[0] if stripped else ""


def _is_refusal(answer: str) -> bool:
    """Whether a partner-choice answer refuses (docs/protocol/evolution.md#punishment-variants; issue 36 item 2).

    The answer line's leading token(s) decide: ``refuse`` / ``refuse to play`` alone, with any
    punctuation, is a refusal; a mention further on (``I will not refuse``, ``5, never
    refuse``) is not. A line that names both a refusal and an amount (a digit outside a
    player's name) is ambiguous.

    Raises
    ------
    AnswerError
        ``code="ambiguous"``: the line names a refusal and an amount.
    """
    line = answer_line(answer)
    if _REFUSAL_WORD.search(line) and any(c.isdigit() for c in _PLAYER_NAME.sub("", line)):
        raise AnswerError(ERRORS.render("refuse_and_amount", line=excerpt(line)), code="ambiguous")
    return _REFUSAL.match(line) is not None


def word_count(text: str) -> int:
    """Number of whitespace-separated words (the docs/protocol/evolution.md#horibe-changes word limit's unit)."""
    return len(text.split())


def truncate_words(text: str, limit: int) -> str:
    """The first ``limit`` words of ``text`` joined by single spaces."""
    return " ".join(text.split()[:limit])


@dataclass(frozen=True)
class StrategyFormat(TextAnswerFormat):
    """A strategy text (docs/protocol/evolution.md#vh-prompts V&H, docs/protocol/evolution.md#horibe-prompts Horibe).

    ``protocol`` ``"vh"``: split at the first ``My strategy will be``; the text before is the
    justification, the phrase and the rest the strategy; without the phrase the whole output is
    the strategy. ``"horibe"``: split at the first ``Strategy:``; the rest is the strategy.
    ``word_limit`` (Horibe 350) is *not* enforced here: the protocol re-asks once and then
    truncates (docs/protocol/evolution.md#horibe-changes), so ``parse`` only reports ``words``. ``max_chars`` bounds the embedded
    model's strategy (grammar only); ``max_reasoning_chars`` its text before the V&H phrase.

    ``parse`` returns ``{"strategy": str, "justification": str, "words": int}``; raises
    AnswerError for an empty strategy.
    """

    protocol: str = "vh"
    word_limit: int | None = None
    max_chars: int = 400
    max_reasoning_chars: int = 160

    kind: ClassVar[str] = "strategy"

    @property
    def marker(self) -> str:
        return VH_MARKER if self.protocol == "vh" else HORIBE_MARKER

    def parse(self, text: str, *, lenient: bool = False) -> dict[str, Any]:
        before, found, after = text.partition(self.marker)
        if not found:
            justification, strategy = "", text.strip()
        elif self.protocol == "vh":
            justification, strategy = before.strip(), (self.marker + after).strip()
        else:
            justification, strategy = before.strip(), after.strip()
        body = strategy[len(self.marker):] if strategy.startswith(VH_MARKER) and self.protocol == "vh" else strategy
        if not body.strip(" .\n"):
            raise AnswerError(ERRORS.render("strategy_empty", marker=self.marker), code="invalid")
        return {"strategy": strategy, "justification": justification, "words": word_count(strategy)}

    def complete_grammar(self) -> str:
        return _strategy_grammar(self.protocol, self.max_chars, self.max_reasoning_chars)

    def max_output_chars(self) -> int:
        reasoning = self.max_reasoning_chars + 1 if self.protocol == "vh" and self.max_reasoning_chars > 0 else 0
        return reasoning + len(self.marker) + 1 + self.max_chars

    def render(self, strategy: str, justification: str = "") -> str:
        """A well-formed answer around ``strategy`` (the V&H phrase is added when missing)."""
        if self.protocol == "vh":
            body = strategy if strategy.startswith(VH_MARKER) else f"{VH_MARKER} {strategy}"
        else:
            body = f"{HORIBE_MARKER} {strategy}"
        return f"{justification}\n{body}" if justification else body

    def bot_text(self, state: Mapping[str, Any]) -> str:
        """A bot's strategy: its ``state["bot_strategy"]`` description."""
        return self.render(str(state.get("bot_strategy", "to follow my scripted rule.")))


@functools.lru_cache(maxsize=16)
def _strategy_grammar(protocol: str, max_chars: int, max_reasoning_chars: int) -> str:
    if protocol == "vh":
        reasoning = f'({_TEXT_CHAR}{{1,{max_reasoning_chars}}} "\\n")? ' if max_reasoning_chars > 0 else ""
        return f'root ::= {reasoning}"{VH_MARKER} " {_TEXT_CHAR}{{1,{max_chars}}}\n'
    return f'root ::= "{HORIBE_MARKER} " {_TEXT_CHAR}{{1,{max_chars}}}\n'


@dataclass(frozen=True)
class DonationFormat(TextAnswerFormat):
    """A donation answer ``Justification: <text> Answer: <answer>`` (docs/protocol/evolution.md#vh-prompts, #punishment-variants, #horibe-prompts).

    ``unit`` ``"units"`` (V&H: a real number of units in [0, ``max_value``]) or ``"percent"``
    (Horibe: a number in [0, ``max_value``], 100 unless the endowment is the base).
    ``max_value`` is the limit the prompt shows (:func:`~coopeval.studies.evolution.amounts.stated_limit`
    of the donor's holdings), so every amount the prompt allows is accepted. Numbers are read
    as one whole token by :func:`~coopeval.studies.evolution.amounts.read_number` (``1,250.5``
    is 1250.5; ``1,5``, ``3.2.1``, ``1e3`` are ambiguous and re-asked; ``%`` only in percent).
    ``variant``:

    * ``none``: the answer must begin with a number (after optional whitespace);
    * ``costly_punishment``: the first ``donate``/``punish`` followed by a number, e.g.
      ``Donate, 3`` or ``Punish, 1.5`` (the reference's decimal comma is not read: ``1,5`` is
      ambiguous with a thousands separator and is re-asked);
    * ``partner_choice``: an answer line beginning with ``refuse`` (or ``refuse to play``,
      ``I refuse``) is a refusal; otherwise the answer must begin with a number. A line that
      names both a refusal and an amount (``Refuse, 5``; ``I will not refuse; 5``) is
      ambiguous and re-asked; a negated or later mention is never a refusal.

    ``parse`` returns ``{"action": "donate" | "punish" | "refuse", "value": float,
    "justification": str}``; ``value`` is in units or percent (0 for refuse). Raises AnswerError with ``code`` ``invalid`` (no ``Answer:``, no number
    where one is needed), ``ambiguous`` (a number that is not one whole token, or a refusal
    together with an amount) or ``range``
    (above ``max_value``): never clipped, never substituted.
    """

    unit: str = "units"
    max_value: float | None = None
    variant: str = "none"
    max_justification_chars: int = 160

    kind: ClassVar[str] = "donation"

    def __post_init__(self) -> None:
        if self.unit not in UNITS:
            raise ValueError(f"unit must be one of {UNITS}, not {self.unit!r}")
        if self.variant not in PUNISHMENT_VARIANTS:
            raise ValueError(f"variant must be one of {PUNISHMENT_VARIANTS}, not {self.variant!r}")
        if self.max_value is None:  # percent: 100; units: the endowment of docs/protocol/evolution.md#donation-game
            object.__setattr__(self, "max_value", 100.0 if self.unit == "percent" else 10.0)

    @property
    def limit(self) -> float:
        """The largest valid value (units or percent)."""
        assert self.max_value is not None
        return float(self.max_value)

    def _what(self) -> str:
        return ERRORS.render("what_percent" if self.unit == "percent" else "what_units")

    def parse(self, text: str, *, lenient: bool = False) -> dict[str, Any]:
        before, found, answer = text.partition(ANSWER_MARKER)
        if not found:
            raise AnswerError(ERRORS.render("no_answer"), code="invalid")
        justification = before.strip()
        if justification.lower().startswith("justification:"):
            justification = justification[len("justification:"):].strip()
        percent = self.unit == "percent"
        action = "donate"
        if self.variant == "partner_choice" and _is_refusal(answer):
            return {"action": "refuse", "value": 0.0, "justification": justification}
        if self.variant == "costly_punishment":
            match = _PUNISH_ANSWER.search(answer)
            if match is None:
                raise AnswerError(ERRORS.render("punish_answer"), code="invalid")
            action = match.group(1).lower()
            number = read_number(answer, match.end(), percent=percent)
        else:
            try:
                number = read_number(answer, percent=percent)
            except AnswerError as exc:
                if exc.code == "invalid" and self.variant == "partner_choice":
                    raise AnswerError(ERRORS.render("or_refuse", message=exc.message), code=exc.code) from None
                raise
        value = number.value
        if not 0.0 <= value <= self.limit:
            limit = shown_units(self.limit) if percent else ERRORS.render("limit_units", limit=shown_units(self.limit))
            raise AnswerError(ERRORS.render("range", what=self._what(), number=number.text, limit=limit), code="range")
        return {"action": action, "value": value, "justification": justification}

    def complete_grammar(self) -> str:
        """GBNF: ``Justification: `` up to ``max_justification_chars`` characters without ``:``,
        a newline, ``Answer: `` and the answer. Numbers are exactly those from 0 to the shown
        limit with at most two decimals (:func:`decimal_upto`), so the embedded model can never
        state an amount the parser refuses (a donor holding 0 units can only answer 0)."""
        return _donation_grammar(round(self.limit * 100), self.variant, self.max_justification_chars)

    def max_output_chars(self) -> int:
        # the integer part (percent: at most 2 digits before a decimal part, "100" has none), "." and two decimals
        number = 5 if self.unit == "percent" else len(str(int(self.limit))) + 3
        answer = {"costly_punishment": len("Punish, ") + number, "partner_choice": max(len("Refuse to play"), number)}
        return len("Justification: ") + self.max_justification_chars + len("\nAnswer: ") + answer.get(self.variant, number)

    def render(self, action: str, value: float, justification: str = "I follow my strategy.") -> str:
        """A well-formed answer (``value`` in this format's unit)."""
        number = format(Decimal(repr(float(value))), "f")  # shortest exact round trip, no exponent
        number = number.rstrip("0").rstrip(".") if "." in number else number
        if action == "refuse":
            answer = "Refuse to play"
        elif self.variant == "costly_punishment":
            answer = f"{'Punish' if action == 'punish' else 'Donate'}, {number}"
        else:
            answer = number
        return f"Justification: {justification}\nAnswer: {answer}"

    def bot_text(self, state: Mapping[str, Any]) -> str:
        """A bot's answer: donate ``state["bot_percent"]`` % of the donor's current resources,
        converted to this format's unit (docs/protocol/evolution.md#donation-game amounts), and, like a model, never more than
        the limit the prompt shows (which gives everything, :mod:`~coopeval.studies.evolution.amounts`)."""
        percent = float(state.get("bot_percent", 0.0))
        value = percent if self.unit == "percent" else percent / 100.0 * float(state["donor_resources"])
        return self.render("donate", min(value, self.limit))


def int_upto(bound: int) -> str:
    """A GBNF expression admitting exactly the decimal integers 0..``bound`` without leading
    zeros (``bound`` ≥ 0), e.g. ``int_upto(25)`` = ``"0" | [1-9] | [1] [0-9] | "2" [0-5]``."""
    if bound < 0:
        raise ValueError(f"bound must be >= 0, got {bound}")
    text = str(bound)
    alternatives = ['"0"']
    for length in range(1, len(text)):  # every number with fewer digits than bound
        alternatives.append("[1-9]" + " [0-9]" * (length - 1))
    if bound >= 1:
        for k, digit in enumerate(text):  # same length: prefix of bound, a smaller digit, anything
            low = "1" if k == 0 else "0"
            top = int(digit) - 1
            if top < int(low):
                continue
            prefix = f'"{text[:k]}" ' if k else ""
            alternatives.append(f"{prefix}[{low}-{top}]" + " [0-9]" * (len(text) - k - 1))
        alternatives.append(f'"{text}"')
    return " | ".join(dict.fromkeys(alternatives))


def decimal_upto(hundredths: int) -> str:
    """A GBNF alternation of flat sequences admitting exactly the numbers 0 … ``hundredths`` /
    100 written without leading zeros and with at most two decimals (no decimals on a whole
    limit itself), e.g. ``decimal_upto(50)`` (0.5): ``"0"``, ``"0" "." [0-5]``, ``"0" "." [0-4]
    [0-9]``, ``"0" "." "5" [0-0]``.

    Raises
    ------
    ValueError
        A negative limit.
    """
    if hundredths < 0:
        raise ValueError(f"the limit must be >= 0, got {hundredths / 100}")
    whole, cents = divmod(hundredths, 100)
    alternatives = []
    if whole >= 1:  # below the limit's integer part: any two decimals
        for below in int_upto(whole - 1).split(" | "):
            alternatives += [below, f'{below} "." [0-9]', f'{below} "." [0-9] [0-9]']
    alternatives.append(f'"{whole}"')
    if cents:
        tens, ones = divmod(cents, 10)
        alternatives.append(f'"{whole}" "." [0-{tens}]')
        if tens >= 1:
            alternatives.append(f'"{whole}" "." [0-{tens - 1}] [0-9]')
        alternatives.append(f'"{whole}" "." "{tens}" [0-{ones}]')
    return " | ".join(alternatives)


@functools.lru_cache(maxsize=256)
def _donation_grammar(hundredths: int, variant: str, max_justification_chars: int) -> str:
    number = f"({decimal_upto(hundredths)})"
    if variant == "costly_punishment":
        answer = '("Donate" | "Punish") ", " num'
    elif variant == "partner_choice":
        answer = '"Refuse to play" | num'
    else:
        answer = "num"
    return (
        f'root ::= "Justification: " {_JUSTIFICATION_CHAR}{{0,{max_justification_chars}}} "\\nAnswer: " answer\n'
        f"answer ::= {answer}\n"
        f"num ::= {number}\n"
    )
