"""Validate model answers against their :class:`AnswerFormat` (spec §3.3, §9.2 "Our contract").

:func:`parse_answer` extracts the JSON object from the raw text (the last one; the first one for
the judge) and validates it with the rule of its :class:`DecisionKind`, returning a normalised
object or raising :class:`AnswerError` whose message is fit to show the model in a re-ask.
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

import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.extract import extract_first_json_object, extract_last_json_object
from coopeval.decisions.formats import AnswerFormat, DecisionKind

__all__ = ["FALLBACK_LABEL", "PARSER_VERSION", "TOTAL_PERCENT", "normalise_label", "parse_answer", "validate_answer"]

PARSER_VERSION = 1
TOTAL_PERCENT = 100
FALLBACK_LABEL = "Other"

_MAX_SHOWN = 40  # longest value excerpt quoted back to the model


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------


def parse_answer(fmt: AnswerFormat, text: str, *, lenient: bool = False) -> dict[str, Any]:
    """Extract and validate the answer to one decision.

    Parameters
    ----------
    fmt:
        The decision's contract.
    text:
        The model's raw response. The **last** JSON object is used (the first for
        ``DecisionKind.JUDGE``); fences and prose around it are fine (spec §3.3).
    lenient:
        Only for ``CONTRACT_DESIGN``: reproduce the reference's ``compat.lenient_contract_ints``
        (floats truncated toward zero, numeric strings accepted; spec §12). Ignored otherwise.

    Returns
    -------
    The validated, normalised object; see :func:`validate_answer` for its shape per kind.

    Raises
    ------
    AnswerError
        No JSON object, or the object breaks the contract; the message says precisely why.
    """
    if fmt.kind is DecisionKind.JUDGE:
        obj = extract_first_json_object(text)
    else:
        obj = extract_last_json_object(text)
    return validate_answer(fmt, obj, lenient=lenient)


def validate_answer(fmt: AnswerFormat, obj: Mapping[str, Any], *, lenient: bool = False) -> dict[str, Any]:
    """Validate a decoded JSON object against ``fmt`` and return its normalised form.

    Accepted shapes and results (spec §3.2–3.3, §9.2):

    * ``ACTION``: keys exactly ``fmt.keys``; JSON integers (no booleans, no ``50.0``) in
      0..100 summing to exactly 100 → ``{token: int}`` in token order.
    * ``MEDIATOR_DESIGN``: keys are decimal integers 1..N, exactly N distinct ones; values are
      base-action tokens from ``fmt.values`` → ``{"1": "A0", ..., "N": ...}``.
    * ``MEDIATOR_VOTE`` / ``CONTRACT_VOTE``: keys exactly ``fmt.keys``; JSON booleans →
      ``{key: bool}``.
    * ``CONTRACT_DESIGN``: keys exactly the base tokens; JSON integers (``lenient``: floats
      truncated, numeric strings accepted); within ``fmt.int_bounds`` if set → ``{token: int}``.
    * ``SIGN``: key ``sign`` holding a boolean; other keys ignored → ``{"sign": bool}``.
    * ``JUDGE``: keys exactly ``reasoning`` (string), ``confidence`` (number in [0, 1]) and
      ``justification_type`` (comma-separated labels) → ``{"reasoning": str, "confidence":
      float, "labels": [canonical labels in taxonomy order]}``. Labels are matched to
      ``fmt.values`` case- and whitespace-insensitively; ``Category{n}`` and a bare ``{n}``
      name the n-th label (n = 1..len(fmt.values), the judge prompt's numbering);
      ``"Other"`` is always accepted as the explicit fallback. Any other label is an error,
      never mapped to Other. Duplicates collapse.

    Raises
    ------
    AnswerError
        The object breaks the contract.
    """
    if not isinstance(obj, Mapping):
        raise AnswerError("the answer must be a JSON object", code="type")
    duplicates = tuple(getattr(obj, "duplicate_keys", ()))
    if fmt.kind is DecisionKind.SIGN:  # extra keys are ignored, so only a repeated "sign" matters
        duplicates = tuple(k for k in duplicates if k == "sign")
    if duplicates:
        raise AnswerError(f"the JSON object repeats the key{_s(duplicates)} {_names(duplicates)}", code="keys")
    validator = _VALIDATORS[fmt.kind]
    return validator(fmt, obj, lenient)


def normalise_label(label: str) -> str:
    """Case- and whitespace-insensitive form of a judge label (spec §9.2 "Normalisation")."""
    return " ".join(label.split()).casefold()


# --------------------------------------------------------------------------------------------
# helpers
# --------------------------------------------------------------------------------------------


def _s(items: Sequence[object]) -> str:
    return "" if len(items) == 1 else "s"


def _names(keys: Sequence[str]) -> str:
    return ", ".join(_quote(k) for k in keys)


def _quote(value: str) -> str:
    shown = value if len(value) <= _MAX_SHOWN else value[: _MAX_SHOWN - 3] + "..."
    return '"' + shown.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _show(value: Any) -> str:
    """Render a JSON value as the model wrote it (roughly), for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _quote(value)
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, int):
        digits = str(value)
        return digits if len(digits) <= _MAX_SHOWN else f"{digits[:12]}... ({len(digits)} digits)"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return str(value)  # pragma: no cover - json only produces the types above


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, float):
        return "a decimal number"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return type(value).__name__  # pragma: no cover


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_exact_keys(obj: Mapping[str, Any], expected: Sequence[str]) -> None:
    """Raise unless the key set of ``obj`` equals ``expected`` exactly (case-sensitive)."""
    present = set(obj)
    wanted = set(expected)
    if present == wanted:
        return
    missing = [k for k in expected if k not in present]
    extra = [k for k in obj if k not in wanted]
    parts = []
    if missing:
        parts.append(f"missing key{_s(missing)} {_names(missing)}")
    if extra:
        parts.append(f"unexpected key{_s(extra)} {_names(extra)}")
    raise AnswerError(
        f"the JSON object must have exactly the keys {_names(expected)}; " + "; ".join(parts),
        code="keys",
    )


