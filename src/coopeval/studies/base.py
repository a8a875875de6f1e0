"""The ``Study`` contract: what the generic workflow needs from each study (docs/architecture.md).

A study (CoopEval, gossip, evolution) declares its part of the config schema, enumerates its
cells (the units Snakemake hashes), plays one cell through the shared decision loop and returns
the records of the tables it declared in :data:`coopeval.core.schemas.SCHEMAS`. The generic
``play``, ``manifest`` and ``store`` rules, the ``all`` target, the wildcard constraints and the
Snakemake report work from this contract only; a study adds one rules file for its own
downstream stages (metrics, figures, tables) and a target rule named after it.

Adding a study
--------------
1. A package (here under ``coopeval.studies``, or any importable module outside ``src/``) with a
   class satisfying :class:`Study`, its tables registered with
   :func:`coopeval.core.schemas.register_tables`.
2. One registration line, ``register_study(MyStudy())``: in :mod:`coopeval.pipeline.studies`
   for a shipped study, or at import in a plugin module
   (:func:`coopeval.pipeline.studies.register_study`).
3. Its rules file (:attr:`Study.rules_file`), which the Snakefile includes in registry order.

Plugins
-------
The config key ``plugins: [importable.module, ...]`` names modules the workflow imports before
it validates the config (and every job imports before it looks a study up), so a module outside
``src/`` may register a study, a game, a mechanism or a provider at import. The hook is only
"import these modules first"; see :mod:`coopeval.pipeline.plugins` and the toy study in
``tests/plugins/toy_study.py``, which runs end to end through the smoke workflow.

Studies never import each other (checked by import-linter); they import the engine below them
(core, games, decisions, cache, agents, evaluation) and this module.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import polars as pl

from coopeval.agents.maker import CallStats
from coopeval.cache.response_cache import ResponseCache
from coopeval.core.journal import Journal
from coopeval.core.prompts import PromptLibrary


@dataclass(frozen=True)
class ReportEntry:
    """One file the Snakemake report embeds (``snakemake --report report.html``).

    ``path`` is the output file (relative to the workflow folder, e.g.
    ``results/figures/gossip_ablations.svg``); ``category`` and ``subcategory`` place it in the
    report's navigation; ``caption`` is a reStructuredText file below ``workflow/report/`` (or
    an absolute path, for a plugin's own caption).
    """

    path: str
    category: str
    subcategory: str
    caption: str


def figure_file(stem: str, fmt: str) -> str:
    """Where figure ``stem`` is written in format ``fmt`` (``png``, ``svg`` or ``html``):
    ``results/figures/<stem>.<fmt>``."""
    return f"results/figures/{stem}.{fmt}"


def table_page_file(stem: str) -> str:
    """Where the report page of table ``stem`` is written: ``results/report/tables/<stem>.html``."""
    return f"results/report/tables/{stem}.html"


def play_file(cell_path: str, table: str) -> str:
    """The generic ``play`` rule's output of ``table`` for the cell at ``cell_path`` (the
    cell's ``path``, or a wildcard pattern of it): ``results/play/<cell path>/<table>.parquet``."""
    return f"results/play/{cell_path}/{table}.parquet"


def play_table_paths(study: Study, cells: Sequence[Mapping[str, Any]], **outputs: str) -> dict[str, list[str]]:
    """Table → the play job's Parquet file of that table (:func:`play_file`) for every cell of
    ``study``, then each table of ``outputs`` → its one file (a downstream rule's output, e.g.
    ``comparisons="results/comparisons/gossip.parquet"``).

    A study's :meth:`Study.store_inputs` starts from this and adds its downstream tables.
    """
    paths = {table: [play_file(cell["path"], table) for cell in cells] for table in study.play_tables}
    return paths | {table: [path] for table, path in outputs.items()}


@dataclass(frozen=True)
class PlayInputs:
    """Everything a study's :meth:`Study.play` may use besides the cell spec.

    The study builds its :class:`~coopeval.agents.maker.DecisionMaker` (the one decision loop:
    ask → validate → re-ask → cache → record) from these. ``cache`` is the shared response
    cache (``None`` disables caching in tests); ``prompts`` the study's prompt templates;
    ``journal`` the per-cell attempt journal; ``max_concurrency`` the calls in flight at once;
    ``max_usd`` the job's budget in US dollars (0 = no limit); ``state_dir`` a folder where the
    study may keep resumable state between runs of the same cell (e.g. per-generation
    checkpoints; never a declared output; ``None`` = keep nothing).
    """

    cache: ResponseCache | None
    prompts: PromptLibrary
    journal: Journal | None = None
    max_concurrency: int = 8
    max_usd: float = 0.0
    state_dir: str | None = None


