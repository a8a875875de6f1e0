"""Answer formats of the gossip study, one class per output shape (docs/protocol/gossip.md#prompts, #parsing-and-failures, #testbeds, #ablations).

Each format is an :class:`~coopeval.decisions.formats.AnswerFormat` (a frozen dataclass), so the
engine needs no hook for it: :meth:`parse` extracts the last JSON object and validates it
(:meth:`check`, raising :class:`~coopeval.decisions.errors.AnswerError` with a message fit to show
the model in a re-ask); :meth:`answer_rules` / :meth:`max_value_chars` give the GBNF rules of the
object that :func:`coopeval.agents.grammar.gbnf_for` wraps with the CoT/IO head for the embedded
model. Study helpers: :meth:`instruction` (the verbatim output shape shown in prompts) and
:meth:`bot_answer` (a valid answer built from semantic values, used by the gossip bots).

Shapes (verbatim keys and tokens, docs/protocol/gossip.md#prompts, #testbeds):

* donor     ``{"justification": "...", "donor_action": "cooperate" | "defect"}``
* PD        ``{"justification": "...", "player_action": "C" | "D"}``
* market    ``{"justification": "...", "seller_action": "H" | "L"}``,
            ``{"justification": "...", "buyer_action": "c" | "s" | "none"}``
* gossip    ``{"justification": "...", "tone": <tone>, "gossip": "<message>"}``
* signal    ``{"justification": "...", "signal": 1 | 0}``
* trust     ``{"justification": "...", "investor_action": <number>}`` (and ``responder_action``)

Normalisation: enumerated tokens are matched after stripping whitespace and case-folding and
returned in their canonical spelling. Gossip messages over ``max_words`` words are flagged
(``over_word_limit``), not rejected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coopeval.core.prompts import TemplateFolder
from coopeval.decisions.errors import AnswerError
from coopeval.decisions.formats import AnswerFormat
from coopeval.decisions.schema import decimal_range
from coopeval.decisions.texts import ENGINE_TEXTS
from coopeval.studies.gossip.tones import TONES

# printable ASCII minus '"', '\', '{', '}': safe inside a JSON string without escapes
_TEXT_CHAR = r"[\x20\x21\x23-\x5B\x5D-\x7A\x7C\x7E]"

ERRORS = TemplateFolder(Path(__file__).resolve().parent / "prompts" / "errors")
"""The gossip formats' error messages (re-asks; in every gossip cell id: ``answer_texts_hash``)."""

JUSTIFICATION_CHARS = 160
"""Grammar cap on the justification string (characters)."""

MESSAGE_CHARS = 240
"""Grammar cap on a gossip message (characters; about 40 words, below the 150-word limit; bounds the embedded model's cost)."""

WORD_LIMIT = 150
"""Gossip messages longer than this many words are flagged (docs/protocol/gossip.md#parsing-and-failures)."""


