"""The evolution study: cultural evolution of donation strategies (issue 11; evolution spec).

``EvolutionStudy().cells(config)`` enumerates one cell per protocol × model × variant ×
replicate of the validated ``evolution:`` section; ``play(spec, inputs)`` builds the shared
decision loop from ``inputs``, runs the cell's generations (resuming from per-generation
checkpoints below ``inputs.state_dir`` or the study's ``checkpoint_root``) and returns the frames
of :attr:`EvolutionStudy.play_tables` and the call counters.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.agents.maker import CallStats, DecisionMaker
from coopeval.agents.registry import is_scripted
from coopeval.cache.response_cache import CACHE_SCHEMA_VERSION
from coopeval.core.hashing import canonical_json
from coopeval.core.schemas import register_tables
from coopeval.decisions.texts import answer_texts_hash
from coopeval.studies.base import PlayInputs, ReportEntry, play_table_paths
from coopeval.studies.evolution.agents import run_agents
from coopeval.studies.evolution.amounts import ERRORS as ANSWER_ERRORS
from coopeval.studies.evolution.checkpoint import Checkpoints, relabel
from coopeval.studies.evolution.config import (
    config_schema_part,
    model_label,
    run_settings,
    validate_evolution_config,
    variant_name,
    variant_protocols,
)
from coopeval.studies.evolution.figures import OES_PAGE, figure_files, is_reported
from coopeval.studies.evolution.prompting import (
    PROMPTS_DIR,
    EvolutionPrompts,
    evolution_prompts,
    prompt_templates,
)
from coopeval.studies.evolution.records import TABLES, frame
from coopeval.studies.evolution.runner import EvolutionRun, Member, RunAgents
from coopeval.studies.evolution.settings import EvolutionSettings

EVOLUTION_PARSER_VERSION = 4
"""Bump when a format's ``parse`` can accept, return or word an error differently (2: the
decision loop parses the text without its reasoning blocks and rejects cut-off answers,
:func:`coopeval.decisions.parsing.check_answer`; 3: numbers are read as one whole token and
the shown holdings are the limit, :mod:`coopeval.studies.evolution.amounts`, and the embedded
model's grammar admits exactly the amounts up to that limit: the grammar is not in the cache
key, so this version, part of every position's run key, keeps old answers from being replayed;
4: a space inside a number is read only as a thousands separator (``1 207`` is 1207, ``12 5``
is re-asked, :mod:`coopeval.decisions.numbers`), and a refusal is the answer line's leading
token(s), never a mention elsewhere (issue 36))."""

ANALYSIS_KEYS = (
    "invasion_per_generation",
    "invasion_first_generation",
    "matrix_per_generation",
    "matrix_first_generation",
    "matrix_samples",
    "matrix_temperature",
    "matrix_x_c",
    "matrix_resources",
    "matrix_round",
    "monotonicity_constant_rows",
)
"""Settings that change the analysis, not the trajectory: outside the positions' run key."""


