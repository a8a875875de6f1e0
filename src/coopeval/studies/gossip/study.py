"""``GossipStudy``: the ALIGN gossip study behind the :class:`~coopeval.studies.base.Study`
contract (issue 10; docs/protocol/gossip.md).

Usage::

    study = GossipStudy()
    cells = study.cells(config)              # config holds a top-level ``gossip:`` section
    tables, stats = study.play(cells[0], PlayInputs(cache, study.prompt_library(), journal))

A cell is one (testbed × condition × model × replicate); its id is sha256[:12] of the canonical
JSON of its spec (everything that determines its results, including the matching policy, the
prompt variant (docs/paraphrases.md; omitted for the base wording), the content hash of exactly
the prompt templates the cell can render (:mod:`.templates`), the parser
and cache schema versions).
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.agents.maker import CallStats, DecisionMaker
from coopeval.agents.protocol import Agent
from coopeval.agents.registry import agent_name, is_scripted
from coopeval.cache.response_cache import CACHE_SCHEMA_VERSION
from coopeval.core.charts import report_format
from coopeval.core.hashing import canonical_json
from coopeval.core.prompts import (
    BASE_VARIANT,
    PromptLibrary,
    check_prompt_variants,
    variant_position,
)
from coopeval.core.schemas import conform, register_tables
from coopeval.decisions.parsing import PARSER_VERSION
from coopeval.studies.base import (
    PlayInputs,
    ReportEntry,
    figure_file,
    play_table_paths,
    table_page_file,
)
from coopeval.studies.gossip import STUDY
from coopeval.studies.gossip.catalog import CATEGORY, FIGURES, table_entry, table_stems
from coopeval.studies.gossip.conditions import Condition
from coopeval.studies.gossip.config import (
    applies,
    load_schema,
    resolve_conditions,
    validate_gossip_config,
)
from coopeval.studies.gossip.metrics import (
    agent_metrics,
    attack_metrics,
    market_metrics,
    round_failures,
    run_metrics,
)
from coopeval.studies.gossip.population import population, population_agent, seat_agents
from coopeval.studies.gossip.records import frame
from coopeval.studies.gossip.rounds import RunLoop, play_run
from coopeval.studies.gossip.sensitivity import SENSITIVITY
from coopeval.studies.gossip.templates import answer_texts, spec_templates
from coopeval.studies.gossip.testbeds import Market, Testbed, make_testbed, testbed_entry

PROMPTS_DIR = Path(__file__).with_name("prompts")
MANIFEST_SCHEMA: dict[str, pl.DataType] = {
    "cell_id": pl.String(),
    "testbed": pl.String(),
    "condition": pl.String(),
    "model": pl.String(),
    "replicate": pl.Int64(),
    "matching": pl.String(),
    "seed": pl.Int64(),
    "gamma": pl.Float64(),
    "horizon": pl.String(),  # rounds, or "infinite"
    "n_agents": pl.Int64(),
    "path": pl.String(),
    "condition_flags": pl.String(),  # canonical JSON of the condition
    "testbed_params": pl.String(),  # canonical JSON
}
"""Columns of ``results/gossip_cells.tsv`` (store table ``gossip_cells``), read back with exactly these types."""
register_tables({"gossip_cells": MANIFEST_SCHEMA})


def cell_hash(spec: Mapping[str, Any]) -> str:
    """First 12 hex chars of sha256 over the canonical JSON of ``spec``."""
    return hashlib.sha256(canonical_json(dict(spec)).encode("utf-8")).hexdigest()[:12]


def model_entry(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The hashed part of a model entry."""
    out: dict[str, Any] = {"model": str(entry["model"]), "style": entry.get("style", "IO"), "params": dict(entry.get("params") or {})}
    if entry.get("label"):
        out["label"] = entry["label"]
    return out


def model_name(entry: Mapping[str, Any]) -> str:
    """Display name: ``bot/<name>`` or ``<label or model>(<style>)`` (the registry's agent name)."""
    return agent_name(entry)


def resolve_testbed(key: str, params: Mapping[str, Any], condition: Condition) -> Testbed:
    """The testbed with the condition's horizon and γ applied."""
    merged = dict(params)
    if condition.horizon is not None:
        merged["horizon"] = condition.horizon
    if condition.gamma is not None:
        merged["gamma"] = condition.gamma
    return make_testbed(key, **merged)


