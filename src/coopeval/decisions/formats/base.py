"""The answer-format contract: one class per kind of decision (docs/protocol/answers.md#output-formats, #parsing, docs/protocol/design-checks.md#what-is-judged).

An :class:`AnswerFormat` is the machine-readable contract of one decision and owns everything
that depends on its shape:

* **validation** (:meth:`AnswerFormat.parse`, :meth:`AnswerFormat.validate`): raw text → the
  normalised answer, or an :class:`~coopeval.decisions.errors.AnswerError` whose message is fit
  to show the model in a re-ask;
* **grammar** (:meth:`AnswerFormat.grammar`, :meth:`AnswerFormat.max_json_chars`): the GBNF
  rules that admit exactly the valid JSON objects, for the embedded model's constrained
  decoding (:mod:`coopeval.agents.grammar` wraps them with the CoT/IO style; llama.cpp is never
  imported here);
* **JSON Schema** (:meth:`AnswerFormat.json_schema`): the same object as a JSON Schema (exact
  keys, value types, integer ranges, enums) for providers that constrain decoding with
  ``response_format`` (:mod:`coopeval.agents.structured`); rules across values (the action
  sum) stay with the validator;
* the **scripted-bot default** (:meth:`AnswerFormat.bot_default`): the answer a bot gives when
  its strategy has no opinion on the decision.

A new format (a gossip message, a strategy text) is one new module with one subclass: a frozen
dataclass holding its parameters (at least ``keys``), a ``kind`` string (the value stored in the
``kind`` column of the decision tables) and the five methods below. Nothing else switches on the
kind.

Versioning: every change that can alter, for some input text, whether it is accepted or the
normalised object returned must bump ``coopeval.decisions.parsing.PARSER_VERSION``. Error
messages are sent back to the model, so their wording is in templates
(``decisions/prompts/error_*.txt``, :mod:`coopeval.decisions.texts`) hashed into every cell id.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from enum import StrEnum
from typing import Any, ClassVar

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.extract import extract_first_json_object, extract_last_json_object
from coopeval.decisions.formats.messages import names, plural_s
from coopeval.decisions.texts import ENGINE_TEXTS

__all__ = ["AnswerFormat", "DecisionKind"]


class DecisionKind(StrEnum):
    """The kinds of call an agent answers in CoopEval (docs/protocol/answers.md#output-formats, docs/protocol/design-checks.md#what-is-judged).

    Each is the ``kind`` of one :class:`AnswerFormat` subclass; a format of another study may
    use any other string.
    """

    ACTION = "action"
    MEDIATOR_DESIGN = "mediator_design"
    MEDIATOR_VOTE = "mediator_vote"
    CONTRACT_DESIGN = "contract_design"
    CONTRACT_VOTE = "contract_vote"
    SIGN = "sign"
    JUDGE = "judge"


class AnswerFormat(ABC):
    """The exact output contract of a decision (base class of every answer format).

    Subclasses are frozen dataclasses (hashable: grammars are cached per format) and set:

    Attributes
    ----------
    kind:
        Class attribute: the decision kind (a :class:`DecisionKind` member for CoopEval's formats).
    keys:
        The exact key set of the JSON object, in display order.
    first_object:
        Class attribute: validate the **first** JSON object of the text instead of the last one
        (the judge's answer begins with it; every other answer ends with it; docs/protocol/answers.md#parsing).
    extra_keys_ignored:
        Class attribute: keys outside ``keys`` are tolerated (and repeating them is no error).
    """

    kind: ClassVar[str]
    keys: tuple[str, ...]
    first_object: ClassVar[bool] = False
    extra_keys_ignored: ClassVar[bool] = False

    # -- validation ----------------------------------------------------------------------------

    def parse(self, text: str, *, lenient: bool = False) -> dict[str, Any]:
        """Extract the answer's JSON object from ``text`` and :meth:`validate` it.

        Fences and prose around the object are fine (docs/protocol/answers.md#parsing "Extraction").

        Raises
        ------
        AnswerError
            No JSON object, or the object breaks the contract; the message says precisely why.
        """
        obj = extract_first_json_object(text) if self.first_object else extract_last_json_object(text)
        return self.validate(obj, lenient=lenient)

    def validate(self, obj: Mapping[str, Any], *, lenient: bool = False) -> dict[str, Any]:
        """Validate a decoded JSON object and return its normalised form.

        Rejects a non-object and repeated keys, then applies the format's own :meth:`check`.
        ``lenient`` is passed on (only :class:`ContractDesign` reads it).
        """
        if not isinstance(obj, Mapping):
            raise AnswerError(ENGINE_TEXTS.render("error_not_object"), code="type")
        duplicates = tuple(getattr(obj, "duplicate_keys", ()))
        if self.extra_keys_ignored:  # only a repeated key of the contract matters
            duplicates = tuple(k for k in duplicates if k in self.keys)
        if duplicates:
            raise AnswerError(ENGINE_TEXTS.render("error_repeated_keys", s=plural_s(duplicates), keys=names(duplicates)), code="keys")
        return self.check(obj, lenient=lenient)

    @abstractmethod
    def check(self, obj: Mapping[str, Any], *, lenient: bool) -> dict[str, Any]:
        """The format's own rules on an object without repeated keys; the normalised answer."""

    # -- grammar -------------------------------------------------------------------------------

    def grammar(self) -> list[str]:
        """GBNF rules admitting exactly the valid JSON objects; the start rule is ``answer``.

        One fixed whitespace form, as the prompts show it (``{"A0": 30, "A1": 70}``).

        Raises
        ------
        ValueError
            Empty key set, or parameters that admit no answer.
        """
        if not self.keys:
            raise ValueError("an answer format needs at least one key")
        return self.answer_rules()

    @abstractmethod
    def answer_rules(self) -> list[str]:
        """The rules of :meth:`grammar` for a non-empty key set."""

    def max_json_chars(self) -> int:
        """Upper bound on the length (characters = bytes) of any object :meth:`grammar` admits."""
        braces = 2 + 2 * max(len(self.keys) - 1, 0)  # "{", "}", and ", " between members
        members = sum(len(k) + 4 for k in self.keys)  # '"k": '
        return braces + members + self.max_value_chars()

    @abstractmethod
    def max_value_chars(self) -> int:
        """Upper bound on the total length of the values in an admitted object."""

    # -- JSON Schema ---------------------------------------------------------------------------

    def json_schema(self) -> dict[str, Any] | None:
        """JSON Schema of the answer object, or None if the format has none.

        An object with exactly :attr:`keys` (all required, in display order, no others), each
        value as :meth:`value_schema` says. Only keywords the servers' converters enforce
        (``type``, ``enum``, ``minimum``/``maximum`` on integers only, ``required``,
        ``additionalProperties``); a bounded real number is an ``enum``
        (:func:`coopeval.decisions.schema.decimal_range`).
        It is the grammar's language without the rules across values (an action distribution's
        sum), which stay with :meth:`check`. ``None`` (the default, and every text format):
        ``structured_output: json_schema`` sends such a decision unconstrained.
        """
        value = self.value_schema()
        if value is None or not self.keys:
            return None
        return {
            "type": "object",
            "properties": {k: dict(value) for k in self.keys},
            "required": list(self.keys),
            "additionalProperties": False,
        }

    def value_schema(self) -> dict[str, Any] | None:
        """JSON Schema of every value of the answer object (same for all keys), or None."""
        return None

    # -- scripted bots -------------------------------------------------------------------------

    @abstractmethod
    def bot_default(self, state: Mapping[str, Any], *, cooperative: bool) -> dict[str, Any] | None:
        """The answer of a scripted bot whose strategy has no opinion on this decision.

        Parameters
        ----------
        state:
            The decision's structured state (:class:`coopeval.agents.protocol.DecisionRequest`).
        cooperative:
            The bot's ``cooperative`` trait.

        Returns
        -------
        The JSON answer, or None when a bot cannot answer without a strategy of its own.
        """