class Study(Protocol):
    """One study of the benchmark.

    Attributes
    ----------
    name:
        Snakemake target and ``results/play/<name>/`` folder, e.g. ``"gossip"``.
    title:
        Human-readable name (config summary, docs), e.g. ``"Gossip (ALIGN)"``.
    order:
        Position in the registry (``all``, the ``studies`` default, the rules files' include
        order); lower first.
    rules_file:
        The study's Snakemake rules file (downstream stages and the target rule named
        :attr:`name`): relative to the workflow folder, or absolute (a plugin's own file);
        ``None`` when the study has no stage after ``store`` (its target is then the store).
    wildcard_constraints:
        Snakemake wildcard name → regular expression for the wildcards of its rules files.
    play_tables:
        Names of the tables :meth:`play` returns, each registered in ``coopeval.core.schemas``.
    manifest_path:
        Where the workflow writes :meth:`manifest` (read by the ``store`` rule).
    manifest_table:
        The store table the manifest becomes (``cells`` for CoopEval).
    default_enabled:
        Whether the config's ``studies`` list includes it by default.

    A study whose prompt templates ship with it (package data) may also set ``prompts_dir``
    (a folder path); the play rule then reads its prompts there instead of the config's
    ``prompts_dir`` (:func:`coopeval.pipeline.studies.prompts_dir`).

    Plugins: a study may live outside ``src/``. List its module under the config key
    ``plugins`` (e.g. ``plugins: [my_lab.my_study]``, the module on ``PYTHONPATH``); the
    workflow imports it before validating the config and in every play and store job, and
    the module registers the study with :func:`coopeval.pipeline.studies.register_study`
    (and its tables with :func:`coopeval.core.schemas.register_tables`) at import. The same
    hook serves a module that registers a game, a mechanism or a provider. Example:
    ``tests/plugins/toy_study.py``.
    """

    name: str
    title: str
    order: int
    play_tables: tuple[str, ...]
    manifest_path: str
    manifest_table: str
    default_enabled: bool
    rules_file: str | None

    @property
    def wildcard_constraints(self) -> Mapping[str, str]:
        """See the class docstring (a class attribute satisfies it)."""
        ...

    def config_schema(self) -> dict[str, Any]:
        """The study's part of the config schema: ``{"properties": {...}, "required": [...]}``
        with defaults (a study other than CoopEval keeps its keys under one section, e.g. ``gossip:``)."""
        ...

    def check_config(self, config: Mapping[str, Any]) -> None:
        """Checks a schema cannot express; raises :class:`~coopeval.core.errors.ConfigError`
        naming the field and the fix."""
        ...

    def cells(self, config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Cell specs of a validated config; each has ``cell_id`` (12 hex chars) and ``path``
        (the cell's folder below ``results/<stage>/``, ending in the cell id)."""
        ...

    def models(self, config: Mapping[str, Any]) -> list[str]:
        """Every model string the study calls under ``config`` (for the API-key check)."""
        ...

    def cell_models(self, spec: Mapping[str, Any]) -> list[str]:
        """The model strings one cell calls (for the ``local_llm`` resource)."""
        ...

    def play(self, spec: Mapping[str, Any], inputs: PlayInputs) -> tuple[dict[str, pl.DataFrame], CallStats]:
        """Play one cell; return one frame per name in :attr:`play_tables` and the call counters."""
        ...

    def cost(self, spec: Mapping[str, Any]) -> int:
        """Relative cost of playing a cell (unitless; the play job's scheduling priority)."""
        ...

    def manifest(self, cells: list[dict[str, Any]]) -> str:
        """The study's cell manifest as TSV text (one header line, one line per cell)."""
        ...

    def label(self, spec: Mapping[str, Any]) -> str:
        """Short progress label of a cell, e.g. ``"Repetition/prisoners_dilemma/r1"``."""
        ...

    def store_inputs(self, config: Mapping[str, Any], cells: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
        """Store table → the Parquet files (workflow outputs) the ``store`` rule reads into it,
        for a validated ``config`` and the study's ``cells``. Every table is registered in
        :data:`coopeval.core.schemas.SCHEMAS`; only the engine's shared tables
        (:data:`coopeval.pipeline.studies.SHARED_TABLES`) may be declared by several studies.
        Usually :func:`play_table_paths` plus the study's downstream outputs."""
        ...

    def report_entries(self, config: Mapping[str, Any]) -> list[ReportEntry]:
        """Every file of the study that the Snakemake report embeds, for a validated ``config``
        (the rules flag exactly these outputs with ``report()``)."""
        ...


__all__ = ["CallStats", "PlayInputs", "ReportEntry", "Study", "figure_file", "play_file", "play_table_paths", "table_page_file"]
