"""Test doubles that are not in the package: a scripted judge and table builders.

The deterministic mock model lives in the package (:class:`coopeval.agents.mock.MockLLM`);
scripted strategy bots are :mod:`coopeval.agents.bots`. What stays here is test-only: a judge
answering from a script, a judge reply builder and a ``decisions`` frame builder.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.decisions.formats import DecisionKind


class ScriptedJudge:
    """Answers judge requests from a script.

    ``script`` maps a marker (a substring of the judged response) to the replies of successive
    attempts; the last reply repeats if there are more attempts. Every prompt is recorded in
    ``prompts`` and every call counted in ``calls``.
    """

    def __init__(
        self, script: Mapping[str, Sequence[str]], name: str = "fake/judge", style: str = "IO"
    ) -> None:
        self.script = dict(script)
        self.model = name
        self.style = style
        self.name = f"{name}({style})"
        self.params: dict[str, Any] = {"temperature": 0}
        self.cacheable = True
        self.calls = 0
        self.prompts: list[str] = []

    async def generate(self, request: DecisionRequest) -> Reply:
        assert request.answer_format.kind is DecisionKind.JUDGE
        self.calls += 1
        text = request.messages[-1]["content"]
        self.prompts.append(text)
        attempt = int(request.state.get("attempt", 0))
        for marker, replies in self.script.items():
            if marker in text:
                return Reply(
                    text=replies[min(attempt, len(replies) - 1)],
                    prompt_tokens=700,
                    completion_tokens=40,
                    cost_usd=0.001,
                    model_resolved=self.model,
                )
        raise AssertionError(f"no scripted reply for prompt: {text[-300:]}")

    def classify_error(self, exc: BaseException) -> ErrorClass:
        return ErrorClass.FATAL


def judge_answer(labels: str, confidence: Any = 0.8, reasoning: str = "Weighs own payoff.") -> str:
    """A judge reply under our contract (docs/protocol/design-checks.md#what-is-judged)."""
    import json

    return json.dumps(
        {"reasoning": reasoning, "confidence": confidence, "justification_type": labels}
    )


def decision_rows(rows: Sequence[Mapping[str, Any]]) -> Any:
    """A ``decisions`` frame from partial rows (defaults: a valid CoT action of PD, NoMechanism)."""
    import polars as pl

    from coopeval.core.schemas import conform

    defaults = {
        "cell_id": "cell00000001",
        "source": "ours",
        "run": "r1",
        "mechanism": "NoMechanism",
        "game": "PrisonersDilemma",
        "matchup_id": "x(CoT)|bot/tit-for-tat",
        "round": 1,
        "seat": 1,
        "agent": "x(CoT)",
        "kind": "action",
        "status": "ok",
        "parsed": '{"A0": 50, "A1": 50}',
        "n_attempts": 1,
        "error": "",
    }
    full = [{**defaults, "decision_id": f"d{i:03d}", **row} for i, row in enumerate(rows)]
    return conform("decisions", pl.DataFrame(full, infer_schema_length=None))
