"""Test doubles shared by several test modules."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.decisions.formats import DecisionKind


class FakeLLM:
    """A cacheable stand-in for an LLM: its answer is a pure function of the messages.

    Counts real calls in ``calls``; raises ``Interrupted`` after ``fail_after`` calls to
    simulate a job killed mid-cell.
    """

    class Interrupted(Exception):
        pass

    def __init__(self, name: str = "fake/model", style: str = "IO", fail_after: int | None = None) -> None:
        self.model = name
        self.style = style
        self.name = f"{name}({style})"
        self.params: dict[str, Any] = {"temperature": 1.0}
        self.cacheable = True
        self.calls = 0
        self.fail_after = fail_after

    async def generate(self, request: DecisionRequest) -> Reply:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise FakeLLM.Interrupted(f"killed after {self.calls} calls")
        self.calls += 1
        digest = hashlib.sha256(json.dumps(list(request.messages), sort_keys=True).encode()).digest()
        keys = request.answer_format.keys
        assert request.answer_format.kind == DecisionKind.ACTION
        first = digest[0] % 101
        answer = {k: 0 for k in keys}
        answer[keys[0]] = first
        answer[keys[-1]] += 100 - first
        return Reply(text=f"Reasoning... {json.dumps(answer)}", prompt_tokens=100, completion_tokens=10)

    def classify_error(self, exc: BaseException) -> ErrorClass:
        return ErrorClass.FATAL
