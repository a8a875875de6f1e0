"""Free-text answer formats: the base of every answer that is not a JSON object.

A study whose agents answer in prose (a strategy text, ``Justification: … Answer: 3``) defines
one :class:`TextAnswerFormat` subclass per answer. Such a format owns the whole answer:

* :meth:`TextAnswerFormat.parse` validates the raw text (no JSON extraction) and returns the
  normalised answer, or raises :class:`~coopeval.decisions.errors.AnswerError` with a message
  fit for a re-ask;
* :meth:`TextAnswerFormat.complete_grammar` is the **complete** llama.cpp GBNF grammar (start
  symbol ``root``), independent of the agent's CoT/IO style: a format that wants reasoning
  before its answer puts it in its own grammar (:func:`coopeval.agents.grammar.gbnf_for`
  returns it unchanged);
* :meth:`TextAnswerFormat.max_output_chars` bounds the length of any admitted string (the token
  budget :func:`coopeval.agents.grammar.max_tokens_for` derives from it);
* :meth:`TextAnswerFormat.bot_text` is the text a scripted bot of the study answers.

The JSON-object machinery of :class:`AnswerFormat` (``validate``, ``check``, ``answer_rules``,
``max_value_chars``) does not apply and raises ``TypeError``; :meth:`bot_default` returns
``None`` (CoopEval's JSON bots cannot answer a text format).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from coopeval.decisions.formats.base import AnswerFormat

__all__ = ["TextAnswerFormat"]


class TextAnswerFormat(AnswerFormat):
    """Base class of answer formats whose answer is free text, not a JSON object.

    Subclasses are frozen dataclasses (hashable: grammars are cached per format) with a
    ``kind`` string and the four abstract methods below.
    """

    keys: ClassVar[tuple[str, ...]] = ()

    # -- validation ----------------------------------------------------------------------------

    @abstractmethod
    def parse(self, text: str, *, lenient: bool = False) -> dict[str, Any]:
        """Validate the raw answer ``text`` and return its normalised form.

        ``lenient`` is accepted for the common signature and ignored unless a format says
        otherwise.

        Raises
        ------
        AnswerError
            The text breaks the format; the message says precisely why (it is sent back to the
            model in a re-ask).
        """

    def validate(self, obj: Mapping[str, Any], *, lenient: bool = False) -> dict[str, Any]:
        raise TypeError(f"{type(self).__name__} answers are text: use parse(text), not validate(obj)")

    def check(self, obj: Mapping[str, Any], *, lenient: bool) -> dict[str, Any]:
        raise TypeError(f"{type(self).__name__} answers are text: use parse(text)")

    # -- grammar -------------------------------------------------------------------------------

    @abstractmethod
    def complete_grammar(self) -> str:
        """The complete GBNF grammar (start symbol ``root``) admitting only parseable answers,
        for the embedded model's constrained decoding. Printable ASCII and newlines only, so
        every admitted character is one byte."""

    @abstractmethod
    def max_output_chars(self) -> int:
        """Upper bound on the length (characters = bytes) of any string
        :meth:`complete_grammar` admits."""

    def grammar(self) -> list[str]:
        raise TypeError(f"{type(self).__name__} has a complete grammar of its own: use complete_grammar()")

    def answer_rules(self) -> list[str]:
        raise TypeError(f"{type(self).__name__} has a complete grammar of its own: use complete_grammar()")

    def max_json_chars(self) -> int:
        raise TypeError(f"{type(self).__name__} answers are text: use max_output_chars()")

    def max_value_chars(self) -> int:
        raise TypeError(f"{type(self).__name__} answers are text: use max_output_chars()")

    # -- scripted bots -------------------------------------------------------------------------

    def bot_default(self, state: Mapping[str, Any], *, cooperative: bool = True) -> dict[str, Any] | None:
        """``None``: a JSON-answering bot has no answer to a text format (see :meth:`bot_text`)."""
        return None

    @abstractmethod
    def bot_text(self, state: Mapping[str, Any]) -> str:
        """The well-formed answer a scripted bot of the format's study gives, from the
        decision's structured ``state``."""
