"""A deterministic, cacheable stand-in LLM answering every gossip format."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.studies.gossip.formats import (
    AmountFormat,
    ChoiceFormat,
    GossipFormat,
    ReflectionFormat,
    SignalFormat,
)


class FakeGossipLLM:
    """Answers are a pure function of the messages; counts real calls; raises ``Interrupted``
    after ``fail_after`` calls (a job killed mid-run); ``bad`` answers garbage always,
    ``bad_rounds`` only to the action (choice) decisions of those global rounds."""

    class Interrupted(Exception):
        pass

    def __init__(self, fail_after: int | None = None, bad: bool = False, bad_rounds: frozenset[int] = frozenset()) -> None:
        self.model = "fake/gossip"
        self.style = "IO"
        self.name = "fake/gossip(IO)"
        self.params: dict[str, Any] = {"temperature": 0.0}
        self.cacheable = True
        self.calls = 0
        self.fail_after = fail_after
        self.bad = bad
        self.bad_rounds = bad_rounds

    async def generate(self, request: DecisionRequest) -> Reply:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise FakeGossipLLM.Interrupted(f"killed after {self.calls} calls")
        self.calls += 1
        fmt: Any = request.answer_format
        if self.bad or (isinstance(fmt, ChoiceFormat) and request.position.get("round") in self.bad_rounds):
            return Reply(text='{"justification": "x", "donor_action": "perhaps"}')
        digest = hashlib.sha256(json.dumps(list(request.messages), sort_keys=True).encode()).digest()
        if isinstance(fmt, ChoiceFormat):
            answer = fmt.bot_answer(fmt.options[digest[0] % len(fmt.options)], "because")
        elif isinstance(fmt, GossipFormat):
            answer = fmt.bot_answer(fmt.tones[digest[0] % len(fmt.tones)], "A message.", "because")
        elif isinstance(fmt, SignalFormat):
            answer = fmt.bot_answer(digest[0] % 2)
        elif isinstance(fmt, ReflectionFormat):
            answer = fmt.bot_answer("I should weigh my reputation.")
        elif isinstance(fmt, AmountFormat):
            answer = fmt.bot_answer(fmt.high * (digest[0] % 5) / 4)
        else:
            raise AssertionError(fmt)
        return Reply(text="Thinking. " + json.dumps(answer), prompt_tokens=50, completion_tokens=10)

    def for_seat(self) -> FakeGossipLLM:
        """Seats share this fake: it stands for one model endpoint whose calls the tests count
        (it answers from the messages only, so sharing leaks nothing)."""
        return self

    def classify_error(self, exc: BaseException) -> ErrorClass:
        return ErrorClass.FATAL
