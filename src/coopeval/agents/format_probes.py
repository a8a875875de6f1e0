"""The probe of one answer format's own constraint, sent before the first call that carries it.

A simple schema compiling (:func:`coopeval.agents.structured.probe_request`) says nothing of
the formats' own: llama-server dropped the judge's ``pattern`` and numbers' bounds with a 200
(issue 25, kind 1). So every distinct constraint a run sends (the exact ``response_format`` or
grammar of :func:`~coopeval.agents.structured.structured_output_kwargs`) is sent once with the
prompt "Reply with the single word hello.", which no answer format admits: the reply must be an
answer the constraint admits (:func:`format_probe_passed`), else the job stops before any call
of that format with :class:`~coopeval.agents.structured.StructuredOutputError`. Passing replies
are cached (a rerun replays them).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from coopeval.agents.grammar import max_tokens_for
from coopeval.agents.protocol import Reply
from coopeval.agents.structured import PROBE_PROMPT, StructuredOutputError
from coopeval.cache.response_cache import ResponseCache
from coopeval.decisions.formats import AnswerFormat

__all__ = ["format_probe_passed", "format_probe_request", "probe_constraint", "probe_max_tokens", "warn_unconstrained"]

SCHEMA_PROBE_TOKENS = 200
"""``max_tokens`` of a JSON Schema format probe when the agent sets none (a reply cut off there
still passes if it opened the schema's object)."""

log = logging.getLogger(__name__)


def probe_max_tokens(mode: str, fmt: AnswerFormat, style: str, max_reasoning_chars: int, max_tokens: Any) -> int:
    """The probe's ``max_tokens``: under ``grammar`` the grammar's longest string
    (:func:`~coopeval.agents.grammar.max_tokens_for`, so an applied grammar is never cut off);
    under ``json_schema`` the agent's ``max_tokens`` or :data:`SCHEMA_PROBE_TOKENS`."""
    if mode == "grammar":
        return max_tokens_for(fmt, style, max_reasoning_chars)
    return int(max_tokens or SCHEMA_PROBE_TOKENS)


def warn_unconstrained(agent: str, fmt: AnswerFormat) -> None:
    """Log that ``fmt`` (free text) goes unconstrained under ``json_schema`` (once per agent and kind)."""
    log.warning(
        "agent %s: the answer format %r is free text, which no JSON Schema describes: its calls go "
        "unconstrained and count as 'constraint not applied' in the run summary (structured_output: "
        "grammar constrains them)",
        agent,
        str(fmt.kind),
    )


def format_probe_request(constraint: Mapping[str, Any], max_tokens: int) -> dict[str, Any]:
    """Keyword arguments (without ``model``) of the probe of one format's constraint.

    ``constraint`` is what :func:`structured_output_kwargs` returns for the format (sent as it
    is); the prompt asks for the word "hello", which no answer format admits, so an answer the
    constraint admits shows that the server compiled and applied it.
    """
    return {
        "messages": [{"role": "user", "content": PROBE_PROMPT}],
        "temperature": 0.0,
        "max_tokens": max_tokens,
        **constraint,
    }


def format_probe_passed(text: str, finish_reason: str, fmt: AnswerFormat, constraint: Mapping[str, Any]) -> bool:
    """Whether the probe reply is one the constraint admits.

    Under a grammar the reply must parse as an answer to ``fmt`` (the probe's ``max_tokens``
    covers the grammar's longest string, so a cut-off reply fails) and, for a format with a
    ``marker`` its grammar forces (the evolution strategy's ``My strategy will be`` /
    ``Strategy:``, whose parser accepts any text), contain it. Under a JSON Schema the reply
    must validate against the schema sent; a reply cut off at ``max_tokens`` (a string the
    schema leaves unbounded) passes if it opens the object with one of the schema's keys, which
    free text does not.
    """
    from coopeval.decisions.errors import AnswerError

    if "response_format" not in constraint:
        marker = getattr(fmt, "marker", None)
        if isinstance(marker, str) and marker not in text:
            return False
        try:
            fmt.parse(text)
        except AnswerError:
            return False
        return True
    import jsonschema

    schema = constraint["response_format"]["json_schema"]["schema"]
    if finish_reason == "length":
        opened = re.match(r'\s*\{\s*"([^"\\]*)"', text)
        return opened is not None and opened.group(1) in schema.get("properties", {})
    try:
        obj = json.loads(text)
    except ValueError:
        return False
    return bool(jsonschema.Draft202012Validator(schema).is_valid(obj))


async def probe_constraint(
    send: Callable[[dict[str, Any]], Awaitable[Any]],
    key: str,
    cache: ResponseCache | None,
    fmt: AnswerFormat,
    constraint: Mapping[str, Any],
    max_tokens: int,
    what: str,
) -> None:
    """Probe ``constraint`` (the request kwargs of ``fmt`` under one mode) once.

    Parameters
    ----------
    send:
        Sends the request kwargs (:func:`format_probe_request`) and returns litellm's response.
    key:
        The response-cache key of this probe (a passing reply is stored there and replayed).
    what:
        ``"agent <name>: the <mode> constraint"``, for the message.

    Raises
    ------
    StructuredOutputError
        The reply is not one the constraint admits: the server ignored or could not compile it.
    """
    cached = cache.get(key) if cache is not None else None
    if cached is not None:
        reply = Reply.from_json(cached)
        text, finish = reply.text, reply.finish_reason
    else:
        response = await send(format_probe_request(constraint, max_tokens))
        choice = response.choices[0]
        text = getattr(choice.message, "content", None) or ""
        finish = str(getattr(choice, "finish_reason", "") or "")
    if not format_probe_passed(text, finish, fmt, constraint):
        raise StructuredOutputError(
            f"{what} of the answer format '{fmt.kind}' is not applied by the server (asked to say "
            f"hello under it, the model answered {text[:80]!r}, finish_reason {finish!r}); the server "
            "ignores or could not compile it (look for a grammar or schema warning in its log). No "
            "decision of this format was sent; `coopeval schemas` prints the constraint"
        )
    if cache is not None and cached is None:
        cache.set(key, Reply(text=text, finish_reason=finish).to_json())
