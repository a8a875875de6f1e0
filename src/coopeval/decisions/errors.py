"""The error raised when a model's answer does not meet its contract (docs/protocol/answers.md#parsing, #re-asks).

The message of an :class:`AnswerError` is shown back to the model in a re-ask
(:func:`coopeval.decisions.reask.reask_messages`), so it is written for the model: one plain
sentence saying precisely what is wrong ("the probabilities sum to 90, not 100"), without
Python reprs or stack details.
"""

from __future__ import annotations

__all__ = ["AnswerError"]


class AnswerError(ValueError):
    """An answer that cannot be used: no JSON object, or an object that breaks the contract.

    Parameters
    ----------
    message:
        Human- and model-readable description of the problem; ``str(error)`` returns it.
    code:
        Short machine-readable category for failure statistics, one of ``"no_json"``,
        ``"keys"``, ``"type"``, ``"range"``, ``"sum"``, ``"label"``, ``"invalid"``, ``"syntax"``
        (the answer's object is not closed or not strict JSON), ``"truncated"`` (the token limit
        cut the answer off).
    offset:
        Character offset in the reply of the object-like span that was rejected, when known.
    """

    def __init__(self, message: str, *, code: str = "invalid", offset: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.offset = offset

    def __str__(self) -> str:
        return self.message

    def __repr__(self) -> str:
        return f"AnswerError({self.message!r}, code={self.code!r})"
