"""Structured outputs for remote and self-hosted models: constrain the provider's decoding.

Per agent, ``params.structured_output`` (an agent option, never sent as such) chooses:

* ``none`` (default): the request carries no constraint (hosted APIs as before);
* ``json_schema``: OpenAI-compatible ``response_format: {type: json_schema, …}`` with the
  answer format's :meth:`~coopeval.decisions.formats.AnswerFormat.json_schema` (OpenAI, vLLM,
  llama-server, Ollama and the other providers litellm maps it for). The schema fixes keys,
  types, ranges and enums; an action distribution's sum may still be wrong and is re-asked;
* ``grammar``: the format's GBNF grammar (:func:`coopeval.agents.grammar.gbnf_for`, the one the
  embedded model decodes under) in the request body field named by ``params.grammar_field``:
  ``grammar`` (llama-server, the default), ``structured_outputs.grammar`` (vLLM ≥ 0.12) or
  ``guided_grammar`` (older vLLM). Sent through litellm's ``extra_body``;
* ``auto``: ``json_schema`` if litellm's capability data says the model supports response
  schemas, otherwise the first of ``grammar``, ``json_schema`` whose probe passes, else ``none``.

CoT keeps free reasoning before the constrained object: under ``grammar`` the grammar has a
bounded reasoning part (``max_reasoning_chars``) before the newline and the object; under
``json_schema`` the schema is ``{"reasoning": <string ≤ max_reasoning_chars>, "answer":
<format schema>}`` and :func:`unwrap_reasoning` turns such a reply into ``reasoning\\n{answer}``
before it is parsed, cached and recorded.

Servers that do not know a field answer 200 and ignore it; some decode unconstrained when a
schema does not compile. :func:`probe_request` / :func:`probe_passed` detect that: the probe
admits exactly one string (``{"probe": "zq-4817"}``) that a model asked to say "hello" does not
write unless the constraint is applied. A simple schema compiling says nothing of the answer
formats' own (issue 25, kind 1), so every distinct constraint a run sends is probed too, before
its first call (:mod:`coopeval.agents.format_probes`): the same prompt
under the format's exact schema or grammar must come back as an answer the constraint admits.

Per call, :func:`constraint_field` names the request field that carried the constraint
(``response_format``, a grammar field, or ``none``); a configured constraint that no field
carried (``auto`` that found none, a free-text format under ``json_schema``) is counted as
"constraint not applied" in the run summary.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from coopeval.agents.grammar import gbnf_for
from coopeval.decisions.formats import AnswerFormat, TextAnswerFormat
from coopeval.decisions.schema import check_enforced

__all__ = [
    "DEFAULT_GRAMMAR_FIELD",
    "GRAMMAR_FIELDS",
    "MODES",
    "PROBE_PROMPT",
    "RESPONSE_FORMAT_FIELD",
    "StructuredOutputError",
    "check_options",
    "constraint_field",
    "probe_passed",
    "probe_request",
    "resolve_mode",
    "structured_output_kwargs",
    "unwrap_reasoning",
]

MODES = ("none", "json_schema", "grammar", "auto")
"""Values of ``params.structured_output``."""

GRAMMAR_FIELDS = ("grammar", "structured_outputs.grammar", "guided_grammar")
"""Body fields servers read a GBNF grammar from (dots nest: ``structured_outputs.grammar`` is
``{"structured_outputs": {"grammar": …}}``): llama-server, vLLM ≥ 0.12, vLLM < 0.12."""

DEFAULT_GRAMMAR_FIELD = "grammar"

RESPONSE_FORMAT_FIELD = "response_format"
"""The request field of the ``json_schema`` mode (recorded per call in ``llm_calls.structured_field``)."""

log = logging.getLogger(__name__)

PROBE_PROMPT = "Reply with the single word hello."
"""The prompt of every probe: no answer format admits the word."""
_PROBE_ANSWER = {"probe": "zq-4817"}
_PROBE_TEXT = json.dumps(_PROBE_ANSWER)


class StructuredOutputError(RuntimeError):
    """The server did not apply the configured constraint (the probe's answer was free text)."""


def check_options(mode: Any, grammar_field: Any) -> None:
    """Validate the two agent options.

    Raises
    ------
    ValueError
        Naming ``params.structured_output`` or ``params.grammar_field`` and the allowed values.
    """
    if mode not in MODES:
        raise ValueError(f"params.structured_output is {mode!r}; use one of {list(MODES)}")
    if grammar_field not in GRAMMAR_FIELDS:
        raise ValueError(f"params.grammar_field is {grammar_field!r}; use one of {list(GRAMMAR_FIELDS)}")


def _nest(field: str, value: Any) -> dict[str, Any]:
    """``"a.b", v`` → ``{"a": {"b": v}}``."""
    head, _, rest = field.partition(".")
    return {head: _nest(rest, value) if rest else value}


def _response_format(name: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema), "strict": True}}


