"""Find the JSON object in a model's free-text answer (spec §3.3 "Extraction", §9.2 "Parsing").

The scan tries to decode one JSON value at every ``{`` of the text. Every successfully decoded
object is kept and the scan resumes *after* it, so objects nested inside a decoded object are
never reported separately. Markdown fences, headings and prose around or between objects are
therefore harmless. Only strict JSON is decoded: single-quoted pseudo-JSON, trailing commas,
comments and unquoted keys do not decode and are skipped.

Action, design, vote and signature answers use the **last** object (the answer "ends with" it);
the judge uses the **first** one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from coopeval.decisions.errors import AnswerError

__all__ = ["JSONObject", "extract_first_json_object", "extract_last_json_object", "iter_json_objects"]

NO_JSON_MESSAGE = "no JSON object found"


class JSONObject(dict[str, Any]):
    """A decoded JSON object that remembers keys which occurred more than once.

    JSON allows duplicate keys syntactically and ``json`` keeps the last value silently; the
    validators use :attr:`duplicate_keys` to reject such answers with a precise message.
    """

    duplicate_keys: tuple[str, ...] = ()


def _object_from_pairs(pairs: list[tuple[str, Any]]) -> JSONObject:
    obj = JSONObject()
    duplicates: list[str] = []
    for key, value in pairs:
        if key in obj and key not in duplicates:
            duplicates.append(key)
        obj[key] = value
    if duplicates:
        obj.duplicate_keys = tuple(duplicates)
    return obj


_DECODER = json.JSONDecoder(object_pairs_hook=_object_from_pairs)


def iter_json_objects(text: str) -> Iterator[JSONObject]:
    """Yield every top-level JSON object found in ``text``, in order of appearance.

    A candidate starts at each ``{``; if a JSON value decodes from there, it is yielded and the
    scan continues after its end, otherwise at the next ``{``. Arrays and scalars are never
    yielded (objects *inside* an undecodable fragment or a bare array are still found, because
    the scan looks at every ``{``).
    """
    start = text.find("{")
    while start != -1:
        try:
            value, end = _DECODER.raw_decode(text, start)
        except ValueError:  # json.JSONDecodeError, or a number too large to convert
            start = text.find("{", start + 1)
            continue
        if isinstance(value, JSONObject):  # always true when decoding starts at "{"
            yield value
        start = text.find("{", end)


def extract_last_json_object(text: str) -> JSONObject:
    """Return the last JSON object in ``text`` (the decision contract, spec §3.3).

    Raises
    ------
    AnswerError
        ``"no JSON object found"`` (code ``no_json``) when no ``{`` starts a decodable object.
    """
    last: JSONObject | None = None
    for obj in iter_json_objects(text):
        last = obj
    if last is None:
        raise AnswerError(NO_JSON_MESSAGE, code="no_json")
    return last


def extract_first_json_object(text: str) -> JSONObject:
    """Return the first JSON object in ``text`` (the judge contract, spec §9.2).

    Raises
    ------
    AnswerError
        ``"no JSON object found"`` (code ``no_json``) when no ``{`` starts a decodable object.
    """
    for obj in iter_json_objects(text):
        return obj
    raise AnswerError(NO_JSON_MESSAGE, code="no_json")
