"""A gossip cell's id hashes exactly the templates it can render (issue 20): the declaration
(:func:`cell_templates`) is what the cells of each testbed × condition render, no more and no
less, and rendering an undeclared template fails the cell."""

from __future__ import annotations

import warnings
from collections import defaultdict
from typing import Any

import pytest

from coopeval.core.prompts import PromptLibrary, UndeclaredTemplateError
from coopeval.studies.base import PlayInputs
from coopeval.studies.gossip.study import PROMPTS_DIR as GOSSIP_PROMPTS
from coopeval.studies.gossip.study import GossipStudy
from coopeval.studies.gossip.templates import spec_templates
from coopeval.studies.gossip.testbeds import REGISTRY, TESTBEDS
from tests.studies.gossip.fakes import FakeGossipLLM

STUDY = GossipStudy()
SMALL = {"donation": {"n": 4}, "pd": {"n": 4}, "trust": {"n": 4}, "market": {"n_sellers": 3, "n_buyers": 3}}
CONDITIONS = [
    "align", "no_gossip", "no_equilibrium", "no_reflection", "binary_no_convention", "binary_convention", "tone_hidden",
    "finite", "infinite", "reflection_call", "max", "max_no_gossip", "collusive", "collusive_llm_messages",
]
MODELS = [{"model": "bot/always-cooperate"}, {"model": "bot/always-defect"}, {"model": "bot/discriminator"}, {"model": "fake/gossip"}]


@pytest.mark.parametrize("testbed", TESTBEDS)
def test_declared_templates_are_the_rendered_ones(testbed: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: set[str] = set()
    original = PromptLibrary.render

    def recording(self: PromptLibrary, name: str, **values: object) -> str:
        if self.directory.resolve() == GOSSIP_PROMPTS.resolve():  # error and bot texts are in every gossip cell id
            rendered.add(name)
        return original(self, name, **values)

    monkeypatch.setattr(PromptLibrary, "render", recording)
    section: dict[str, Any] = {
        "testbeds": [testbed], "conditions": CONDITIONS if REGISTRY[testbed].attackers else [c for c in CONDITIONS if "max" not in c and "collusive" not in c], "models": MODELS, "testbed_params": SMALL, "memory_cap": 1, "log_cap": 1,
    }
    declared: dict[str, set[str]] = defaultdict(set)
    played: dict[str, set[str]] = defaultdict(set)
    library = STUDY.prompt_library()
    for cell in STUDY.cells({"seed": 5, "gossip": section}):
        rendered.clear()
        llm = FakeGossipLLM()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            STUDY.play(cell, PlayInputs(None, library), agents={llm.name: llm})
        condition = cell["condition"]["name"]
        declared[condition] |= spec_templates(cell)
        played[condition] |= rendered
    for condition in declared:
        assert played[condition] == declared[condition], condition


def test_an_undeclared_template_fails_the_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    cell = STUDY.cells({"seed": 5, "gossip": {"conditions": ["no_gossip"], "testbed_params": SMALL}})[0]
    assert "community" not in spec_templates(cell)
    monkeypatch.setattr("coopeval.studies.gossip.study.spec_templates", lambda spec: spec_templates(spec) - {"action"})
    with pytest.raises(UndeclaredTemplateError, match="'action' is rendered but not declared"):
        STUDY.play(cell, PlayInputs(None, STUDY.prompt_library()))
