"""A deterministic mock model: an LLM stand-in for tests and dry runs (no network, no weights).

:class:`MockLLM` behaves like a cacheable LLM agent, but its answer is a pure function of
everything the response cache keys on: the model id, the full message list, the sampling
parameters and the attempt number. Two mock models that differ in any one of these give
different answers to the same request, so a cache key that forgot one of them replays a wrong
answer and a test can see it (issue 9, item 7).

The answer is a valid JSON object for every decision kind: a distribution over the action
tokens (integer percents summing to 100, drawn from the digest), approval votes and a
signature from digest bits, the enforcing design offered in the state for designs, and a
judge answer naming one label. ``invalid_attempts`` makes the first attempts answer a fixed
non-JSON text (exercising re-asks); ``fail_after`` raises :class:`MockLLM.Interrupted` after
that many calls (a job killed mid-cell).
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Mapping
from typing import Any

from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.agents.provider import Provider
from coopeval.decisions.formats import AnswerFormat, DecisionKind

INVALID_ANSWER = "I would rather not say."
"""The fixed text of an invalid attempt (no JSON object), identical on every such attempt."""


def mock_digest(model: str, messages: Any, params: Mapping[str, Any], attempt: int) -> bytes:
    """sha256 over canonical JSON of the four inputs the answer depends on."""
    payload = {"model": model, "messages": [dict(m) for m in messages], "params": dict(params), "attempt": attempt}
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).digest()


def mock_answer(fmt: AnswerFormat, digest: bytes, state: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON answer of ``fmt`` chosen by ``digest`` (see the module docstring)."""
    if fmt.kind == DecisionKind.ACTION:
        first = digest[0] % 101
        answer = dict.fromkeys(fmt.keys, 0)
        answer[fmt.keys[0]] = first
        answer[fmt.keys[-1]] += 100 - first
        return answer
    if fmt.kind in (DecisionKind.MEDIATOR_VOTE, DecisionKind.CONTRACT_VOTE):
        return {k: bool(digest[1 + i % 31] & 1) for i, k in enumerate(fmt.keys)}
    if fmt.kind == DecisionKind.SIGN:
        return {"sign": bool(digest[1] & 1)}
    if fmt.kind in (DecisionKind.MEDIATOR_DESIGN, DecisionKind.CONTRACT_DESIGN):
        return dict(state["enforcing_design"])
    if fmt.kind == DecisionKind.JUDGE:
        label = fmt.values[digest[0] % len(fmt.values)]
        return {"reasoning": f"mock {digest.hex()[:8]}", "confidence": round(digest[1] / 255, 2), "justification_type": label}
    raise ValueError(f"the mock model cannot answer decision kind {fmt.kind}")


class MockLLM:
    """A cacheable mock model whose answer depends on model, messages, params and attempt.

    Parameters
    ----------
    model:
        The model id (part of the cache key and of the answer), e.g. ``mock/a``.
    style:
        ``"IO"`` or ``"CoT"``; the display name is ``model(style)`` (or ``label(style)``).
    params:
        Sampling parameters (part of the cache key and of the answer).
    invalid_attempts:
        Attempts ``0 .. invalid_attempts - 1`` of every decision answer :data:`INVALID_ANSWER`.
    fail_after:
        Raise :class:`MockLLM.Interrupted` on the call after this many calls.

    ``calls`` counts calls actually made (cache hits never reach the agent). The copies made
    for seats (:meth:`for_seat`) share the counter and the ``fail_after`` budget: they stand for
    one model endpoint, the way a job killed mid-cell stops every seat at once.
    """

    class Interrupted(Exception):
        """Raised after ``fail_after`` calls: simulates a job killed mid-cell."""

    def __init__(
        self,
        model: str = "mock/model",
        style: str = "IO",
        params: Mapping[str, Any] | None = None,
        label: str | None = None,
        invalid_attempts: int = 0,
        fail_after: int | None = None,
    ) -> None:
        self.model = model
        self.style = style
        self.name = f"{label or model}({style})"
        self.params: Mapping[str, Any] = dict(params) if params is not None else {"temperature": 1.0}
        self.cacheable = True
        self.invalid_attempts = invalid_attempts
        self.fail_after = fail_after
        self._calls = [0]  # one counter shared with the seat copies

    @property
    def calls(self) -> int:
        """Calls made by this agent and its seat copies."""
        return self._calls[0]

    def for_seat(self) -> MockLLM:
        """A copy for one seat (:func:`coopeval.agents.seats.seat_agent`) sharing the call counter."""
        return copy.copy(self)

    async def generate(self, request: DecisionRequest) -> Reply:
        """Answer deterministically from (model, messages, params, attempt)."""
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise MockLLM.Interrupted(f"killed after {self.calls} calls")
        self._calls[0] += 1
        attempt = int(request.state.get("attempt", 0))
        if attempt < self.invalid_attempts:
            return Reply(text=INVALID_ANSWER, prompt_tokens=100, completion_tokens=6, model_resolved=self.model)
        digest = mock_digest(self.model, request.messages, self.params, attempt)
        answer = mock_answer(request.answer_format, digest, request.state)
        return Reply(
            text=f"Reasoning... {json.dumps(answer)}", prompt_tokens=100, completion_tokens=10, model_resolved=self.model
        )

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """Every exception is fatal (the mock makes no transport calls)."""
        return ErrorClass.FATAL


def make_mock(spec: Mapping[str, Any]) -> MockLLM:
    """The mock agent of a config entry (``model`` ``mock/<name>``, ``style``, ``params``)."""
    return MockLLM(model=str(spec["model"]), style=str(spec.get("style", "IO")), params=dict(spec.get("params") or {}))


MOCK = Provider(name="mock", prefix="mock/", factory=make_mock)
"""``mock/<any name>``: the deterministic mock model (reads no options, no key, never retried)."""
