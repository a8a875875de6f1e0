"""Answer formats of the gossip study, one class per output shape (spec §4.2, §4.5, §6, §8.3).

Each format owns its contract: :meth:`parse` (extract the last JSON object, then
:meth:`validate`, raising :class:`~coopeval.decisions.errors.AnswerError` with a message fit to
show the model in a re-ask), :meth:`grammar` (a llama.cpp GBNF grammar admitting only valid
answers, for the embedded model), :meth:`max_tokens`, :meth:`instruction` (the verbatim output
shape shown in prompts) and :meth:`bot_answer` (a valid answer built from semantic values, used by
scripted bots). The decision loop (:class:`coopeval.agents.maker.DecisionMaker`) and the LLM agent
use ``parse``/``grammar``/``max_tokens`` when a format has them.

Shapes (verbatim keys and tokens, spec §4.2, §6):

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
from typing import Any

from coopeval.agents.grammar import DEFAULT_MAX_REASONING_CHARS
from coopeval.decisions.errors import AnswerError
from coopeval.decisions.extract import extract_last_json_object

from coopeval.studies.gossip.tones import TONES

_REASONING_CHAR = r"[\x20-\x7A\x7C-\x7E\n]"
# printable ASCII minus '"', '\', '{', '}': safe inside a JSON string without escapes
_TEXT_CHAR = r"[\x20\x21\x23-\x5B\x5D-\x7A\x7C\x7E]"

JUSTIFICATION_CHARS = 160
"""Grammar cap on the justification string (characters)."""

MESSAGE_CHARS = 240
"""Grammar cap on a gossip message (characters; about 40 words, below the 150-word limit; bounds the embedded model's cost)."""

WORD_LIMIT = 150
"""Gossip messages longer than this many words are flagged (spec §4.5)."""


def _lit(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _norm(token: str) -> str:
    return " ".join(token.split()).casefold()


def _show(value: Any) -> str:
    text = repr(value) if not isinstance(value, str) else '"' + value[:40] + '"'
    return text


def word_count(message: str) -> int:
    """Whitespace-separated words of ``message``."""
    return len(message.split())


class _FormatBase:
    """Shared machinery: key checks, the justification field, grammar framing."""

    kind: str
    keys: tuple[str, ...]

    # -- parsing ---------------------------------------------------------------------------
    def parse(self, text: str) -> dict[str, Any]:
        """Extract the last JSON object of ``text`` and validate it.

        Raises
        ------
        AnswerError
            No JSON object, or the object breaks the contract (message says why).
        """
        return self.validate(extract_last_json_object(text))

    def validate(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Validate a decoded object; see the subclass for the returned shape."""
        raise NotImplementedError

    def _check_keys(self, obj: Mapping[str, Any]) -> str:
        if not isinstance(obj, Mapping):
            raise AnswerError("the answer must be a JSON object", code="type")
        duplicates = tuple(getattr(obj, "duplicate_keys", ()))
        if duplicates:
            raise AnswerError("the JSON object repeats the key " + ", ".join(f'"{k}"' for k in duplicates), code="keys")
        missing = [k for k in self.keys if k not in obj]
        extra = [k for k in obj if k not in self.keys]
        if missing or extra:
            parts = []
            if missing:
                parts.append("missing " + ", ".join(f'"{k}"' for k in missing))
            if extra:
                parts.append("unexpected " + ", ".join(f'"{k}"' for k in extra))
            wanted = ", ".join(f'"{k}"' for k in self.keys)
            raise AnswerError(f"the JSON object must have exactly the keys {wanted}; " + "; ".join(parts), code="keys")
        justification = obj["justification"]
        if not isinstance(justification, str):
            raise AnswerError('"justification" must be a string', code="type")
        return justification

    # -- grammar ---------------------------------------------------------------------------
    def _value_rules(self) -> tuple[list[str], list[str]]:
        """(rules, members): grammar rules and the object's members after the justification."""
        raise NotImplementedError

    def grammar(self, style: str = "IO", max_reasoning_chars: int = DEFAULT_MAX_REASONING_CHARS) -> str:
        """GBNF grammar (start symbol ``root``) admitting only valid answers; ``"CoT"`` allows
        up to ``max_reasoning_chars`` characters of reasoning and a newline before the object."""
        rules, members = self._value_rules()
        body = " ".join([_lit('{"justification": "'), "jtext", *members, _lit("}")])
        head = "root ::= answer"
        if style == "CoT":
            head = f'root ::= {_REASONING_CHAR}{{0,{max_reasoning_chars}}} "\\n" answer'
        return "\n".join([head, f"answer ::= {body}", f"jtext ::= {_TEXT_CHAR}{{1,{JUSTIFICATION_CHARS}}}", *rules]) + "\n"

    def _value_chars(self) -> int:
        raise NotImplementedError

    def max_tokens(self, style: str = "IO", max_reasoning_chars: int = DEFAULT_MAX_REASONING_CHARS) -> int:
        """A token budget that can never cut a grammar-constrained answer short (one byte per
        admitted character, at least one byte per token, plus the end token)."""
        chars = len('{"justification": ""}') + JUSTIFICATION_CHARS + self._value_chars()
        if style == "CoT":
            chars += max_reasoning_chars + 1
        return chars + 1


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

    def validate(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        justification = self._check_keys(obj)
        value = obj[self.key]
        lookup = {_norm(o): o for o in self.options}
        if not isinstance(value, str) or _norm(value) not in lookup:
            allowed = " or ".join(f'"{o}"' for o in self.options)
            raise AnswerError(f'"{self.key}" must be {allowed}, not {_show(value)}', code="label")
        return {"justification": justification, self.key: lookup[_norm(value)]}

    def _value_rules(self) -> tuple[list[str], list[str]]:
        options = " | ".join(_lit(f'"{o}"') for o in self.options)
        return [f"option ::= {options}"], [_lit(f'", "{self.key}": '), "option"]

    def _value_chars(self) -> int:
        return len(f', "{self.key}": ') + 2 + max(len(o) for o in self.options)

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
    """A witness's public assessment: a justification, one tone and a message (spec §4.2).

    ``tones`` may be restricted (an LLM-written attacker message with a forced tone, spec §8.2).
    ``validate`` returns ``{"justification", "tone" (canonical), "gossip", "word_count",
    "over_word_limit"}``.
    """

    kind: str = "gossip"
    tones: tuple[str, ...] = TONES
    max_words: int = WORD_LIMIT

    @property
    def keys(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("justification", "tone", "gossip")

    def validate(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        justification = self._check_keys(obj)
        tone = obj["tone"]
        lookup = {_norm(t): t for t in self.tones}
        if not isinstance(tone, str) or _norm(tone) not in lookup:
            allowed = ", ".join(f'"{t}"' for t in self.tones)
            raise AnswerError(f'"tone" must be one of {allowed}, not {_show(tone)}', code="label")
        message = obj["gossip"]
        if not isinstance(message, str):
            raise AnswerError('"gossip" must be a string (the public message)', code="type")
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
        return len('", "tone": , "gossip": ""') + 2 + max(len(t) for t in self.tones) + MESSAGE_CHARS

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
    """A binary reputation signal, 1 or 0 (spec §8.3). JSON integers 0/1 or the strings "0"/"1"
    are accepted; ``validate`` returns ``{"justification", "signal": 0 | 1}``."""

    kind: str = "signal"

    @property
    def keys(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("justification", "signal")

    def validate(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        justification = self._check_keys(obj)
        value = obj["signal"]
        if isinstance(value, str) and value.strip() in ("0", "1"):
            value = int(value.strip())
        if isinstance(value, bool) or value not in (0, 1) or isinstance(value, float):
            raise AnswerError(f'"signal" must be 1 or 0, not {_show(value)}', code="label")
        return {"justification": justification, "signal": int(value)}

    def _value_rules(self) -> tuple[list[str], list[str]]:
        return [], [_lit('", "signal": '), '("1" | "0")']

    def _value_chars(self) -> int:
        return len('", "signal": 1')

    def instruction(self) -> str:
        """The verbatim output shape."""
        return '{"justification": "<short explanation>", "signal": 1 | 0}'

    def bot_answer(self, signal: int, justification: str = "scripted") -> dict[str, Any]:
        """A valid answer with ``signal``."""
        return {"justification": justification, "signal": int(signal)}


@dataclass(frozen=True)
class AmountFormat(_FormatBase):
    """A real amount in [low, high] (trust game investment or return, spec §6).

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

    def validate(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        justification = self._check_keys(obj)
        value = obj[self.key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise AnswerError(f'"{self.key}" must be a number, not {_show(value)}', code="type")
        if not self.low - 1e-9 <= value <= self.high + 1e-9:
            raise AnswerError(
                f'"{self.key}" must be between {self.low:g} and {self.high:g}, not {value:g}', code="range"
            )
        return {"justification": justification, self.key: float(min(max(value, self.low), self.high))}

    def _value_rules(self) -> tuple[list[str], list[str]]:
        top = max(int(math.floor(self.high)), 0)
        integers = " | ".join(_lit(str(v)) for v in range(top, -1, -1)) if top < 1000 else '("0" | [1-9] [0-9]*)'
        return (
            [f"int ::= {integers}", 'frac ::= ("." [0-9] [0-9]?)?'],
            [_lit(f'", "{self.key}": '), "int", "frac"],
        )

    def _value_chars(self) -> int:
        return len(f'", "{self.key}": ') + len(str(max(int(math.floor(self.high)), 0))) + 3

    def instruction(self) -> str:
        """The verbatim output shape."""
        return f'{{"justification": "<short explanation>", "{self.key}": <number from {self.low:g} to {self.high:g}>}}'

    def bot_answer(self, amount: float, justification: str = "scripted") -> dict[str, Any]:
        """A valid answer with ``amount`` (rounded to 2 decimals, clamped to the range)."""
        return {"justification": justification, self.key: round(min(max(amount, self.low), self.high), 2)}


@dataclass(frozen=True)
class ReflectionFormat(_FormatBase):
    """A separate reflection before an action (spec §11, condition flag ``reflection_call``):
    ``{"reflection": "<text>"}``; ``validate`` returns ``{"reflection": str}``."""

    kind: str = "reflection"

    @property
    def keys(self) -> tuple[str, ...]:  # type: ignore[override]
        return ("reflection",)

    def validate(self, obj: Mapping[str, Any]) -> dict[str, Any]:
        if not isinstance(obj, Mapping) or set(obj) != {"reflection"} or getattr(obj, "duplicate_keys", ()):
            raise AnswerError('the JSON object must have exactly the key "reflection"', code="keys")
        if not isinstance(obj["reflection"], str) or not obj["reflection"].strip():
            raise AnswerError('"reflection" must be a non-empty string', code="type")
        return {"reflection": obj["reflection"]}

    def grammar(self, style: str = "IO", max_reasoning_chars: int = DEFAULT_MAX_REASONING_CHARS) -> str:
        head = "root ::= answer"
        if style == "CoT":
            head = f'root ::= {_REASONING_CHAR}{{0,{max_reasoning_chars}}} "\\n" answer'
        body = " ".join([_lit('{"reflection": "'), "rtext", _lit('"}')])
        return "\n".join([head, f"answer ::= {body}", f"rtext ::= {_TEXT_CHAR}{{1,{MESSAGE_CHARS}}}"]) + "\n"

    def max_tokens(self, style: str = "IO", max_reasoning_chars: int = DEFAULT_MAX_REASONING_CHARS) -> int:
        chars = len('{"reflection": ""}') + MESSAGE_CHARS
        if style == "CoT":
            chars += max_reasoning_chars + 1
        return chars + 1

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
    """Investment I ∈ [0, resources] (spec §6)."""
    return AmountFormat("investor_action", "investor_action", 0.0, round(float(resources), 6))


def responder_format(received: float) -> AmountFormat:
    """Return R ∈ [0, 3I] (spec §6)."""
    return AmountFormat("responder_action", "responder_action", 0.0, round(float(received), 6))
