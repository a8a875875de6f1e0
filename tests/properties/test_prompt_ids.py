"""Prompt templates and cell ids (issue 20): changing any character of any prompt template
changes the ids of exactly the cells that use it and of no other cell, over all three studies'
cells of ``config/config.yaml`` and ``config/smoke.yaml``.

"Use" is each study's declaration: CoopEval :func:`~coopeval.studies.coopeval.prompt_use.cell_templates`
(its mechanism's templates and its agents' style lines), gossip
:func:`~coopeval.studies.gossip.templates.spec_templates`, evolution
:func:`~coopeval.studies.evolution.prompting.prompt_templates` of its settings. The decision
loop's own texts (re-ask frame, the engine formats' error messages, :mod:`coopeval.decisions.texts`)
are used by every cell; a study's error messages and the gossip bots' log messages by every cell
of that study. The games' payoff descriptions (``games/prompts``) enter a CoopEval cell id as
rendered text, through its game fingerprint: ``tests/games/test_game_texts.py``. A cell plays with a
library restricted to its declaration, so the declarations cannot miss a template they render;
``test_coopeval_declared_templates_are_the_rendered_ones`` and the gossip and evolution studies'
``test_declared_templates_are_the_rendered_ones`` check they declare nothing more.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coopeval.agents.mock import MockLLM
from coopeval.core.prompts import PromptLibrary
from coopeval.decisions.texts import ENGINE_TEXTS
from coopeval.pipeline.config import load_config
from coopeval.studies.coopeval.cells import build_cells
from coopeval.studies.coopeval.prompt_use import cell_templates
from coopeval.studies.evolution.amounts import ERRORS as EVOLUTION_ERRORS
from coopeval.studies.evolution.prompting import prompt_templates
from coopeval.studies.evolution.settings import EvolutionSettings
from coopeval.studies.evolution.study import EvolutionStudy
from coopeval.studies.gossip.bots import BOT_TEXTS as GOSSIP_BOT_TEXTS
from coopeval.studies.gossip.formats import ERRORS as GOSSIP_ERRORS
from coopeval.studies.gossip.study import PROMPTS_DIR as GOSSIP_PROMPTS
from coopeval.studies.gossip.study import GossipStudy
from coopeval.studies.gossip.templates import spec_templates
from tests.helpers import make_cell, play_spec
from tests.shared_data import PROMPTS_DIR as coopeval_prompts
from tests.shared_data import REPO

EVOLUTION = EvolutionStudy()
EVOLUTION_PROMPTS = Path(EVOLUTION.prompts_dir)
Template = tuple[Path, str]  # (folder, name)
ENGINE_DIRS = (ENGINE_TEXTS.directory,)
STUDY_TEXT_DIRS = {"coopeval": (), "gossip": (GOSSIP_ERRORS.directory, GOSSIP_BOT_TEXTS.directory), "evolution": (EVOLUTION_ERRORS.directory,)}


def _every(*folders: Path) -> frozenset[Template]:
    return frozenset((folder, name) for folder in folders for name in PromptLibrary(folder).templates)


@functools.cache
def _configs() -> tuple[dict[str, Any], ...]:
    base = REPO / "config" / "config.yaml"
    return load_config([base]), load_config([base, REPO / "config" / "smoke.yaml"])


def _all_cells() -> dict[str, tuple[frozenset[Template], Any]]:
    """``"<config>/<study>/<i>" -> (the templates the cell declares, its cell id)``."""
    texts = {study: _every(*ENGINE_DIRS, *folders) for study, folders in STUDY_TEXT_DIRS.items()}
    out: dict[str, tuple[frozenset[Template], Any]] = {}
    for k, config in enumerate(_configs()):
        for i, c in enumerate(build_cells(config, repo_root=REPO)):
            out[f"{k}/coopeval/{i}"] = (frozenset((coopeval_prompts, n) for n in cell_templates(c)) | texts["coopeval"], c["cell_id"])
        for i, c in enumerate(GossipStudy().cells(config)):
            out[f"{k}/gossip/{i}"] = (frozenset((GOSSIP_PROMPTS, n) for n in spec_templates(c)) | texts["gossip"], c["cell_id"])
        for i, c in enumerate(EVOLUTION.cells(config)):
            declared = prompt_templates(EvolutionSettings.from_params(c["params"]))
            out[f"{k}/evolution/{i}"] = (frozenset((EVOLUTION_PROMPTS, n) for n in declared) | texts["evolution"], c["cell_id"])
    return out


@functools.cache
def _baseline() -> dict[str, tuple[frozenset[Template], Any]]:
    return _all_cells()


def _templates() -> list[Template]:
    folders = (coopeval_prompts, GOSSIP_PROMPTS, EVOLUTION_PROMPTS, *ENGINE_DIRS, *(f for fs in STUDY_TEXT_DIRS.values() for f in fs))
    return sorted((folder.resolve(), name) for folder in folders for name in PromptLibrary(folder).templates)


@contextmanager
def _edited(target: Template, edit: Callable[[str], str]) -> Iterator[None]:
    """Every :class:`PromptLibrary` loaded inside reads ``edit(text)`` for the template ``target``."""
    original = PromptLibrary.__init__

    def loading(self: PromptLibrary, directory: str | Path, allowed: Any = None) -> None:
        original(self, directory, allowed)
        if self.directory.resolve() == target[0] and target[1] in self.templates:
            self.templates[target[1]] = edit(self.templates[target[1]])

    with mock.patch.object(PromptLibrary, "__init__", loading):
        yield


def _changed_ids(target: Template, edit: Callable[[str], str]) -> set[str]:
    before = _baseline()
    with _edited(target, edit):
        after = _all_cells()
    assert after.keys() == before.keys()
    return {key for key in before if before[key][1] != after[key][1]}


def _users(target: Template) -> set[str]:
    return {key for key, (declared, _) in _baseline().items() if (target[0], target[1]) in {(f.resolve(), n) for f, n in declared}}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_changing_a_template_changes_exactly_the_ids_of_the_cells_that_use_it(data: st.DataObject) -> None:
    target = data.draw(st.sampled_from(_templates()), label="template")
    text = PromptLibrary(target[0]).templates[target[1]]
    position = data.draw(st.integers(0, len(text)), label="position")
    replaced = text[position : position + 1]
    new = data.draw(st.characters(codec="utf-8", exclude_characters=[replaced, "$"] if replaced else ["$"]), label="character")

    def edit(t: str) -> str:
        return t[:position] + new + t[position + 1 :]

    assert _changed_ids(target, edit) == _users(target)


def test_every_template_is_used_by_some_cell_or_named_unused() -> None:
    """A template that no configured cell declares is either a judge/other-stage template or
    belongs to a configuration the two configs leave out; listed here so none goes missing."""
    used = {(f.resolve(), n) for declared, _ in _baseline().values() for f, n in declared}
    unused = {name for folder, name in _templates() if (folder, name) not in used}
    # evo_advice: V&H advice without scores (compat.vh_no_scores); evo_percent_base_endowment:
    # Horibe's percent_base: endowment.
    assert unused <= {"style_CoT", "attacker_gossip", "reflect_items_plain", "contracting_bounds_note", "evo_advice",
                      "evo_percent_base_endowment"}, unused


def test_coopeval_declared_templates_are_the_rendered_ones() -> None:
    """Per mechanism, what its cells render over four games (bots, and a mock IO model) is what
    they declare."""
    rendered: set[str] = set()
    original = PromptLibrary.render

    def recording(self: PromptLibrary, name: str, **values: object) -> str:
        if self.directory.resolve() == coopeval_prompts.resolve():  # the decision loop's texts are in every cell id
            rendered.add(name)
        return original(self, name, **values)

    declared: dict[str, set[str]] = defaultdict(set)
    played: dict[str, set[str]] = defaultdict(set)
    with mock.patch.object(PromptLibrary, "render", recording):
        for mechanism in ("NoMechanism", "Repetition", "ReputationFirstOrder", "Reputation", "Mediation", "Contracting"):
            for game, players in (
                ("prisoners_dilemma", ("tit-for-tat", "always-defect")),
                ("travellers_dilemma", (MockLLM("mock/a", style="IO"), "tit-for-tat")),  # more than two actions
                ("trust_game", ("uniform-random", "tit-for-tat")),  # asymmetric: seats shown
                ("public_goods", ("tit-for-tat", "always-defect", "uniform-random")),  # more than two players
            ):
                params: Mapping[str, Any] = {"num_rounds": 3} if mechanism.startswith("Rep") else {}
                spec = make_cell(mechanism, game, players, **params)
                rendered.clear()
                play_spec(spec, players)
                declared[mechanism] |= cell_templates(spec)
                played[mechanism] |= rendered
    # A contract paying a player (contracting_receives) is only designed by a model that chooses
    # to; the bots and the mock propose the enforcing contract, which only charges.
    assert {m: declared[m] - played[m] for m in declared} == {
        "NoMechanism": set(), "Repetition": set(), "ReputationFirstOrder": set(), "Reputation": set(), "Mediation": set(),
        "Contracting": {"contracting_receives"},
    }
    assert all(played[m] <= declared[m] for m in declared)