def structured_output_kwargs(
    mode: str,
    fmt: AnswerFormat,
    style: str,
    max_reasoning_chars: int,
    grammar_field: str = DEFAULT_GRAMMAR_FIELD,
) -> dict[str, Any]:
    """The extra ``litellm.acompletion`` keyword arguments that constrain one decision.

    Parameters
    ----------
    mode:
        ``none``, ``json_schema`` or ``grammar`` (``auto`` must be resolved first).
    fmt:
        The decision's answer format.
    style:
        ``CoT`` or ``IO``; CoT keeps a reasoning part of at most ``max_reasoning_chars``.
    grammar_field:
        One of :data:`GRAMMAR_FIELDS` (``grammar`` mode only).

    Returns
    -------
    dict
        ``{}`` for ``none`` (and for ``json_schema`` with a format that has no schema, e.g. a
        free-text format); ``{"response_format": …}`` for ``json_schema``;
        ``{"extra_body": {<field>: <GBNF>}}`` for ``grammar``.

    Raises
    ------
    ValueError
        ``auto`` or an unknown mode; a format schema with a keyword the converter does not
        enforce (:func:`coopeval.decisions.schema.check_enforced`).
    """
    if mode == "none":
        return {}
    if mode == "grammar":
        return {"extra_body": _nest(grammar_field, gbnf_for(fmt, style, max_reasoning_chars))}
    if mode == "json_schema":
        schema = None if isinstance(fmt, TextAnswerFormat) else fmt.json_schema()
        if schema is None:
            return {}
        check_enforced(schema, f"the answer format {fmt.kind!r}")
        if style == "CoT" and not isinstance(fmt, TextAnswerFormat):
            schema = {
                "type": "object",
                "properties": {
                    "reasoning": {"type": "string", "maxLength": max_reasoning_chars},
                    "answer": schema,
                },
                "required": ["reasoning", "answer"],
                "additionalProperties": False,
            }
        return {"response_format": _response_format(str(fmt.kind), schema)}
    if mode == "auto":
        raise ValueError("structured_output auto is resolved by the probe: await agent.prepare() before the first call")
    raise ValueError(f"structured output mode {mode!r}; use one of {list(MODES)}")


def unwrap_reasoning(text: str) -> str:
    """A CoT ``json_schema`` reply ``{"reasoning": r, "answer": {…}}`` → ``r + "\\n" + {…}``.

    Any other text is returned unchanged (the parser then judges it as it is).
    """
    try:
        obj = json.loads(text)
    except ValueError:
        return text
    if (
        isinstance(obj, dict)
        and set(obj) == {"reasoning", "answer"}
        and isinstance(obj["reasoning"], str)
        and isinstance(obj["answer"], dict)
    ):
        return obj["reasoning"].strip() + "\n" + json.dumps(obj["answer"], ensure_ascii=False)
    return text


def probe_request(mode: str, grammar_field: str = DEFAULT_GRAMMAR_FIELD) -> dict[str, Any]:
    """Keyword arguments (without ``model``) of the probe of ``mode`` (``json_schema`` or ``grammar``).

    The prompt asks for the word "hello"; the constraint admits only ``{"probe": "zq-4817"}``.
    """
    kwargs: dict[str, Any] = {
        "messages": [{"role": "user", "content": PROBE_PROMPT}],
        "temperature": 0.0,
        "max_tokens": 24,
    }
    if mode == "json_schema":
        schema = {
            "type": "object",
            "properties": {"probe": {"type": "string", "enum": [_PROBE_ANSWER["probe"]]}},
            "required": ["probe"],
            "additionalProperties": False,
        }
        kwargs["response_format"] = _response_format("probe", schema)
    elif mode == "grammar":
        gbnf = "root ::= " + json.dumps(_PROBE_TEXT) + "\n"  # a JSON string is a GBNF literal here
        kwargs["extra_body"] = _nest(grammar_field, gbnf)
    else:
        raise ValueError(f"no probe for structured output mode {mode!r}")
    return kwargs


def probe_passed(text: str) -> bool:
    """Whether the probe's reply is the one string the constraint admits (spacing aside)."""
    try:
        return bool(json.loads(text) == _PROBE_ANSWER)
    except ValueError:
        return False


async def resolve_mode(
    mode: str,
    send: Callable[[str], Awaitable[str]],
    supports_response_schema: bool,
    agent: str,
) -> str:
    """Probe the constraint of ``mode`` once and return the mode to use (``auto`` resolved).

    Parameters
    ----------
    mode:
        The configured mode; ``none`` is returned at once (no probe).
    send:
        Sends the probe of a mode (:func:`probe_request`) and returns the reply text.
    supports_response_schema:
        litellm's capability data for the model (``auto`` then tries ``json_schema`` only).
    agent:
        The agent's name, for messages.

    Raises
    ------
    StructuredOutputError
        An explicit ``json_schema`` or ``grammar`` whose probe reply was not the constrained
        string: the server ignored the field or decoded unconstrained.
    """
    if mode == "none":
        return mode
    if mode != "auto":
        text = await send(mode)
        if not probe_passed(text):
            raise StructuredOutputError(
                f"agent {agent}: structured_output = {mode} is not applied by the server (the probe, "
                f"which admits only {_PROBE_TEXT}, was answered {text[:80]!r}); the server ignores "
                "the field or could not compile it. Use a server that supports it, set "
                "params.grammar_field for this server, or choose another params.structured_output"
            )
        return mode
    for candidate in ("json_schema",) if supports_response_schema else ("grammar", "json_schema"):
        if probe_passed(await send(candidate)):
            log.info("agent %s: structured_output auto -> %s", agent, candidate)
            return candidate
    log.warning("agent %s: structured_output auto found no constraint the server applies; sending none", agent)
    return "none"


def constraint_field(mode: str, fmt: AnswerFormat, grammar_field: str = DEFAULT_GRAMMAR_FIELD) -> str:
    """The request field that carries the constraint of one call of ``fmt`` under ``mode``.

    ``response_format`` (``json_schema`` with a format that has a schema), the grammar field
    (``grammar``), else ``none`` (mode ``none``, ``auto`` that found no constraint, or a
    free-text format under ``json_schema``, which no schema describes).
    """
    if mode == "grammar":
        return grammar_field
    if mode == "json_schema" and not isinstance(fmt, TextAnswerFormat) and fmt.json_schema() is not None:
        return RESPONSE_FORMAT_FIELD
    return "none"
