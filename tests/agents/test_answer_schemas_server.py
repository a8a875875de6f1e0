"""Every schema and grammar ``coopeval schemas`` prints compiles on the pinned llama-server, and
its constraint is forced (issue 25, kind 1; docs/structured-outputs.md).

Against a real llama-server (the ``xllamacpp`` wheel, SmolLM2, 127.0.0.1) through litellm:

* **compiles**: each JSON Schema (``response_format``) and each GBNF grammar (body field
  ``grammar``), IO and CoT, is sent with ``max_tokens: 1``; the server must answer 200 and its
  log must hold no grammar or schema conversion problem (a dropped keyword is decoded
  unconstrained with a 200: only the log shows it). The log check is itself checked on a schema
  the converter is known to drop (a ``pattern`` with an escape, the judge's old schema);
* **forced**: per answer format, the model is told to repeat a canary object that breaks the
  constraint everywhere it can (an out-of-enum string, an integer past the bound, a number off
  the enum grid, a non-boolean); the reply must be one the constraint admits. The canary is
  built from the schema itself, so a new format is covered without a new test.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from coopeval.decisions.errors import AnswerError
from coopeval.decisions.formats import AnswerFormat, TextAnswerFormat
from coopeval.pipeline.answer_schemas import answer_formats, kinds

pytest.importorskip("xllamacpp")
os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")  # as coopeval imports it: no cost-map fetch
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("litellm")
from tests.agents.llama_server import running_server

pytestmark = pytest.mark.local_llm

CONVERSION_PROBLEM = re.compile(r"JSON schema conversion|accepting any string|not supported|error parsing grammar|failed to parse grammar")
"""A server log line reporting a schema or grammar it could not (fully) convert or parse; e.g.
``WARNING: JSON schema conversion was incomplete: pattern … is not supported (unsupported
escape: \\ ), accepting any string`` (then the reply is a 200, decoded unconstrained) or
``parse: error parsing grammar``."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    log = tmp_path_factory.mktemp("llama") / "server.log"
    with running_server(log) as base:
        yield base, log


@pytest.fixture(autouse=True)
def _openai_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local")  # the openai client wants one; the server checks none


def _send(api_base: str, content: str, max_tokens: int, **constraint: Any) -> Any:
    import litellm

    return asyncio.run(
        litellm.acompletion(
            model="openai/smollm2",
            api_base=api_base,
            messages=[{"role": "user", "content": content}],
            temperature=0.0,
            max_tokens=max_tokens,
            num_retries=0,
            **constraint,
        )
    )


