"""Every word a gossip model reads comes from a template file whose content is in the cell id
(issue 20: the round texts used to be f-strings in ``rounds.py``, outside the hashed folder, so
rewording them kept every cell id and Snakemake kept the stale outputs)."""

from __future__ import annotations

import json
import re
import shutil
import warnings
from pathlib import Path
from typing import Any

import pytest

from coopeval.core.prompts import PromptLibrary
from coopeval.studies.base import PlayInputs
from coopeval.studies.gossip import study as study_module
from coopeval.studies.gossip.names import AGENT_NAMES, MAX_NAME
from coopeval.studies.gossip.study import GossipStudy
from coopeval.studies.gossip.tones import TONES
from tests.studies.gossip.fakes import FakeGossipLLM

STUDY = GossipStudy()
PLACEHOLDER_OR_WORD = re.compile(r"\$\$|\$\{?[_a-zA-Z][_a-zA-Z0-9]*\}?|[A-Za-z]+")
SMALL = {"donation": {"n": 4}, "pd": {"n": 4}, "trust": {"n": 4}, "market": {"n_sellers": 2, "n_buyers": 2}}


def _cells(testbeds: list[str], conditions: list[str], **extra: Any) -> list[dict[str, Any]]:
    section = {"testbeds": testbeds, "conditions": conditions, "models": [{"model": "fake/gossip"}], "testbed_params": SMALL}
    return STUDY.cells({"seed": 3, "gossip": {**section, **extra}})


def _prompts_of(cell: dict[str, Any], library: PromptLibrary) -> list[str]:
    llm = FakeGossipLLM()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # memory caps warn
        tables, _ = STUDY.play(cell, PlayInputs(None, library), agents={llm.name: llm})
    return [m["content"] for p in tables["llm_calls"]["prompt"] for m in json.loads(p)]


def _copy_prompts(tmp_path: Path) -> Path:
    folder = tmp_path / "prompts"
    shutil.copytree(study_module.PROMPTS_DIR, folder)
    return folder


def test_rewording_a_round_line_changes_the_gossip_cell_ids(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = {c["cell_id"] for c in _cells(["donation"], ["align"])}
    folder = _copy_prompts(tmp_path)
    situation = folder / "donation_situation.txt"
    situation.write_text(situation.read_text(encoding="utf-8").replace("the donor this round", "this round's donor"), encoding="utf-8")
    monkeypatch.setattr(study_module, "PROMPTS_DIR", folder)
    cells = _cells(["donation"], ["align"])
    assert before.isdisjoint(c["cell_id"] for c in cells)
    assert any("this round's donor" in p for p in _prompts_of(cells[0], STUDY.prompt_library()))


def _scrambled(folder: Path) -> PromptLibrary:
    """The study's templates with every letter outside a ``$placeholder`` replaced by ``ʒ``."""
    for path in folder.glob("*.txt"):
        text = path.read_text(encoding="utf-8")
        path.write_text(
            PLACEHOLDER_OR_WORD.sub(lambda m: m.group() if m.group().startswith("$") else "ʒ" * len(m.group()), text),
            encoding="utf-8",
        )
    return PromptLibrary(folder)


ANSWER_SHAPE = re.compile(r"\{\"(?:justification|reflection)\".*\}")
FAKE_ANSWER_WORDS = {"A", "message", "because", "I", "should", "weigh", "my", "reputation", "Thinking", "scripted"}
"""Words of the fake LLM's answers and of the scripted attackers' justifications, which memories quote."""
VALUE_WORDS = {*AGENT_NAMES, MAX_NAME, *TONES, "cooperate", "defect", "C", "D", "H", "L", "c", "s", "none", "e"}


@pytest.mark.parametrize("testbed", ["donation", "pd", "trust", "market"])
def test_no_prompt_word_comes_from_code(testbed: str, tmp_path: Path) -> None:
    # collusive / collusive_third_party are left out: the scripted attackers' messages are the
    # bots' answers (gossip/bots.py), not prompt text.
    conditions = [
        "align", "no_gossip", "no_equilibrium", "no_reflection", "binary_no_convention", "binary_convention",
        "tone_hidden", "finite", "infinite", "reflection_call",
    ]
    if testbed in ("donation", "pd"):
        conditions += ["max", "max_no_gossip", "collusive_llm_messages"]
    library = _scrambled(_copy_prompts(tmp_path))
    leaked: set[str] = set()
    for cell in _cells([testbed], conditions, memory_cap=2, log_cap=1):
        for prompt in _prompts_of(cell, library):
            text = ANSWER_SHAPE.sub("", prompt)  # the answer format's JSON shape (gossip/formats.py)
            leaked |= set(re.findall(r"[A-Za-z]+", text)) - VALUE_WORDS - FAKE_ANSWER_WORDS
    assert leaked == set()


def test_under_gossip_no_actor_is_told_that_nobody_learns_its_choice() -> None:
    """Every testbed's partner learns the action (it is in the partner's memory), so with gossip
    on no action prompt may say that no other agent observes it (issue 21 item 12: the market's
    buyer was told so although the seller learns its choice)."""
    library = STUDY.prompt_library()
    nobody = library.render("accountability_none").strip()
    for cell in _cells(["donation", "pd", "trust", "market"], ["align"]):
        prompts = _prompts_of(cell, library)
        assert prompts and not [p for p in prompts if nobody in p], cell["testbed"]
    (market,) = _cells(["market"], ["align"])[:1]
    buyers = [p for p in _prompts_of(market, library) if '"buyer_action"' in p and "a buyer; this round" in p]
    assert buyers and all(re.search(r"(\w+) learns your choice after the round", p) for p in buyers)
