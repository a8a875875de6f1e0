"""CoopEval as a :class:`~coopeval.studies.base.Study`: cells = mechanism × game × replicate
(plus ablation variants) with the full roster, played by :func:`~.play.play_cell`."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Any

import polars as pl

from coopeval.agents.maker import CallStats
from coopeval.core.charts import report_format
from coopeval.evaluation.sensitivity_store import SENSITIVITY_STORE_FILES
from coopeval.games import GAME_FACTORIES
from coopeval.studies.base import (
    PlayInputs,
    ReportEntry,
    figure_file,
    play_table_paths,
    table_page_file,
)
from coopeval.studies.coopeval.cells import build_cells, cells_tsv, play_cost
from coopeval.studies.coopeval.config_checks import check_config
from coopeval.studies.coopeval.config_schema import config_schema_part
from coopeval.studies.coopeval.figures.catalog import (
    analysis_figures,
    core_figures,
    group_sizes,
    has_ablation,
    table_pages,
)
from coopeval.studies.coopeval.judge.selection import judge_has_work
from coopeval.studies.coopeval.mechanisms.catalog import MECHANISM_INFO
from coopeval.studies.coopeval.play import PLAY_TABLES, play_cell

DESIGN_QUALITY_OUTPUTS = {
    "rows": "results/design_quality/design_quality.parquet",
    "summary": "results/design_quality/design_quality_summary.parquet",
}
"""The ``design_quality`` rule's outputs (store tables ``design_quality`` and ``design_quality_summary``)."""

JUDGE_OUTPUTS = {"judgements": "results/judge/judgements.parquet", "llm_calls": "results/judge/llm_calls.parquet"}
"""The ``judge`` rule's outputs (store tables ``judgements`` and ``llm_calls``)."""

COMPARISONS_OUTPUT = "results/comparisons/coopeval.parquet"
"""The ``comparisons`` rule's output (the store's ``comparisons`` table, CoopEval's rows)."""

RUN_SUMMARY_PAGE = "results/report/run_summary.html"
"""The report's run summary page (the ``run_summary`` rule)."""


def _report_tables() -> tuple[str, ...]:
    """``REPORT_TABLES``: the paper tables shown as report pages (``results/tables/<table>.csv``);
    read when first asked for (the table renderer imports scipy.optimize, which loading a config does not need)."""
    from coopeval.studies.coopeval.tables.render import TABLE_FILES

    return tuple(sorted({str(PurePosixPath(name).stem) for name in TABLE_FILES}))


def __getattr__(name: str) -> Any:
    """``REPORT_TABLES`` (:func:`_report_tables`), computed when imported (PEP 562)."""
    if name == "REPORT_TABLES":
        return _report_tables()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def cell_file(stage: str, cell: Mapping[str, Any], name: str) -> str:
    """A cell's Parquet file of a stage: ``results/<stage>/<cell path>/<name>.parquet``."""
    return f"results/{stage}/{cell['path']}/{name}.parquet"