def _bad_values(obj: Mapping[str, Any], keys: Sequence[str], ok: Callable[[Any], bool]) -> list[str]:
    return [f"{_quote(k)} is {_show(obj[k])} ({_type_name(obj[k])})" for k in keys if not ok(obj[k])]


# --------------------------------------------------------------------------------------------
# validators, one per decision kind
# --------------------------------------------------------------------------------------------


def _validate_action(fmt: AnswerFormat, obj: Mapping[str, Any], lenient: bool) -> dict[str, Any]:
    keys = fmt.keys
    _check_exact_keys(obj, keys)
    bad = _bad_values(obj, keys, _is_int)
    if bad:
        raise AnswerError(
            "every value must be a whole number of percentage points (an integer such as 50, "
            "not 50.0 or \"50\"); " + "; ".join(bad),
            code="type",
        )
    out_of_range = [f"{_quote(k)} is {_show(obj[k])}" for k in keys if not 0 <= obj[k] <= TOTAL_PERCENT]
    if out_of_range:
        raise AnswerError(
            f"every value must be between 0 and {TOTAL_PERCENT}; " + "; ".join(out_of_range),
            code="range",
        )
    total = sum(obj[k] for k in keys)
    if total != TOTAL_PERCENT:
        raise AnswerError(f"the probabilities sum to {total}, not {TOTAL_PERCENT}", code="sum")
    return {k: int(obj[k]) for k in keys}


_DECIMAL_KEY = re.compile(r"\s*([0-9]+)\s*")


def _validate_mediator_design(fmt: AnswerFormat, obj: Mapping[str, Any], lenient: bool) -> dict[str, Any]:
    n = len(fmt.keys)
    expected = [str(d) for d in range(1, n + 1)]
    by_number: dict[int, str] = {}
    problems: list[str] = []
    for key in obj:
        match = _DECIMAL_KEY.fullmatch(key)
        if match is None:
            problems.append(f"key {_quote(key)} is not a whole number")
            continue
        number = int(match.group(1))
        if not 1 <= number <= n:
            problems.append(f"key {_quote(key)} is outside 1..{n}")
        elif number in by_number:
            problems.append(f"keys {_quote(by_number[number])} and {_quote(key)} both mean {number}")
        else:
            by_number[number] = key
    missing = [str(d) for d in range(1, n + 1) if d not in by_number]
    if missing:
        problems.append(f"missing key{_s(missing)} {_names(missing)}")
    if problems:
        raise AnswerError(
            f"the JSON object must have exactly the keys {_names(expected)} (one per number of "
            f"delegating players); " + "; ".join(problems),
            code="keys",
        )
    allowed = set(fmt.values)
    bad = [
        f"{_quote(by_number[d])} is {_show(obj[by_number[d]])}"
        for d in range(1, n + 1)
        if not (isinstance(obj[by_number[d]], str) and obj[by_number[d]] in allowed)
    ]
    if bad:
        raise AnswerError(
            f"every value must be one of the base actions {_names(fmt.values)}; " + "; ".join(bad),
            code="type",
        )
    return {str(d): obj[by_number[d]] for d in range(1, n + 1)}


def _validate_vote(fmt: AnswerFormat, obj: Mapping[str, Any], lenient: bool) -> dict[str, Any]:
    _check_exact_keys(obj, fmt.keys)
    bad = _bad_values(obj, fmt.keys, lambda v: isinstance(v, bool))
    if bad:
        raise AnswerError("every value must be true or false; " + "; ".join(bad), code="type")
    return {k: bool(obj[k]) for k in fmt.keys}


_NUMERIC_STRING = re.compile(r"\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*")


def _lenient_int(value: Any) -> int | None:
    """The reference's contract-value coercion (``compat.lenient_contract_ints``)."""
    if _is_int(value):
        return int(value)
    if isinstance(value, float) and math.isfinite(value):
        return math.trunc(value)
    if isinstance(value, str) and _NUMERIC_STRING.fullmatch(value):
        number = float(value)
        return math.trunc(number) if math.isfinite(number) else None
    return None