def _response_format(kind: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": kind, "schema": schema, "strict": True}}


def _log_problems(log: Path, start: int) -> list[str]:
    lines = log.read_bytes()[start:].decode("utf-8", "replace").splitlines()
    return [line for line in lines if CONVERSION_PROBLEM.search(line)]


def _constraints() -> list[tuple[str, str, str, Any]]:
    """(kind, style, mode, schema or grammar) of everything ``coopeval schemas`` prints."""
    out: list[tuple[str, str, str, Any]] = []
    for item in kinds():
        for fmt in item["formats"]:
            for style in ("IO", "CoT"):
                if fmt["json_schema"][style] is not None:
                    out.append((item["kind"], style, "json_schema", fmt["json_schema"][style]))
                out.append((item["kind"], style, "grammar", fmt["grammar"][style]))
    return out


def test_the_log_check_sees_a_schema_the_converter_drops(server: tuple[str, Path]) -> None:
    api_base, log = server
    start = log.stat().st_size
    from coopeval.decisions import load_taxonomy

    # the judge's schema before issue 25: its labels as a regex, spaces escaped by re.escape
    label = "(" + "|".join(re.escape(v) for v in (*load_taxonomy().answer_format().values, "Other")) + ")"
    dropped = {
        "type": "object",
        "properties": {"justification_type": {"type": "string", "pattern": f"^{label}(, {label}){{0,2}}$"}},
        "required": ["justification_type"],
        "additionalProperties": False,
    }
    _send(api_base, "Say hello.", 1, response_format=_response_format("judge", dropped))
    assert _log_problems(log, start), log.read_text()[-2000:]


def test_every_printed_schema_and_grammar_compiles_without_a_conversion_warning(server: tuple[str, Path]) -> None:
    api_base, log = server
    start = log.stat().st_size
    sent = 0
    for kind, style, mode, constraint in _constraints():
        extra = {"response_format": _response_format(kind, constraint)} if mode == "json_schema" else {"extra_body": {"grammar": constraint}}
        reply = _send(api_base, "Say hello.", 1, **extra)
        assert reply.choices, (kind, style, mode)
        sent += 1
    assert sent == len(_constraints()) > 100
    assert _log_problems(log, start) == []


def _canary_value(schema: dict[str, Any]) -> Any:
    """A value the schema refuses wherever it bounds one (a string it leaves free stays free)."""
    kind = schema["type"]
    if kind == "object":
        return {key: _canary_value(sub) for key, sub in schema["properties"].items()}
    if kind == "boolean":
        return "maybe"
    if "enum" in schema:
        return 987654.5 if kind in ("number", "integer") else "Zebra-not-listed"
    if kind == "integer":
        return int(schema.get("maximum", 10**6)) + 99999
    if kind == "string":
        return "x" * (int(schema["maxLength"]) + 10) if "maxLength" in schema else "fine"
    return 987654.5


def _text_canary(fmt: TextAnswerFormat) -> str:
    return "Justification: none. Answer: 987654" if fmt.kind == "donation" else ""


def _canary_formats() -> list[AnswerFormat]:
    """The first format of each kind ``coopeval schemas`` lists, and every free-text format."""
    chosen: dict[Any, AnswerFormat] = {}
    for entry in answer_formats():
        key = entry.fmt if isinstance(entry.fmt, TextAnswerFormat) else str(entry.fmt.kind)
        chosen.setdefault(key, entry.fmt)
    return list(chosen.values())


@pytest.mark.parametrize("fmt", _canary_formats(), ids=lambda f: f"{f.kind}")
@pytest.mark.parametrize("mode", ["json_schema", "grammar"])
def test_the_constraint_forces_an_answer_the_canary_breaks(server: tuple[str, Path], fmt: AnswerFormat, mode: str) -> None:
    from coopeval.agents.grammar import gbnf_for, max_tokens_for
    from coopeval.agents.structured import structured_output_kwargs

    api_base, _ = server
    if isinstance(fmt, TextAnswerFormat):
        if mode == "json_schema":
            pytest.skip("a free-text format has no JSON Schema (counted as not applied per call)")
        canary = _text_canary(fmt)
    else:
        schema = fmt.json_schema()
        assert schema is not None
        obj = _canary_value(schema)
        # the canary breaks the schema; a schema that bounds nothing (one free string: the gossip
        # reflection) has no canary, and the plain "hello" must be forced into its object
        breaks = not jsonschema.Draft202012Validator(schema).is_valid(obj)
        assert breaks or all(sub == {"type": "string"} for sub in schema["properties"].values())
        canary = json.dumps(obj) if breaks else ""
    prompt = f"Repeat exactly, and nothing else: {canary}" if canary else "Reply with the single word hello."
    if mode == "grammar":
        reply = _send(api_base, prompt, max_tokens_for(fmt, "IO"), extra_body={"grammar": gbnf_for(fmt, "IO")})
        text = reply.choices[0].message.content
        marker = getattr(fmt, "marker", None)  # a strategy parses from any text: its forced marker shows the grammar
        assert marker is None or marker in text, text
        try:
            fmt.parse(text)
        except AnswerError as exc:
            pytest.fail(f"{fmt.kind}: the grammar let through {text!r} ({exc})")
        return
    reply = _send(api_base, prompt, 400, **structured_output_kwargs("json_schema", fmt, "IO", 0))
    choice = reply.choices[0]
    text = choice.message.content
    if choice.finish_reason == "length":  # a string the schema leaves unbounded ran on: it opened the object
        opened = re.match(r'\s*\{\s*"([^"]*)"', text)
        assert opened is not None and opened.group(1) in schema["properties"], text
        return
    jsonschema.validate(json.loads(text), fmt.json_schema())