def short_hash(value: Any) -> str:
    """sha256[:12] of the canonical JSON (as ``pipeline.cells.cell_hash``)."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:12]


def run_key(spec: Mapping[str, Any]) -> str:
    """Hash of what shapes the trajectory: the spec without generations, analysis settings,
    cell id and path. Part of every position, so an extended run (G → G') keeps its answers."""
    params = {k: v for k, v in spec["params"].items() if k != "generations" and k not in ANALYSIS_KEYS}
    core = {k: v for k, v in spec.items() if k not in ("cell_id", "path", "params")}
    return short_hash({**core, "params": params})


def checkpoint_key(spec: Mapping[str, Any]) -> str:
    """Hash of the spec without generations, cell id and path (the checkpoint folder)."""
    params = {k: v for k, v in spec["params"].items() if k != "generations"}
    core = {k: v for k, v in spec.items() if k not in ("cell_id", "path", "params")}
    return short_hash({**core, "params": params})


def replicates(section: Mapping[str, Any], protocol: str) -> int:
    """Runs per protocol × model × variant: ``replicates`` (an integer, or per protocol, 1 if
    the protocol is not listed)."""
    value = section["replicates"]
    return int(value.get(protocol, 1)) if isinstance(value, Mapping) else int(value)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", text).strip("_") or "model"


MANIFEST_SCHEMA: dict[str, pl.DataType] = {
    "cell_id": pl.String(),
    "protocol": pl.String(),
    "model": pl.String(),
    "variant": pl.String(),
    "replicate": pl.Int64(),
    "seed": pl.Int64(),
    "n_agents": pl.Int64(),
    "generations": pl.Int64(),
    "invasion_per_generation": pl.Int64(),
    "matrix_per_generation": pl.Int64(),
    "path": pl.String(),
    "parser_version": pl.Int64(),  # EVOLUTION_PARSER_VERSION: the parser that read the cell's answers
}
"""Columns of ``results/evolution/cells.tsv`` (store table ``evolution_cells``), read back with exactly these types."""
register_tables({"evolution_cells": MANIFEST_SCHEMA})


COMPARISONS_OUTPUT = "results/comparisons/evolution.parquet"
"""The ``evolution_comparisons`` rule's output (the store's ``comparisons`` table, evolution's rows)."""


class EvolutionStudy:
    """The third study of the benchmark (the :class:`~coopeval.studies.base.Study` contract).

    Parameters
    ----------
    checkpoint_root:
        Folder of per-generation checkpoints (e.g. ``results/.evolution``); ``None`` keeps
        everything in memory (tests). Never a declared output.
    prompts_dir:
        The evolution prompt templates (default: the study's ``prompts/`` folder).
    agent_factory:
        ``(model entry, settings) -> RunAgents``; default :func:`run_agents` (tests inject
        stand-in LLMs here).
    """

    name = "evolution"
    title = "Evolution: cultural evolution of donation strategies"
    order = 30
    play_tables: tuple[str, ...] = (*TABLES, "llm_calls", "decisions")
    manifest_path = "results/evolution/cells.tsv"
    manifest_table = "evolution_cells"
    default_enabled = True
    rules_file: str | None = "workflow/rules/evolution.smk"
    wildcard_constraints: Mapping[str, str] = {}

    def __init__(
        self,
        checkpoint_root: str | Path | None = None,
        prompts_dir: str | Path | None = None,
        agent_factory: Callable[[Mapping[str, Any], EvolutionSettings], RunAgents] | None = None,
    ) -> None:
        self.checkpoint_root = Path(checkpoint_root) if checkpoint_root is not None else None
        self.prompts_dir = str(prompts_dir) if prompts_dir is not None else str(PROMPTS_DIR)
        self.agent_factory = agent_factory or run_agents

    def _library(self) -> Any:
        from coopeval.core.prompts import PromptLibrary

        return PromptLibrary(self.prompts_dir)

    # -- the Study contract: workflow -------------------------------------------------------------

    def store_inputs(self, config: Mapping[str, Any], cells: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
        """The play tables of every cell (generations are summarised in play) and the paired
        comparisons of its models (rule ``evolution_comparisons``)."""
        return play_table_paths(self, cells, comparisons=COMPARISONS_OUTPUT)

    def report_entries(self, config: Mapping[str, Any]) -> list[ReportEntry]:
        """Each figure's shown format, the interactive lineage view and the OES page
        (category Evolution; captions ``workflow/report/evolution/<stem>.rst``)."""
        formats = config["figures"]["formats"]
        entries = [
            ReportEntry(path, "Evolution", "Figures", f"evolution/{stem}.rst")
            for stem, paths in figure_files(formats, len(config[self.name]["models"])).items()
            for path in paths
            if is_reported(stem, path, formats)
        ]
        entries.append(ReportEntry(OES_PAGE, "Evolution", "Tables", "evolution/oes.rst"))
        return entries

    # -- the Study contract: config ---------------------------------------------------------------

    def config_schema(self) -> dict[str, Any]:
        """The ``evolution:`` section (``config.schema.yaml`` beside this module)."""
        return config_schema_part()

    def check_config(self, config: Mapping[str, Any]) -> None:
        """Known ``bot/evo-…`` bots and model strings, unique variant names and model labels
        (raises :class:`~coopeval.core.errors.ConfigError` naming the key)."""
        validate_evolution_config(config)

    def models(self, config: Mapping[str, Any]) -> list[str]:
        """Every model string of ``evolution.models``."""
        return [str(entry["model"]) for entry in (config.get("evolution") or {}).get("models", [])]

    def cell_models(self, spec: Mapping[str, Any]) -> list[str]:
        """The one model a cell's population runs on (the free rider is a bot)."""
        return [str(spec["model"]["model"])]

    def cost(self, spec: Mapping[str, Any]) -> int:
        """Estimated model calls / 5 (strategies, donations, invasion games, matrix probes);
        scripted populations cost 1."""
        if is_scripted(str(spec["model"]["model"])):
            return 1
        p = spec["params"]
        n, generations = int(p["n_agents"]), int(p["generations"])
        tested = max(0, generations - int(p.get("invasion_first_generation", 1)) + 1)
        probed = max(0, generations - int(p.get("matrix_first_generation", 1)) + 1)
        calls = (n + n * n) * generations + n * n * int(p["invasion_per_generation"]) * tested
        calls += 121 * int(p["matrix_per_generation"]) * int(p["matrix_samples"]) * probed
        return max(1, calls // 5)

    def manifest(self, cells: list[dict[str, Any]]) -> str:
        """One line per cell: cell_id, protocol, model, variant, replicate, seed, n_agents,
        generations, invasion and matrix sizes, path, parser_version (the version of the parser
        that read the cell's answers, so the store says which reading a decision had)."""
        lines = ["\t".join(MANIFEST_SCHEMA)]
        for c in cells:
            p = c["params"]
            values = (c["cell_id"], c["protocol"], c["model_label"], c["variant"], c["replicate"], c["seed"], p["n_agents"],
                      p["generations"], p["invasion_per_generation"], p["matrix_per_generation"], c["path"], c["parser_version"])
            lines.append("\t".join(str(v) for v in values))
        return "\n".join(lines) + "\n"

    def cells(self, config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One spec per protocol × model × variant × replicate, in that nesting order.

        Each spec: study, protocol, model (``{"model", "label"?, "params"}``), model_label,
        variant, replicate, seed, params (every :class:`EvolutionSettings` field, resolved),
        prompt_hash, parser_version, answer_texts_hash (the re-ask and error texts,
        :mod:`coopeval.decisions.texts`), cache_schema_version, cell_id (sha256[:12] of the rest),
        path (``evolution/<protocol>/<variant>/<model>/r<replicate>/<cell_id>``).

        Raises
        ------
        ConfigError
            An invalid ``evolution`` section (naming the key).
        """
        section = validate_evolution_config(config)["evolution"]
        seed = section["seed"] if section["seed"] is not None else int(config.get("seed", 0) or 0)
        library = self._library()
        answer_texts = answer_texts_hash(ANSWER_ERRORS)
        cells = []
        for protocol in section["protocols"]:
            for entry in section["models"]:
                if protocol not in entry.get("protocols", section["protocols"]):
                    continue
                model = {"model": entry["model"], "params": dict(entry.get("params") or {})}
                if entry.get("label"):
                    model["label"] = entry["label"]
                for variant in section["variants"]:
                    if protocol not in variant_protocols(variant):
                        continue
                    settings = EvolutionSettings.from_params(run_settings(section, protocol, variant))
                    params, prompt_hash = settings.as_dict(), library.content_hash(prompt_templates(settings))
                    for replicate in range(1, replicates(section, protocol) + 1):
                        spec: dict[str, Any] = {
                            "study": "evolution",
                            "protocol": protocol,
                            "model": model,
                            "model_label": model_label(entry),
                            "variant": variant_name(variant),
                            "replicate": replicate,
                            "seed": seed,
                            "params": params,
                            "prompt_hash": prompt_hash,
                            "parser_version": EVOLUTION_PARSER_VERSION,
                            "answer_texts_hash": answer_texts,
                            "cache_schema_version": CACHE_SCHEMA_VERSION,
                        }
                        cell_id = short_hash(spec)
                        path = f"{self.name}/{protocol}/{spec['variant']}/{_slug(spec['model_label'])}/r{replicate}/{cell_id}"
                        cells.append({**spec, "cell_id": cell_id, "path": path})
        return cells

    def label(self, spec: Mapping[str, Any]) -> str:
        """E.g. ``"evolution/vh/default/local_smollm2-135m/r1"``."""
        return f"evolution/{spec['protocol']}/{spec['variant']}/{_slug(spec['model_label'])}/r{spec['replicate']}"

    def play(self, spec: Mapping[str, Any], inputs: PlayInputs) -> tuple[dict[str, pl.DataFrame], CallStats]:
        """Play (or resume) every generation of the cell; one frame per :attr:`play_tables`
        and the call counters."""
        maker = DecisionMaker(
            inputs.cache, {}, journal=inputs.journal, max_concurrency=inputs.max_concurrency, max_usd=inputs.max_usd
        )
        root = self.checkpoint_root or (Path(inputs.state_dir) if inputs.state_dir else None)
        tables = asyncio.run(self.play_async(spec, maker, evolution_prompts(inputs.prompts), root))
        return tables, maker.stats

    async def play_async(
        self, spec: Mapping[str, Any], maker: DecisionMaker, library: Any, checkpoint_root: Path | None = None
    ) -> dict[str, pl.DataFrame]:
        """:meth:`play` inside a running event loop, with the decision loop ``maker``, the
        prompt templates ``library`` and per-generation checkpoints below ``checkpoint_root``."""
        settings = EvolutionSettings.from_params(spec["params"])
        prompts = EvolutionPrompts(library.restricted(prompt_templates(settings)), settings)
        base = {
            "cell_id": spec["cell_id"],
            "source": "ours",
            "run": f"r{spec['replicate']}",
            "protocol": spec["protocol"],
            "model": spec["model_label"],
            "variant": spec["variant"],
        }
        run = EvolutionRun(
            settings, maker, prompts, self.agent_factory(spec["model"], settings), int(spec["seed"]), run_key(spec), base, self.label(spec)
        )
        checkpoints = Checkpoints(checkpoint_root, checkpoint_key(spec)) if checkpoint_root is not None else None
        finished = checkpoints.finished() if checkpoints is not None else 0
        parts: dict[str, list[pl.DataFrame]] = {t: [] for t in self.play_tables}
        members: list[Member] | None = None
        for generation in range(1, settings.generations + 1):
            if checkpoints is not None and generation <= finished:
                members, frames = checkpoints.load(generation, self.play_tables)
                frames = relabel(frames, {"cell_id": spec["cell_id"]})
            else:
                members, records = await run.step(generation, members)
                if checkpoints is not None:
                    checkpoints.save(generation, members, records, self.play_tables)
                frames = {t: frame(t, records.tables.get(t, [])) for t in self.play_tables}
            for table in self.play_tables:
                parts[table].append(frames[table])
        return {t: pl.concat(parts[t], how="vertical_relaxed") if parts[t] else frame(t, []) for t in self.play_tables}