def _validate_contract_design(fmt: AnswerFormat, obj: Mapping[str, Any], lenient: bool) -> dict[str, Any]:
    keys = fmt.keys
    _check_exact_keys(obj, keys)
    values: dict[str, int] = {}
    bad: list[str] = []
    for k in keys:
        converted = _lenient_int(obj[k]) if lenient else (int(obj[k]) if _is_int(obj[k]) else None)
        if converted is None:
            bad.append(f"{_quote(k)} is {_show(obj[k])} ({_type_name(obj[k])})")
        else:
            values[k] = converted
    if bad:
        raise AnswerError(
            "every value must be a whole number of points (an integer such as 3 or -2, "
            "not 3.0 or \"3\"); " + "; ".join(bad),
            code="type",
        )
    if fmt.int_bounds is not None:
        low, high = fmt.int_bounds
        outside = [f"{_quote(k)} is {_show(values[k])}" for k in keys if not low <= values[k] <= high]
        if outside:
            raise AnswerError(f"every value must be between {low} and {high}; " + "; ".join(outside), code="range")
    return values


def _validate_sign(fmt: AnswerFormat, obj: Mapping[str, Any], lenient: bool) -> dict[str, Any]:
    if "sign" not in obj:
        raise AnswerError('the JSON object must have the key "sign"', code="keys")
    value = obj["sign"]
    if not isinstance(value, bool):
        raise AnswerError(f'"sign" must be true or false, not {_show(value)} ({_type_name(value)})', code="type")
    return {"sign": value}


_CATEGORY_ALIAS = re.compile(r"(?:category\s*)?([0-9]+)")


def _judge_vocabulary(fmt: AnswerFormat) -> tuple[list[str], dict[str, int]]:
    """Canonical labels in taxonomy order (fallback appended if absent) and their lookup."""
    labels = list(fmt.values)
    if normalise_label(FALLBACK_LABEL) not in {normalise_label(v) for v in labels}:
        labels.append(FALLBACK_LABEL)
    return labels, {normalise_label(label): i for i, label in enumerate(labels)}


def _validate_judge(fmt: AnswerFormat, obj: Mapping[str, Any], lenient: bool) -> dict[str, Any]:
    _check_exact_keys(obj, fmt.keys)
    reasoning = obj["reasoning"]
    if not isinstance(reasoning, str):
        raise AnswerError(f'"reasoning" must be a string, not {_type_name(reasoning)}', code="type")
    confidence = obj["confidence"]
    if not (_is_int(confidence) or isinstance(confidence, float)):
        raise AnswerError(
            f'"confidence" must be a number between 0 and 1, not {_show(confidence)} ({_type_name(confidence)})',
            code="type",
        )
    if not (math.isfinite(confidence) and 0 <= confidence <= 1):
        raise AnswerError(f'"confidence" must be between 0 and 1, not {_show(confidence)}', code="range")
    raw = obj["justification_type"]
    if not isinstance(raw, str):
        raise AnswerError(
            f'"justification_type" must be one string of comma-separated category names, not {_type_name(raw)}',
            code="type",
        )
    labels, lookup = _judge_vocabulary(fmt)
    n_categories = len(fmt.values) if fmt.values else len(labels) - 1
    found: set[int] = set()
    unknown: list[str] = []
    pieces = [p.strip() for p in raw.split(",")]
    for piece in pieces:
        if not piece:
            continue
        key = normalise_label(piece)
        if key in lookup:
            found.add(lookup[key])
            continue
        alias = _CATEGORY_ALIAS.fullmatch(key)
        if alias is not None and 1 <= int(alias.group(1)) <= n_categories:
            found.add(int(alias.group(1)) - 1)
            continue
        unknown.append(piece)
    if unknown:
        raise AnswerError(
            f"unknown justification type{_s(unknown)} {_names(unknown)}; use only the category names "
            f"listed (or {_quote(FALLBACK_LABEL)} when none fits), separated by commas",
            code="label",
        )
    if not found:
        raise AnswerError(
            f'"justification_type" names no category; give at least one (or {_quote(FALLBACK_LABEL)})',
            code="label",
        )
    return {
        "reasoning": reasoning,
        "confidence": float(confidence),
        "labels": [labels[i] for i in sorted(found)],
    }


_VALIDATORS: dict[DecisionKind, Callable[[AnswerFormat, Mapping[str, Any], bool], dict[str, Any]]] = {
    DecisionKind.ACTION: _validate_action,
    DecisionKind.MEDIATOR_DESIGN: _validate_mediator_design,
    DecisionKind.MEDIATOR_VOTE: _validate_vote,
    DecisionKind.CONTRACT_VOTE: _validate_vote,
    DecisionKind.CONTRACT_DESIGN: _validate_contract_design,
    DecisionKind.SIGN: _validate_sign,
    DecisionKind.JUDGE: _validate_judge,
}