def _lit(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _norm(token: str) -> str:
    return " ".join(token.split()).casefold()


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else '"' + value[:40] + '"'
    return text


def _object_schema(properties: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """An object with exactly ``properties``, all required, in order."""
    return {"type": "object", "properties": properties, "required": list(properties), "additionalProperties": False}


def word_count(message: str) -> int:
    """Whitespace-separated words of ``message``."""
    return len(message.split())


class _FormatBase(AnswerFormat):
    """Shared machinery: key checks and the justification field (every gossip answer is a JSON
    object whose first member is ``"justification"``).

    Subclasses implement :meth:`_check` (the rules after the key checks), :meth:`_value_rules`
    (the grammar after the justification) and :meth:`_value_chars`.
    """

    kind: str
    keys: tuple[str, ...]

    def check(self, obj: Mapping[str, Any], *, lenient: bool = False) -> dict[str, Any]:
        """Exact key set, a string justification, then the format's own rules."""
        return self._check(obj, self._check_keys(obj))

    def _check(self, obj: Mapping[str, Any], justification: str) -> dict[str, Any]:
        raise NotImplementedError

    def _check_keys(self, obj: Mapping[str, Any]) -> str:
        missing = [k for k in self.keys if k not in obj]
        extra = [k for k in obj if k not in self.keys]
        if missing or extra:
            parts = []
            if missing:
                parts.append(ERRORS.render("missing", keys=", ".join(f'"{k}"' for k in missing)))
            if extra:
                parts.append(ERRORS.render("unexpected", keys=", ".join(f'"{k}"' for k in extra)))
            wanted = ", ".join(f'"{k}"' for k in self.keys)
            raise AnswerError(ENGINE_TEXTS.render("error_exact_keys", expected=wanted, problems="; ".join(parts)), code="keys")
        justification = obj["justification"]
        if not isinstance(justification, str):
            raise AnswerError(ERRORS.render("justification_type"), code="type")
        return justification

    # -- grammar (wrapped with the CoT/IO head by coopeval.agents.grammar.gbnf_for) ----------
    def _value_rules(self) -> tuple[list[str], list[str]]:
        """(rules, members): grammar rules and the object's members after the justification."""
        raise NotImplementedError

    def answer_rules(self) -> list[str]:
        """Rule ``answer``: ``{"justification": "<text>", …}`` in the one whitespace form shown
        in the prompts; the justification is at most :data:`JUSTIFICATION_CHARS` characters."""
        rules, members = self._value_rules()
        body = " ".join([_lit('{"justification": "'), "gjtext", *members, _lit("}")])
        return [f"answer ::= {body}", f"gjtext ::= {_TEXT_CHAR}{{1,{JUSTIFICATION_CHARS}}}", *rules]

    def _value_chars(self) -> int:
        """Upper bound on the characters of the values after the justification (quotes included)."""
        raise NotImplementedError

    # -- JSON Schema (structured_output: json_schema) ------------------------------------------
    def _value_schemas(self) -> dict[str, dict[str, Any]]:
        """JSON Schema of each value after the justification, by key."""
        raise NotImplementedError

    def json_schema(self) -> dict[str, Any]:
        """JSON Schema of the answer object: exactly :attr:`keys`, all required, no others;
        ``justification`` a string, the other values as the grammar admits them (enums, 0/1,
        a number range), without the grammar's length bounds (the token limit bounds them)."""
        return _object_schema({"justification": {"type": "string"}, **self._value_schemas()})

    def max_value_chars(self) -> int:
        return 2 + JUSTIFICATION_CHARS + self._value_chars()

    # -- scripted bots -----------------------------------------------------------------------
    def bot_default(self, state: Mapping[str, Any], *, cooperative: bool) -> dict[str, Any] | None:
        """No default: the gossip bots (:mod:`.bots`) answer every format from their strategy."""
        return None


@dataclass(frozen=True)
class ChoiceFormat(_FormatBase):
    """One enumerated action after a justification: donor, PD, seller and buyer actions.

    ``validate`` returns ``{"justification": str, <key>: canonical option}``.
    """

    kind: str
    key: str
    options: tuple[str, ...]

    @property
    def keys(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("justification", self.key)

    def _check(self, obj: Mapping[str, Any], justification: str) -> dict[str, Any]:
        value = obj[self.key]
        lookup = {_norm(o): o for o in self.options}
        if not isinstance(value, str) or _norm(value) not in lookup:
            allowed = ERRORS.render("choice_separator").join(f'"{o}"' for o in self.options)
            raise AnswerError(ERRORS.render("choice", key=self.key, allowed=allowed, value=_show(value)), code="label")
        return {"justification": justification, self.key: lookup[_norm(value)]}

    def _value_rules(self) -> tuple[list[str], list[str]]:
        options = " | ".join(_lit(f'"{o}"') for o in self.options)
        return [f"option ::= {options}"], [_lit(f'", "{self.key}": '), "option"]

    def _value_chars(self) -> int:
        return 2 + max(len(o) for o in self.options)

    def _value_schemas(self) -> dict[str, dict[str, Any]]:
        return {self.key: {"type": "string", "enum": list(self.options)}}

    def instruction(self) -> str:
        """The verbatim output shape."""
        options = " | ".join(f'"{o}"' for o in self.options)
        return f'{{"justification": "<short explanation>", "{self.key}": {options}}}'

    def bot_answer(self, choice: str, justification: str = "scripted") -> dict[str, Any]:
        """A valid answer choosing ``choice``."""
        if choice not in self.options:
            raise ValueError(f"{choice!r} is not one of {self.options}")
        return {"justification": justification, self.key: choice}


@dataclass(frozen=True)
class GossipFormat(_FormatBase):
    """A witness's public assessment: a justification, one tone and a message (docs/protocol/gossip.md#prompts).

    ``tones`` may be restricted (an LLM-written attacker message with a forced tone, docs/protocol/gossip.md#collusive-attackers).
    ``validate`` returns ``{"justification", "tone" (canonical), "gossip", "word_count",
    "over_word_limit"}``.
    """

    kind: str = "gossip"
    tones: tuple[str, ...] = TONES
    max_words: int = WORD_LIMIT

    @property
    def keys(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("justification", "tone", "gossip")

    def _check(self, obj: Mapping[str, Any], justification: str) -> dict[str, Any]:
        tone = obj["tone"]
        lookup = {_norm(t): t for t in self.tones}
        if not isinstance(tone, str) or _norm(tone) not in lookup:
            allowed = ", ".join(f'"{t}"' for t in self.tones)
            raise AnswerError(ERRORS.render("tone", allowed=allowed, value=_show(tone)), code="label")
        message = obj["gossip"]
        if not isinstance(message, str):
            raise AnswerError(ERRORS.render("gossip_type"), code="type")
        words = word_count(message)
        return {
            "justification": justification,
            "tone": lookup[_norm(tone)],
            "gossip": message,
            "word_count": words,
            "over_word_limit": words > self.max_words,
        }

    def _value_rules(self) -> tuple[list[str], list[str]]:
        tones = " | ".join(_lit(f'"{t}"') for t in self.tones)
        return (
            [f"tone ::= {tones}", f"mtext ::= {_TEXT_CHAR}{{1,{MESSAGE_CHARS}}}"],
            [_lit('", "tone": '), "tone", _lit(', "gossip": "'), "mtext", _lit('"')],
        )

    def _value_chars(self) -> int:
        return 2 + max(len(t) for t in self.tones) + 2 + MESSAGE_CHARS

    def _value_schemas(self) -> dict[str, dict[str, Any]]:
        return {"tone": {"type": "string", "enum": list(self.tones)}, "gossip": {"type": "string"}}

    def instruction(self) -> str:
        """The verbatim output shape."""
        tones = " | ".join(f'"{t}"' for t in self.tones)
        return (
            f'{{"justification": "<short explanation>", "tone": {tones}, '
            f'"gossip": "<public message, under {self.max_words} words>"}}'
        )

    def bot_answer(self, tone: str, message: str, justification: str = "scripted") -> dict[str, Any]:
        """A valid answer with ``tone`` and ``message``."""
        if tone not in self.tones:
            raise ValueError(f"{tone!r} is not one of {self.tones}")
        return {"justification": justification, "tone": tone, "gossip": message}


@dataclass(frozen=True)
class SignalFormat(_FormatBase):
    """A binary reputation signal, 1 or 0 (docs/protocol/gossip.md#ablations). JSON integers 0/1 or the strings "0"/"1"
    are accepted; ``validate`` returns ``{"justification", "signal": 0 | 1}``."""

    kind: str = "signal"

    @property
    def keys(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("justification", "signal")

    def _check(self, obj: Mapping[str, Any], justification: str) -> dict[str, Any]:
        value = obj["signal"]
        if isinstance(value, str) and value.strip() in ("0", "1"):
            value = int(value.strip())
        if isinstance(value, bool) or value not in (0, 1) or isinstance(value, float):
            raise AnswerError(ERRORS.render("signal", value=_show(value)), code="label")
        return {"justification": justification, "signal": int(value)}

    def _value_rules(self) -> tuple[list[str], list[str]]:
        return [], [_lit('", "signal": '), '("1" | "0")']

    def _value_chars(self) -> int:
        return 1

    def _value_schemas(self) -> dict[str, dict[str, Any]]:
        return {"signal": {"type": "integer", "enum": [0, 1]}}

    def instruction(self) -> str:
        """The verbatim output shape."""
        return '{"justification": "<short explanation>", "signal": 1 | 0}'

    def bot_answer(self, signal: int, justification: str = "scripted") -> dict[str, Any]:
        """A valid answer with ``signal``."""
        return {"justification": justification, "signal": int(signal)}


@dataclass(frozen=True)
class AmountFormat(_FormatBase):
    """A real amount in [low, high] (trust game investment or return, docs/protocol/gossip.md#testbeds).

    JSON numbers only (no booleans or strings); ``validate`` returns
    ``{"justification", <key>: float}``. The grammar admits an integer part up to ⌊high⌋ and at
    most two decimals; the parser enforces the exact range (a re-ask names it).
    """

    kind: str
    key: str
    low: float
    high: float

    @property
    def keys(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("justification", self.key)

    def _check(self, obj: Mapping[str, Any], justification: str) -> dict[str, Any]:
        value = obj[self.key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise AnswerError(ERRORS.render("amount_type", key=self.key, value=_show(value)), code="type")
        if not self.low - 1e-9 <= value <= self.high + 1e-9:
            shown = {"low": f"{self.low:g}", "high": f"{self.high:g}", "value": f"{value:g}"}
            raise AnswerError(ERRORS.render("amount_range", key=self.key, **shown), code="range")
        return {"justification": justification, self.key: float(min(max(value, self.low), self.high))}

    def _value_rules(self) -> tuple[list[str], list[str]]:
        top = max(math.floor(self.high), 0)
        integers = " | ".join(_lit(str(v)) for v in range(top, -1, -1)) if top < 1000 else '("0" | [1-9] [0-9]*)'
        return (
            [f"int ::= {integers}", 'frac ::= ("." [0-9] [0-9]?)?'],
            [_lit(f'", "{self.key}": '), "int", "frac"],
        )

    def _value_chars(self) -> int:
        return len(str(max(math.floor(self.high), 0))) + 3

    def _value_schemas(self) -> dict[str, dict[str, Any]]:
        return {self.key: decimal_range(self.low, self.high, 2)}  # number bounds are not enforced by llama-server

    def instruction(self) -> str:
        """The verbatim output shape."""
        return f'{{"justification": "<short explanation>", "{self.key}": <number from {self.low:g} to {self.high:g}>}}'

    def bot_answer(self, amount: float, justification: str = "scripted") -> dict[str, Any]:
        """A valid answer with ``amount`` (rounded to 2 decimals, clamped to the range)."""
        return {"justification": justification, self.key: round(min(max(amount, self.low), self.high), 2)}


@dataclass(frozen=True)
class ReflectionFormat(_FormatBase):
    """A separate reflection before an action (docs/protocol/gossip.md#decisions, condition flag ``reflection_call``):
    ``{"reflection": "<text>"}``; ``validate`` returns ``{"reflection": str}``."""

    kind: str = "reflection"

    @property
    def keys(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("reflection",)

    def check(self, obj: Mapping[str, Any], *, lenient: bool = False) -> dict[str, Any]:
        if set(obj) != {"reflection"}:
            raise AnswerError(ERRORS.render("reflection_keys"), code="keys")
        if not isinstance(obj["reflection"], str) or not obj["reflection"].strip():
            raise AnswerError(ERRORS.render("reflection_type"), code="type")
        return {"reflection": obj["reflection"]}

    def answer_rules(self) -> list[str]:
        body = " ".join([_lit('{"reflection": "'), "grtext", _lit('"}')])
        return [f"answer ::= {body}", f"grtext ::= {_TEXT_CHAR}{{1,{MESSAGE_CHARS}}}"]

    def max_value_chars(self) -> int:
        return 2 + MESSAGE_CHARS

    def json_schema(self) -> dict[str, Any]:
        """``{"reflection": <string>}``, nothing else."""
        return _object_schema({"reflection": {"type": "string"}})

    def instruction(self) -> str:
        """The verbatim output shape."""
        return '{"reflection": "<a few sentences>"}'

    def bot_answer(self, text: str = "scripted") -> dict[str, Any]:
        """A valid answer."""
        return {"reflection": text}


DONOR = ChoiceFormat("donor_action", "donor_action", ("cooperate", "defect"))
PD_ACTION = ChoiceFormat("player_action", "player_action", ("C", "D"))
SELLER = ChoiceFormat("seller_action", "seller_action", ("H", "L"))
BUYER = ChoiceFormat("buyer_action", "buyer_action", ("c", "s", "none"))
GOSSIP = GossipFormat()
SIGNAL = SignalFormat()
REFLECTION = ReflectionFormat()


def investor_format(resources: float) -> AmountFormat:
    """Investment I ∈ [0, resources] (docs/protocol/gossip.md#testbeds)."""
    return AmountFormat("investor_action", "investor_action", 0.0, round(float(resources), 6))


def responder_format(received: float) -> AmountFormat:
    """Return R ∈ [0, 3I] (docs/protocol/gossip.md#testbeds)."""
    return AmountFormat("responder_action", "responder_action", 0.0, round(float(received), 6))
