"""Validate model answers against their :class:`AnswerFormat` (spec §3.3, §9.2 "Our contract").

The rules live in the format classes (:mod:`coopeval.decisions.formats`); this module is the
stable entry point. :func:`parse_answer` extracts the JSON object from the raw text (the last
one; the first one for the judge) and validates it, returning a normalised object or raising
:class:`AnswerError` whose message is fit to show the model in a re-ask.
:func:`validate_answer` applies the same rules to an already decoded object.

Versioning
----------
``PARSER_VERSION`` is part of every cell hash (``engineering.md`` §1): a new version reruns the
cells, which replay every call from the cache for free. **Bump it** whenever a change can alter,
for some input text, (a) whether it is accepted, (b) the normalised object returned, or (c) the
text of the error message (error messages are sent back to the model in re-asks, so they change
the following attempts). Pure refactors, docstrings and new tests do not need a bump.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coopeval.decisions.formats import FALLBACK_LABEL, TOTAL_PERCENT, AnswerFormat, normalise_label

__all__ = ["FALLBACK_LABEL", "PARSER_VERSION", "TOTAL_PERCENT", "normalise_label", "parse_answer", "validate_answer"]

PARSER_VERSION = 1


def parse_answer(fmt: AnswerFormat, text: str, *, lenient: bool = False) -> dict[str, Any]:
    """Extract and validate the answer to one decision (:meth:`AnswerFormat.parse`).

    Parameters
    ----------
    fmt:
        The decision's contract.
    text:
        The model's raw response. The **last** JSON object is used (the first for the judge's
        :class:`~coopeval.decisions.formats.JudgeLabels`); fences and prose around it are fine
        (spec §3.3).
    lenient:
        Only for :class:`~coopeval.decisions.formats.ContractDesign`: reproduce the reference's
        ``compat.lenient_contract_ints`` (floats truncated toward zero, numeric strings
        accepted; spec §12). Ignored otherwise.

    Returns
    -------
    The validated, normalised object; its shape is documented on each format class.

    Raises
    ------
    AnswerError
        No JSON object, or the object breaks the contract; the message says precisely why.
    """
    return fmt.parse(text, lenient=lenient)


def validate_answer(fmt: AnswerFormat, obj: Mapping[str, Any], *, lenient: bool = False) -> dict[str, Any]:
    """Validate a decoded JSON object against ``fmt`` (:meth:`AnswerFormat.validate`).

    Raises
    ------
    AnswerError
        The object breaks the contract.
    """
    return fmt.validate(obj, lenient=lenient)
