"""A toy model provider defined outside ``src/``: the proof that a plugin adds a provider with
no edit to any other file (the provider recipe in CONTRIBUTING.md).

Importing the module registers the entry with :func:`coopeval.agents.registry.register_provider`.
Its models are ``toy/first`` and ``toy/last``: an LLM stand-in (it reads the request, not a
bot's structured state) that puts 100 % on the first (``toy/first``) or last (``toy/last``) key
of every answer format, so in a normal-form game it always plays ``A0`` or the last action.
It has no transport: nothing is cached and any exception is fatal.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.agents.provider import Provider
from coopeval.agents.registry import register_provider

TOY_MODELS = ("first", "last")
"""The model names after ``toy/``."""


class ToyAgent:
    """Answers every request with all weight on one key of its answer format."""

    def __init__(self, model: str, style: str, label: str | None) -> None:
        self.model = model
        self.style = style
        self.name = f"{label or model}({style})"
        self.params: Mapping[str, Any] = {}
        self.cacheable = False

    async def generate(self, request: DecisionRequest) -> Reply:
        """``{"<key>": 100, others: 0}`` with the first or last key of the request's format."""
        keys = request.answer_format.keys
        chosen = keys[0] if self.model.endswith("/first") else keys[-1]
        answer = {k: 100 if k == chosen else 0 for k in keys}
        return Reply(text=json.dumps(answer), prompt_tokens=10, completion_tokens=5, model_resolved=self.model)

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """No transport: every exception is a bug."""
        return ErrorClass.FATAL


def make_toy(spec: Mapping[str, Any]) -> ToyAgent:
    """The agent of a config entry (``model: toy/first`` or ``toy/last``, ``style``, ``label``)."""
    return ToyAgent(str(spec["model"]), str(spec.get("style", "IO")), spec.get("label"))


TOY = Provider(name="toy", prefix="toy/", factory=make_toy, model_kind="toy model", known_label="toy models",
               known_models=lambda: TOY_MODELS)
"""``toy/first`` and ``toy/last``."""

register_provider(TOY)
