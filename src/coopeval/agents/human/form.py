"""The form a person answers with, derived from the decision's answer format.

A model answers a decision with text that the parser checks (:mod:`coopeval.decisions.parsing`).
A person gets the same prompt plus a form that writes that text for them: the form's only job is
to build the JSON object the format asks for (key order as in the format, values typed as the
format's JSON Schema says); it never checks the answer itself. The play job runs the real
parser on whatever the form sends, so the form refuses exactly what the parser refuses, with the
parser's words (:mod:`coopeval.agents.human.seat`).

Form specs (JSON, read by the web page and the terminal):

``{"type": "distribution", "keys": [...]}``
    an action distribution (:class:`~coopeval.decisions.formats.action.ActionDistribution`): one
    integer percentage per action token; a pure action is 100 on one token.
``{"type": "fields", "fields": [...]}``
    any other JSON-object format, one field per key: ``{"key", "widget", "options"?}`` with widget
    ``choice`` (an enum: buttons), ``boolean`` (yes/no), ``integer``, ``number`` or ``text``
    (a string, e.g. a justification or a gossip message).
``{"type": "text"}``
    a free-text format (:class:`~coopeval.decisions.formats.text.TextAnswerFormat`): the answer is
    the text typed, as the prompt describes it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from coopeval.decisions.formats import AnswerFormat
from coopeval.decisions.formats.action import ActionDistribution
from coopeval.decisions.formats.text import TextAnswerFormat

__all__ = ["MAX_CHOICE_BUTTONS", "form_for"]

MAX_CHOICE_BUTTONS = 12
"""A numeric enum with more values than this (a decimal grid) is typed as a number, not clicked."""


def _field(key: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    kind = schema.get("type")
    options = schema.get("enum")
    if options is not None and (kind == "string" or len(options) <= MAX_CHOICE_BUTTONS):
        return {"key": key, "widget": "choice", "options": list(options)}
    if kind in ("boolean", "integer", "number"):
        return {"key": key, "widget": kind}
    return {"key": key, "widget": "text"}


def form_for(fmt: AnswerFormat) -> dict[str, Any]:
    """The form spec of ``fmt`` (see the module docstring).

    Parameters
    ----------
    fmt:
        The decision's answer format.

    Returns
    -------
    dict
        JSON-serialisable form spec: ``distribution`` for an action distribution, ``text`` for a
        free-text format or a format without a JSON Schema, else ``fields`` with one field per
        key of the format's JSON Schema, in the format's key order.
    """
    if isinstance(fmt, ActionDistribution):
        return {"type": "distribution", "keys": list(fmt.keys)}
    schema = None if isinstance(fmt, TextAnswerFormat) else fmt.json_schema()
    if schema is None:
        return {"type": "text"}
    properties = schema["properties"]
    return {"type": "fields", "fields": [_field(key, properties[key]) for key in properties]}
