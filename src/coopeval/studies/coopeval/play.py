"""Play one CoopEval cell: build game, agents and mechanism, run it, return its records.

The generic job around it (journal, cache, atomic outputs) is :func:`coopeval.pipeline.play.run_cell`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from coopeval.agents.maker import CallStats, DecisionMaker
from coopeval.agents.protocol import Agent
from coopeval.agents.registry import make_agent
from coopeval.cache.response_cache import ResponseCache
from coopeval.core.journal import Journal
from coopeval.core.prompts import BASE_VARIANT, PromptLibrary, variant_position
from coopeval.core.schemas import conform
from coopeval.games import get_game
from coopeval.studies.coopeval import STUDY_NAME
from coopeval.studies.coopeval.cells import settings_position
from coopeval.studies.coopeval.mechanisms import get_mechanism
from coopeval.studies.coopeval.mechanisms.base import CellContext, CellRecords
from coopeval.studies.coopeval.prompt_use import agent_styles, cell_templates

PLAY_TABLES = ("decisions", "llm_calls", "matchups", "designs", "votes", "selections")


def style_instructions(prompts: PromptLibrary, styles: Iterable[str] = ("CoT", "IO")) -> dict[str, str]:
    """The instructions of ``styles`` appended to every prompt (docs/protocol/answers.md#prompt-content part 5); bots get none."""
    return {**{style: prompts.render(f"style_{style}") for style in styles}, "scripted": ""}


def build_context(spec: Mapping[str, Any], maker: DecisionMaker, prompts: PromptLibrary, agents: list[Agent] | None = None) -> CellContext:
    """The :class:`CellContext` of a cell spec (see :mod:`coopeval.studies.coopeval.cells`)."""
    game_params = dict(spec.get("game_params") or {})
    if spec["game"] == "matching_pennies":
        game_params["symmetric_description"] = bool(spec.get("compat", {}).get("mp_symmetric_description", False))
    return CellContext(
        game=get_game(spec["game"], **game_params),
        agents=agents if agents is not None else [make_agent(a) for a in spec["agents"]],
        replicate=int(spec["replicate"]),
        seed=int(spec["seed"]),
        prompts=prompts,
        maker=maker,
        params=dict(spec.get("mechanism_params") or {}),
        compat=dict(spec.get("compat") or {}),
        label=f"{spec['mechanism']}/{spec['game']}/r{spec['replicate']}",
        max_matchups=spec.get("max_matchups"),
    )


def play_cell(
    spec: Mapping[str, Any],
    cache: ResponseCache | None,
    prompts: PromptLibrary,
    journal: Journal | None = None,
    agents: list[Agent] | None = None,
    max_concurrency: int = 8,
    max_usd: float = 0.0,
) -> tuple[dict[str, pl.DataFrame], CallStats]:
    """Play a cell and return its tables (conformed to the store schemas) and call counters.

    ``prompts`` (the base wording) is read in the cell's prompt variant (``prompt_variant``,
    default ``base``) and restricted to the cell's declared templates (:mod:`.prompt_use`):
    rendering another one raises :class:`~coopeval.core.prompts.UndeclaredTemplateError`."""
    prompts = prompts.variant(str(spec.get("prompt_variant", BASE_VARIANT))).restricted(cell_templates(spec))
    maker = DecisionMaker(
        cache,
        style_instructions(prompts, agent_styles(spec) if agents is None else {a.style for a in agents if a.style != "scripted"}),
        journal=journal,
        max_concurrency=max_concurrency,
        lenient_contract_ints=bool(spec.get("compat", {}).get("lenient_contract_ints", False)),
        retry_failed=int(spec.get("retry_failed", 0)),
        max_usd=max_usd,
        position_extra={**variant_position(spec), **settings_position(spec)},
    )
    ctx = build_context(spec, maker, prompts, agents)
    mechanism = get_mechanism(spec["mechanism"])
    records: CellRecords = asyncio.run(mechanism.run(ctx))
    ids = {
        "cell_id": spec["cell_id"],
        "source": "ours",
        "study": STUDY_NAME,
        "run": f"r{spec['replicate']}",
        "mechanism": spec["mechanism"],
        "game": ctx.game.name,
    }
    tables = {}
    for table in PLAY_TABLES:
        rows = [{**ids, **row} for row in getattr(records, table)]
        frame = pl.DataFrame(rows, infer_schema_length=None) if rows else pl.DataFrame()
        tables[table] = conform(table, frame)
    for table in ("decisions", "llm_calls"):
        tables[table] = tables[table].sort(["matchup_id", "round", "seat", "decision_id"] + (["attempt"] if table == "llm_calls" else []))
    return tables, maker.stats
