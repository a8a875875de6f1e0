"""Prompt variants (issue 23 item 4, docs/paraphrases.md): the overlay of a variant folder on the
base templates, the config key ``prompt_variants`` and its check, and the cells' identity.

With the default ``[base]`` every cell keeps the id it had before variants existed: the base
cells' specs carry no ``prompt_variant`` and a config listing variants yields, for its base
wording, exactly the cells of the config without them.
"""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import pytest

from coopeval.agents.maker import DecisionMaker
from coopeval.agents.mock import MockLLM
from coopeval.cache.response_cache import ResponseCache
from coopeval.core.errors import ConfigError
from coopeval.core.prompts import PromptLibrary, prompt_variants, variant_position
from coopeval.decisions.formats.signature import Signature
from coopeval.pipeline.config import load_config, validate_config
from coopeval.pipeline.studies import STUDIES
from coopeval.studies.gossip.study import PROMPTS_DIR as GOSSIP_PROMPTS
from tests.shared_data import PROMPTS_DIR, REPO


def _library(tmp_path: Path, variants: dict[str, dict[str, str]]) -> PromptLibrary:
    (tmp_path / "greet.txt").write_text("Hello $name, you have $n points.\n")
    (tmp_path / "bye.txt").write_text("Bye $name.\n")
    for variant, files in variants.items():
        folder = tmp_path / "variants" / variant
        folder.mkdir(parents=True)
        for stem, text in files.items():
            (folder / f"{stem}.txt").write_text(text)
    return PromptLibrary(tmp_path)


def test_a_variant_rewords_its_files_and_keeps_the_others(tmp_path: Path) -> None:
    base = _library(tmp_path, {"p1": {"greet": "Hi $name; your points: $n.\n"}})
    p1 = base.variant("p1")
    assert p1.render("greet", name="Ann", n=3) == "Hi Ann; your points: 3."
    assert p1.render("bye", name="Ann") == "Bye Ann."  # not reworded: the base text
    assert base.render("greet", name="Ann", n=3) == "Hello Ann, you have 3 points."  # base untouched
    assert base.variant("base") is base
    assert prompt_variants(tmp_path) == ("base", "p1")
    # the content hash follows the wording of exactly the templates asked for
    assert p1.content_hash(["bye"]) == base.content_hash(["bye"])
    assert p1.content_hash(["greet"]) != base.content_hash(["greet"])
    restricted = p1.restricted(["greet"])
    assert restricted.variant_name == "p1" and restricted.render("greet", name="B", n=1) == "Hi B; your points: 1."


def test_unknown_or_orphan_variants_are_refused(tmp_path: Path) -> None:
    base = _library(tmp_path, {"p1": {"greet": "Hi $name ($n).\n"}, "bad": {"gret": "typo\n"}})
    with pytest.raises(ValueError, match=r"unknown prompt variant 'p9'.*available: base, bad, p1"):
        base.variant("p9")
    with pytest.raises(ValueError, match="rewords gret, which are not templates"):
        base.variant("bad")
    with pytest.raises(ValueError, match="already variant 'p1'"):
        base.variant("p1").variant("p1")


def test_shipped_variants() -> None:
    assert prompt_variants(PROMPTS_DIR) == ("base", "p1", "p2")
    assert prompt_variants(GOSSIP_PROMPTS) == ("base", "p1", "p2")


def test_unknown_variant_in_the_config_is_refused_naming_the_available_ones() -> None:
    raw = {"agents": [{"model": "bot/tit-for-tat"}], "studies": ["coopeval"], "prompts_dir": str(PROMPTS_DIR),
           "prompt_variants": ["base", "p7"]}
    with pytest.raises(ConfigError, match=r"config prompt_variants: 'p7' is not a prompt variant of the coopeval study.*use one of base, p1, p2"):
        validate_config(raw)
    gossip = {**raw, "studies": ["gossip"], "gossip": {"models": [{"model": "bot/always-cooperate"}]}}
    with pytest.raises(ConfigError, match="'p7' is not a prompt variant of the gossip study"):
        validate_config(gossip)
    with pytest.raises(ConfigError, match="prompt_variants"):
        validate_config({**raw, "prompt_variants": []})  # at least one wording


@functools.cache
def _cells(*overlay: str, variants: tuple[str, ...] | None = None) -> dict[str, list[dict[str, Any]]]:
    config = load_config([REPO / "config" / "config.yaml", *(REPO / "config" / name for name in overlay)])
    if variants is not None:
        config = validate_config({**config, "prompt_variants": list(variants)})
    return {name: STUDIES[name].cells(config) for name in ("coopeval", "gossip", "evolution")}


@pytest.mark.parametrize("overlay", [(), ("smoke.yaml",)])
def test_base_cells_keep_their_ids_when_variants_are_added(overlay: tuple[str, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(REPO)  # prompts_dir is relative to the workflow folder
    default = _cells(*overlay)
    assert default == _cells(*overlay, variants=("base",))
    assert all("prompt_variant" not in c for cells in default.values() for c in cells)
    varied = _cells(*overlay, variants=("base", "p1", "p2"))
    for study in ("coopeval", "gossip"):
        by_variant: dict[str, list[dict[str, Any]]] = {}
        for cell in varied[study]:
            by_variant.setdefault(cell.get("prompt_variant", "base"), []).append(cell)
        assert by_variant["base"] == default[study]
        for name in ("p1", "p2"):
            assert len(by_variant[name]) == len(default[study])
            assert not {c["cell_id"] for c in by_variant[name]} & {c["cell_id"] for c in default[study]}
            # every cell renders at least one reworded template, so its prompt hash differs too
            assert all(v["prompt_hash"] != b["prompt_hash"] for v, b in zip(by_variant[name], default[study], strict=True))
    assert varied["evolution"] == default["evolution"]  # the evolution study has no variants


def test_the_variant_enters_the_cache_key_of_every_decision(tmp_path: Path) -> None:
    """The same prompt asked at the same position is a cache hit within a wording and a new call
    in another variant: the variant is in the key even where the text does not differ."""
    cache = ResponseCache(tmp_path / "cache")
    agent = MockLLM("mock/a", style="IO")
    made = []
    for spec in ({}, {"prompt_variant": "base"}, {"prompt_variant": "p1"}, {"prompt_variant": "p1"}, {"prompt_variant": "p2"}):
        maker = DecisionMaker(cache, {"IO": ""}, position_extra=variant_position(spec))
        outcome = asyncio.run(maker.decide(agent, "Do you sign?", Signature(), {"round": 1}))
        assert outcome.parsed is not None
        made.append(maker.stats.calls_made)
    assert made == [1, 0, 1, 0, 1]