class CoopEvalStudy:
    """The CoopEval study (arXiv 2604.15267): social dilemmas under six mechanisms."""

    name = "coopeval"
    title = "CoopEval: mechanisms for cooperation in social dilemmas"
    order = 10
    play_tables: tuple[str, ...] = PLAY_TABLES
    manifest_path = "results/cells.tsv"
    manifest_table = "cells"
    default_enabled = True
    rules_file: str | None = "workflow/rules/coopeval.smk"

    @property
    def wildcard_constraints(self) -> dict[str, str]:
        """``mechanism`` and ``game`` folders: the registered mechanism names and game keys."""
        return {"mechanism": "|".join(map(re.escape, MECHANISM_INFO)), "game": "|".join(map(re.escape, GAME_FACTORIES))}

    def config_schema(self) -> dict[str, Any]:
        """CoopEval's keys (top level: ``agents``, ``games``, ``mechanisms`` …)."""
        return config_schema_part()

    def check_config(self, config: Mapping[str, Any]) -> None:
        """See :func:`~.config_checks.check_config`."""
        check_config(config)

    def cells(self, config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every cell of a validated config, each with ``cell_id`` and ``path``
        (``coopeval/<mechanism>/<game>/<cell_id>``)."""
        return [
            {**cell, "path": f"{self.name}/{cell['mechanism']}/{cell['game']}/{cell['cell_id']}"}
            for cell in build_cells(config)
        ]

    def models(self, config: Mapping[str, Any]) -> list[str]:
        """Every model string the configured roster and the judge call."""
        models = [str(a["model"]) for a in config["agents"]]
        if judge_has_work(config):
            models.append(str(config["judge"]["model"]))
        return models

    def cell_models(self, spec: Mapping[str, Any]) -> list[str]:
        """The model strings seated in one cell."""
        return [str(a["model"]) for a in spec["agents"]]

    def play(self, spec: Mapping[str, Any], inputs: PlayInputs) -> tuple[dict[str, pl.DataFrame], CallStats]:
        """Play one cell (see :func:`~.play.play_cell`)."""
        return play_cell(
            spec,
            inputs.cache,
            inputs.prompts,
            inputs.journal,
            max_concurrency=inputs.max_concurrency,
            max_usd=inputs.max_usd,
        )

    def label(self, spec: Mapping[str, Any]) -> str:
        """``<mechanism>/<game>/r<replicate>``."""
        return f"{spec['mechanism']}/{spec['game']}/r{spec['replicate']}"

    def cost(self, spec: Mapping[str, Any]) -> int:
        """See :func:`~.cells.play_cost`."""
        return play_cost(spec)

    def manifest(self, cells: list[dict[str, Any]]) -> str:
        """See :func:`~.cells.cells_tsv`."""
        return cells_tsv(cells)

    def store_inputs(self, config: Mapping[str, Any], cells: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
        """The play tables of every cell, its scores (``parse``), metrics and trajectories
        (``evaluate``), the design quality tables, the judge's tables and the paired comparisons;
        with more than one prompt variant also the prompt sensitivity reports' rows (rule
        ``sensitivity_store_rows``, docs/paraphrases.md)."""
        inputs = play_table_paths(self, cells)
        inputs["scores"] = [cell_file("parse", c, "scores") for c in cells]
        inputs["metrics"] = [cell_file("evaluate", c, "metrics") for c in cells]
        inputs["trajectories"] = [cell_file("evaluate", c, "trajectory") for c in cells]
        inputs["design_quality"] = [DESIGN_QUALITY_OUTPUTS["rows"]]
        inputs["design_quality_summary"] = [DESIGN_QUALITY_OUTPUTS["summary"]]
        inputs["judgements"] = [JUDGE_OUTPUTS["judgements"]]
        inputs["llm_calls"] = [*inputs["llm_calls"], JUDGE_OUTPUTS["llm_calls"]]
        inputs["comparisons"] = [COMPARISONS_OUTPUT]
        if len(config.get("prompt_variants", [])) > 1:
            inputs.update({table: [path] for table, path in SENSITIVITY_STORE_FILES.items()})
        return inputs

    def report_entries(self, config: Mapping[str, Any]) -> list[ReportEntry]:
        """Core and analysis figures (the shown format; category = mechanism, subcategory =
        game), the run summary page and the paper tables' pages; with more than one prompt
        variant also the prompt sensitivity figure and page (docs/paraphrases.md)."""
        shown = report_format(config["figures"]["formats"])
        mechanisms, games = config["mechanisms"], config["games"]
        core = core_figures(mechanisms, games, has_ablation(config["variants"]), len(group_sizes(config)) > 1)
        figures = [*core, *analysis_figures(mechanisms, games)]
        entries = [ReportEntry(figure_file(e.stem, shown), e.category, e.subcategory, e.caption) for e in figures]
        entries.append(ReportEntry(RUN_SUMMARY_PAGE, "Overview", "Run", "run_summary.rst"))
        entries += [
            ReportEntry(table_page_file(e.stem), e.category, e.subcategory, e.caption)
            for e in table_pages(_report_tables(), mechanisms, games)
        ]
        if len(config.get("prompt_variants", [])) > 1:  # docs/paraphrases.md
            # imported here: it imports scipy, which loading a config does not need
            from coopeval.studies.coopeval.analysis.prompt_sensitivity import SENSITIVITY

            entries.append(ReportEntry(figure_file(SENSITIVITY.figure, shown), "Prompt sensitivity", "Figure", "prompt_sensitivity.rst"))
            entries.append(ReportEntry(SENSITIVITY.page, "Prompt sensitivity", "Tables", "prompt_sensitivity_tables.rst"))
        return entries
