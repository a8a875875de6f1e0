"""An evolution cell's id hashes exactly the templates it can render (issue 20): the declaration
(:func:`~coopeval.studies.evolution.prompting.prompt_templates`) is what the cells of every
protocol × punishment variant render, no more and no less, and the cell plays with a library
restricted to it."""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from coopeval.core.prompts import PromptLibrary, UndeclaredTemplateError
from coopeval.studies.evolution.prompting import PROMPTS_DIR, TRACE_KINDS, prompt_templates
from coopeval.studies.evolution.settings import EvolutionSettings
from tests.helpers import play_study_cell, study_cells
from tests.studies.evolution.helpers import FakeLLM

SECTION = {
    "protocols": ["vh", "horibe"], "models": [{"model": "fake/llm"}], "n_agents": 4, "generations": 2,
    "variants": ["none", "costly_punishment", "partner_choice"],
    "invasion": {"per_generation": 1, "first_generation": 1}, "matrix": {"per_generation": 1, "first_generation": 1},
}
READ_NOT_RENDERED = {"evo_example_names", *(f"evo_trace_{kind}" for kind in TRACE_KINDS)}
"""Read from the library's texts when the prompts are set up (the trace lines, the example's names)."""


def _cells() -> list[dict[str, Any]]:
    return study_cells("evolution", {"seed": 3, "evolution": SECTION})


def test_declared_templates_are_the_rendered_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    rendered: set[str] = set()
    original = PromptLibrary.render

    def recording(self: PromptLibrary, name: str, /, **values: object) -> str:
        if self.directory.resolve() == PROMPTS_DIR.resolve():
            rendered.add(name)
        return original(self, name, **values)

    monkeypatch.setattr(PromptLibrary, "render", recording)
    long_strategy = "Strategy: " + "give " * 400  # over Horibe's 350 words: the too-long re-ask runs
    for cell in _cells():
        rendered.clear()
        text = long_strategy if cell["protocol"] == "horibe" else "My strategy will be to give half."
        llm = FakeLLM(0.8, strategy=lambda request, text=text: text)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            play_study_cell("evolution", cell, {"fake/llm": llm})
        declared = prompt_templates(EvolutionSettings.from_params(cell["params"]))
        assert declared - rendered == READ_NOT_RENDERED, (cell["protocol"], cell["variant"])


def test_declaration_follows_the_settings() -> None:
    vh = prompt_templates(EvolutionSettings.from_params({"protocol": "vh", "punishment": "costly_punishment"}))
    assert {"evo_question_costly_punishment", "evo_question_units", "evo_advice_scored", "evo_with_scores"} <= vh
    assert not vh & {"evo_advice", "evo_question_percent", "evo_strategy_later_horibe", "evo_strategy_too_long"}
    quiet = prompt_templates(EvolutionSettings.from_params({"protocol": "vh", "show_scores": False, "no_system": True}))
    assert "evo_advice" in quiet and not quiet & {"evo_advice_scored", "evo_system_vh", "evo_rule_none", "evo_rule_observation"}
    horibe = prompt_templates(EvolutionSettings.from_params({"protocol": "horibe", "horibe_observation_unstated": True}))
    assert {"evo_system_horibe", "evo_strategy_too_long", "evo_question_percent", "evo_percent_base_current"} <= horibe
    assert not horibe & {"evo_rule_observation", "evo_example_names", "evo_advice", "evo_question_units"}


def test_a_changed_template_changes_only_the_ids_of_its_users(monkeypatch: pytest.MonkeyPatch) -> None:
    before = {c["cell_id"]: c for c in _cells()}
    original = PromptLibrary.__init__

    def editing(self: PromptLibrary, directory: Any, allowed: Any = None) -> None:
        original(self, directory, allowed)
        if "evo_question_partner_choice" in self.templates:
            self.templates["evo_question_partner_choice"] += " (edited)"

    monkeypatch.setattr(PromptLibrary, "__init__", editing)
    after = _cells()
    changed = {c["variant"] for c in after if c["cell_id"] not in before}
    assert changed == {"partner_choice"} and len(after) == len(before)


def test_an_undeclared_template_fails_the_cell(monkeypatch: pytest.MonkeyPatch) -> None:
    cell = _cells()[0]
    monkeypatch.setattr(
        "coopeval.studies.evolution.study.prompt_templates", lambda settings: prompt_templates(settings) - {"evo_player_name"}
    )
    with pytest.raises(UndeclaredTemplateError, match="'evo_player_name' is rendered but not declared"):
        play_study_cell("evolution", cell, {"fake/llm": FakeLLM(0.8)})