COMPARISONS_OUTPUT = "results/comparisons/gossip.parquet"
"""The ``gossip_comparisons`` rule's output (the store's ``comparisons`` table, gossip's rows)."""


class GossipStudy:
    """The ALIGN gossip study (see the module docstring)."""

    name = STUDY
    title = "Gossip: indirect reciprocity through gossip (ALIGN)"
    order = 20
    play_tables: tuple[str, ...] = ("gossip_rounds", "gossip_agent_metrics", "gossip_run_metrics", "decisions", "llm_calls")
    manifest_path = "results/gossip_cells.tsv"
    manifest_table = "gossip_cells"
    default_enabled = True
    rules_file: str | None = "workflow/rules/gossip.smk"
    wildcard_constraints: Mapping[str, str] = {}
    prompts_dir = str(PROMPTS_DIR)
    """The prompt templates ship as package data; the ``play_gossip`` rule reads them from here."""

    # -- config ------------------------------------------------------------------------------
    def config_schema(self) -> dict[str, Any]:
        """The ``gossip:`` section (``config.schema.yaml`` beside this module, with defaults)."""
        section = {k: v for k, v in load_schema().items() if k != "$schema"}
        section["default"] = {}
        section.setdefault("description", "The ALIGN gossip study (src/coopeval/studies/gossip/README.md).")
        return {"properties": {STUDY: section}, "required": []}

    def check_config(self, config: Mapping[str, Any]) -> None:
        """See :func:`~.config.validate_gossip_config` (raises a ``ConfigError`` naming the key),
        and the configured ``prompt_variants`` exist in the study's ``prompts/variants/``."""
        validate_gossip_config(config.get(STUDY))
        check_prompt_variants(config.get("prompt_variants", [BASE_VARIANT]), PROMPTS_DIR, STUDY)

    def models(self, config: Mapping[str, Any]) -> list[str]:
        """Every population model of the section (attackers and Max are built in, never called)."""
        return [str(e["model"]) for e in validate_gossip_config(config.get(STUDY))["models"]]

    def cell_models(self, spec: Mapping[str, Any]) -> list[str]:
        """The one population model of a cell."""
        return [str(spec["model"]["model"])]

    def cost(self, spec: Mapping[str, Any]) -> int:
        """Decisions of the population model in the cell (rounds × calls per round; bots 0)."""
        if is_scripted(str(spec["model"]["model"])):
            return 0
        cond = Condition.from_json(spec["condition"])
        testbed = make_testbed(spec["testbed"], **spec["testbed_params"])
        _, _, schedule = population(testbed, cond, int(spec["seed"]), int(spec["replicate"]), str(spec["matching"]))
        entry = testbed_entry(testbed.key)
        per_round: float = len(entry.acting)
        witnesses: float = len(entry.witnesses) if cond.gossip else 0
        if cond.attacker == "max":  # only the honest side of Max's rounds calls the model: half of each
            per_round, witnesses = per_round / 2, witnesses / 2
        return math.ceil(len(schedule) * (per_round + witnesses) * (2 if cond.reflection_call else 1))

    def manifest(self, cells: list[dict[str, Any]]) -> str:
        """``results/gossip_cells.tsv`` (store table ``gossip_cells``): one line per cell."""
        lines = ["\t".join(MANIFEST_SCHEMA)]
        for c in cells:
            tp = c["testbed_params"]
            n = tp.get("n", (tp.get("n_sellers") or 0) + (tp.get("n_buyers") or 0))
            row = [
                c["cell_id"], c["testbed"], c["condition"]["name"], model_name(c["model"]), str(c["replicate"]), c["matching"],
                str(c["seed"]), f"{tp['gamma']:g}", str(tp["horizon"]), str(n), c["path"],
                canonical_json(c["condition"]), canonical_json(tp),
            ]
            lines.append("\t".join(row))
        return "\n".join(lines) + "\n"

    def store_inputs(self, config: Mapping[str, Any], cells: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
        """The play tables of every cell (the round metrics come out of play) and the paired
        comparisons of its models (rule ``gossip_comparisons``)."""
        return play_table_paths(self, cells, comparisons=COMPARISONS_OUTPUT)

    def report_entries(self, config: Mapping[str, Any]) -> list[ReportEntry]:
        """Every figure (the shown format) and the Tables 1-2 page of each configured testbed,
        under the category :data:`.catalog.CATEGORY`; with more than one prompt variant also the
        prompt sensitivity figure and page (docs/paraphrases.md)."""
        shown = report_format(config["figures"]["formats"])
        entries = [ReportEntry(figure_file(e.stem, shown), CATEGORY, e.subcategory, e.caption) for e in FIGURES]
        for stem in table_stems(config[STUDY]["testbeds"]):
            page = table_entry(stem)
            entries.append(ReportEntry(table_page_file(stem), CATEGORY, page.subcategory, page.caption))
        if len(config.get("prompt_variants", [])) > 1:  # docs/paraphrases.md
            entries.append(ReportEntry(figure_file(SENSITIVITY.figure, shown), CATEGORY, "Prompt sensitivity", "gossip_prompt_sensitivity.rst"))
            entries.append(ReportEntry(SENSITIVITY.page, CATEGORY, "Prompt sensitivity", "gossip_prompt_sensitivity_tables.rst"))
        return entries

    # -- resources ---------------------------------------------------------------------------
    @staticmethod
    def prompt_library() -> PromptLibrary:
        """The study's prompt templates (``studies/gossip/prompts/*.txt``, base wording; its
        variants under ``prompts/variants/``, :meth:`~coopeval.core.prompts.PromptLibrary.variant`)."""
        return PromptLibrary(PROMPTS_DIR)

    @staticmethod
    def style_instructions(prompts: PromptLibrary, style: str | None) -> dict[str, str]:
        """The line the maker appends to every prompt of the population's ``style`` (``IO`` or
        ``CoT``; None for a scripted population: bots get none)."""
        return {"scripted": ""} if style is None else {style: prompts.render(f"style_{style}"), "scripted": ""}

    # -- cells -------------------------------------------------------------------------------
    def cells(self, config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Cells of ``config["gossip"]``: testbed → condition → model → replicate (attacker
        conditions only on the testbeds that have attackers).

        Raises
        ------
        coopeval.studies.gossip.config.GossipConfigError
            Invalid section (naming the key).
        """
        section = validate_gossip_config(config.get("gossip"))
        seed = int(section.get("seed", config.get("seed", 0)))
        base = self.prompt_library()
        wordings = [(name, base.variant(name)) for name in config.get("prompt_variants", [BASE_VARIANT])]
        texts_hash = answer_texts()
        out = []
        for key in section["testbeds"]:
            params = dict(section["testbed_params"].get(key, {}))
            for cond in resolve_conditions(section):
                if not applies(cond, key):
                    continue
                testbed = resolve_testbed(key, params, cond)
                for entry, (wording, library) in itertools.product(section["models"], wordings):
                    for replicate in range(1, int(section["replicates"]) + 1):
                        spec: dict[str, Any] = {
                            "study": STUDY,
                            "testbed": key,
                            "testbed_params": dict(vars(testbed).items()),
                            "condition": cond.to_json(),
                            "model": model_entry(entry),
                            "replicate": replicate,
                            "seed": seed,
                            "matching": section["matching"],
                            "tone_set": section["tone_set"],
                            "memory_cap": int(section["memory_cap"]),
                            "log_cap": int(section["log_cap"]),
                            "prompt_hash": "",
                            "parser_version": PARSER_VERSION,
                            "answer_texts_hash": texts_hash,
                            "cache_schema_version": CACHE_SCHEMA_VERSION,
                        }
                        if wording != BASE_VARIANT:  # base cells keep the ids they had before variants
                            spec["prompt_variant"] = wording
                        spec["prompt_hash"] = library.content_hash(spec_templates(spec))
                        cell_id = cell_hash(spec)
                        out.append({**spec, "cell_id": cell_id, "path": f"{STUDY}/{key}/{cond.name}/{cell_id}"})
        return out

    def label(self, spec: Mapping[str, Any]) -> str:
        """``gossip/<testbed>/<condition>/<model>/r<replicate>``."""
        return f"{STUDY}/{spec['testbed']}/{spec['condition']['name']}/{model_name(spec['model'])}/r{spec['replicate']}"

    # -- play --------------------------------------------------------------------------------
    def play(
        self, spec: Mapping[str, Any], inputs: PlayInputs, agents: Mapping[str, Agent] | None = None
    ) -> tuple[dict[str, pl.DataFrame], CallStats]:
        """Play one cell; return the frames of :attr:`play_tables` and the call counters.

        ``agents`` optionally maps the population's model name to a ready agent (tests).
        """
        prompts = inputs.prompts.variant(str(spec.get("prompt_variant", BASE_VARIANT))).restricted(spec_templates(spec))
        style = None if is_scripted(str(spec["model"]["model"])) else str(spec["model"].get("style", "IO"))
        maker = DecisionMaker(
            inputs.cache,
            self.style_instructions(prompts, style),
            journal=inputs.journal,
            max_concurrency=inputs.max_concurrency,
            max_usd=inputs.max_usd,
            position_extra=variant_position(spec),
        )
        tables = asyncio.run(self.play_async(spec, maker, prompts, agents))
        return tables, maker.stats

    async def play_async(
        self, spec: Mapping[str, Any], maker: DecisionMaker, prompts: PromptLibrary, agents: Mapping[str, Agent] | None = None
    ) -> dict[str, pl.DataFrame]:
        """Async form of :meth:`play` with a ready decision maker; ``prompts`` is restricted to
        the cell's declared templates (:func:`.templates.spec_templates`) here if it is not yet.

        Raises
        ------
        coopeval.core.prompts.UndeclaredTemplateError
            If the run renders a template the cell does not declare.
        """
        if prompts.allowed is None:
            prompts = prompts.variant(str(spec.get("prompt_variant", BASE_VARIANT))).restricted(spec_templates(spec))
        cond = Condition.from_json(spec["condition"])
        params = dict(spec["testbed_params"].items())
        testbed = make_testbed(spec["testbed"], **params)
        seed, replicate, matching = int(spec["seed"]), int(spec["replicate"]), str(spec["matching"])
        names, kinds, schedule = population(testbed, cond, seed, replicate, matching)
        entry = spec["model"]
        mname = model_name(entry)
        pop_agent = agents[mname] if agents and mname in agents else population_agent(entry)
        cast = seat_agents(names, kinds, pop_agent)
        run_label = f"{spec['testbed']}/{cond.name}/r{replicate}"
        loop = RunLoop(
            testbed, cond, names, cast, kinds, schedule, maker, prompts, seed, replicate, matching,
            run_label, int(spec.get("memory_cap", 0)), int(spec.get("log_cap", 0)),
            message_agent=None if is_scripted(str(entry["model"])) else pop_agent, population=pop_agent.name,
        )
        records = await play_run(loop)
        ids = {
            "cell_id": spec.get("cell_id"),
            "run": f"r{replicate}",
            "testbed": testbed.key,
            "condition": cond.name,
            "model": mname,
            "replicate": replicate,
            "matching": matching,
        }
        agent_rows = agent_metrics(records.events, names, testbed.gamma)
        run = run_metrics(agent_rows)
        failures, agent_failures = round_failures(records.rounds, names)
        for row in agent_rows:
            row.update(ids, kind=kinds[str(row["agent"])], gini=run["gini"], n_failed_rounds=agent_failures[str(row["agent"])])
        run_row: dict[str, Any] = {
            **ids,
            **run,
            "gamma": testbed.gamma,
            "horizon": testbed.horizon,
            "n_agents": len(names),
            "n_rounds": len(schedule),
            **failures,
        }
        if isinstance(testbed, Market):
            run_row.update(market_metrics(records.market, testbed.gamma))
        bad = [n for n in names if kinds[n] != "honest"]
        if bad:
            run_row.update(attack_metrics(agent_rows, records.events, bad))
        shared_ids = {
            "cell_id": spec.get("cell_id"), "source": "ours", "run": f"r{replicate}", "mechanism": cond.name, "game": testbed.key, "study": STUDY,
        }
        tables = {
            "gossip_rounds": frame("gossip_rounds", [{**ids, **r} for r in records.rounds]),
            "gossip_agent_metrics": frame("gossip_agent_metrics", agent_rows),  # type: ignore[arg-type]
            "gossip_run_metrics": frame("gossip_run_metrics", [run_row]),
        }
        for table, rows in (("decisions", records.decisions), ("llm_calls", records.llm_calls)):
            data = pl.DataFrame([{**shared_ids, **r} for r in rows], infer_schema_length=None) if rows else pl.DataFrame()
            tables[table] = conform(table, data)
        return tables
