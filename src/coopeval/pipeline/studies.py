"""The study registry: every study the workflow can run, by config name, and what the generic
workflow derives from it (store inputs, report entries, wildcard constraints, rules files).

Adding a study is one registration line: :func:`register_study` below for a shipped study, or
the same call at import in a plugin module (config key ``plugins``, :mod:`.plugins`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from coopeval.agents.registry import is_scripted, routing_error, uses_local_llm
from coopeval.agents.registry import required_env as model_env
from coopeval.comparison.record import COMPARISONS_TABLE
from coopeval.core.errors import registry_entry
from coopeval.core.schemas import SCHEMAS
from coopeval.studies.base import ReportEntry, Study
from coopeval.studies.coopeval.study import CoopEvalStudy
from coopeval.studies.evolution.study import EvolutionStudy
from coopeval.studies.gossip.study import GossipStudy

STUDIES: dict[str, Study] = {}
"""Name → study, in registry order (:attr:`Study.order`, then name): the order ``all``, the
``studies`` default and the rules files' includes follow. Filled by :func:`register_study`."""

SHARED_TABLES = ("decisions", "llm_calls", COMPARISONS_TABLE)
"""The engine's tables, which every study (and the CoopEval judge) fills with its own rows
(``comparisons``: :mod:`coopeval.comparison.record`); any other store table is declared by
exactly one study."""

CONTRACT = tuple(Study.__annotations__) + tuple(
    name for name, member in vars(Study).items() if not name.startswith("_") and (callable(member) or isinstance(member, property))
)
"""Attributes and methods a registered study must have (the :class:`Study` protocol)."""


def register_study(study: Study) -> Study:
    """Add ``study`` to :data:`STUDIES` (kept in registry order) and return it.

    Raises
    ------
    TypeError
        If ``study`` lacks a member of the :class:`Study` contract (named).
    ValueError
        If another study of the same name is registered.
    """
    missing = [name for name in CONTRACT if not hasattr(study, name)]
    if missing:
        raise TypeError(f"study {getattr(study, 'name', study)!r} lacks {', '.join(missing)} of the Study contract (coopeval.studies.base)")
    known = STUDIES.get(study.name)
    if known is not None and type(known) is not type(study):
        raise ValueError(f"a study named {study.name!r} is already registered ({type(known).__qualname__}); choose another name")
    ordered = sorted({**STUDIES, study.name: study}.items(), key=lambda item: (item[1].order, item[0]))
    STUDIES.clear()
    STUDIES.update(ordered)
    return study


register_study(CoopEvalStudy())
register_study(GossipStudy())
register_study(EvolutionStudy())


def get_study(name: str) -> Study:
    """The study called ``name``.

    Raises
    ------
    KeyError
        Naming the known studies.
    """
    return registry_entry(STUDIES, name, "study", "studies")


def configured_studies(config: Mapping[str, Any]) -> list[Study]:
    """The studies a validated config runs (its ``studies`` list), in registry order."""
    wanted = set(config["studies"])
    return [study for name, study in STUDIES.items() if name in wanted]


def all_cells(config: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Study name → its cells (each with ``study`` added) for every configured study."""
    return {study.name: [{**cell, "study": study.name} for cell in study.cells(config)] for study in configured_studies(config)}


def required_env(config: Mapping[str, Any]) -> list[str]:
    """API-key variables every model of the configured studies needs (listed by ``coopeval
    estimate``; each job checks its own models' keys before its first call,
    :func:`coopeval.agents.registry.missing_key_error`)."""
    return sorted({name for study in configured_studies(config) for model in study.models(config) for name in model_env(model)})


def configured_models(config: Mapping[str, Any]) -> dict[str, str]:
    """Every model string of the configured studies → the name of a study that plays it."""
    return {model: study.name for study in configured_studies(config) for model in study.models(config)}


def run_start_errors(config: Mapping[str, Any], route: Callable[[str], str | None] = routing_error) -> list[str]:
    """What a validated config can only be checked for when a run starts, one message each
    (empty if none): models of the configured studies that litellm cannot route (an unknown
    provider prefix; imports litellm when a litellm model is configured, hence once per run, in
    the workflow's ``onstart``, before any model call) and a ``cache_dir`` that cannot be
    created (it is created here when missing). ``route`` gives a model's routing problem
    (default :func:`coopeval.agents.registry.routing_error`; ``coopeval estimate`` passes the
    answers its litellm child computed)."""
    problems = ((model, study, route(model)) for model, study in sorted(configured_models(config).items()))
    errors = [f"config ({study} study) model {model!r}: {problem}" for model, study, problem in problems if problem]
    try:
        Path(config["cache_dir"]).mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        errors.append(f"config cache_dir: cannot create {config['cache_dir']!r} ({exc.strerror}); choose a writable folder")
    return errors


def empty_studies_error(cells_by_study: Mapping[str, Sequence[Any]]) -> str | None:
    """The error for configured studies without a cell (``cells_by_study``: see
    :func:`all_cells`), or ``None`` if every study has one."""
    empty = [name for name, cells in cells_by_study.items() if not cells]
    if not empty:
        return None
    return (
        f"config studies: {', '.join(empty)} would run no cell with this config (e.g. every CoopEval agent's "
        "`mechanisms` excludes the configured mechanisms, or an empty gossip or evolution `models` list); "
        "fix the roster or drop the study from `studies`."
    )


FIRST_PRIORITY = 10_000
"""Snakemake priority added to the play jobs of the cells a later model stage reads (the judge's)
and given to that stage's jobs: above the cost of any cell, so those cells are played first and
the stage runs beside the rest of the play instead of alone at the end (docs/running.md)."""


def play_priority(study: Study, spec: Mapping[str, Any], read_early: bool) -> int:
    """The play job's Snakemake priority (unitless): the cell's cost (:meth:`Study.cost`, so the
    longest cells start first), plus :data:`FIRST_PRIORITY` when ``read_early`` (a later model
    stage, the judge, reads the cell)."""
    return study.cost(spec) + (FIRST_PRIORITY if read_early else 0)


def cell_uses_local_llm(study: Study, spec: Mapping[str, Any]) -> bool:
    """Whether playing ``spec`` runs the embedded model (the job takes the ``local_llm`` resource)."""
    return any(uses_local_llm(model) for model in study.cell_models(spec))


def local_llm_jobs(cores: int | None, jobs: int | None, usable: int | None = None) -> int:
    """How many jobs may run the embedded model at once by default (the ``local_llm`` resource
    when the run gives none): the cores the run may use (``--cores``), capped at the CPUs this
    machine lets the process use (``usable``, default
    :func:`~coopeval.agents.local.catalogue.usable_cpus`); each such job computes with one
    thread. A run without ``--cores`` (a cluster executor with ``--jobs``) gets ``jobs``, each
    job on its own node; with neither, one.

    Raises
    ------
    ValueError
        ``cores`` or ``jobs`` below 1.
    """
    from coopeval.agents.local.catalogue import usable_cpus

    for name, value in (("--cores", cores), ("--jobs", jobs)):
        if value is not None and value < 1:
            raise ValueError(f"{name} = {value}: give at least 1")
    if cores is None:
        return jobs or 1
    return max(1, min(cores, usable if usable is not None else usable_cpus()))


def cell_api_slots(study: Study, spec: Mapping[str, Any], max_concurrency: int) -> int:
    """Units of the global ``api_calls`` resource a job playing ``spec`` takes: its per-job cap
    on calls in flight (``max_concurrency``) when it calls a remote model, else 0. With
    ``--resources api_calls=N`` Snakemake then keeps at most N calls in flight over all jobs."""
    remote = any(not is_scripted(m) and not uses_local_llm(m) for m in study.cell_models(spec))
    return int(max_concurrency) if remote else 0


def prompts_dir(study: Study, config: Mapping[str, Any]) -> str:
    """The folder of ``study``'s prompt templates: its own ``prompts_dir`` (prompts shipped as
    package data with the study) or else the config's ``prompts_dir``."""
    own = getattr(study, "prompts_dir", None)
    return str(own) if own else str(config["prompts_dir"])


def store_inputs(config: Mapping[str, Any], cells_by_study: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, list[str]]:
    """Store table → the sorted Parquet files of every configured study (:meth:`Study.store_inputs`
    with its cells from :func:`all_cells`), independent of the order of the studies.

    Raises
    ------
    ValueError
        A table without a registered schema, or a table other than :data:`SHARED_TABLES`
        declared by two studies (both named).
    """
    merged: dict[str, set[str]] = {}
    owner: dict[str, str] = {}
    for study in configured_studies(config):
        for table, paths in study.store_inputs(config, cells_by_study[study.name]).items():
            if table not in SCHEMAS:
                raise ValueError(f"study {study.name} declares store table {table!r} without a schema; register it with coopeval.core.schemas.register_tables")
            if table not in SHARED_TABLES and owner.setdefault(table, study.name) != study.name:
                raise ValueError(f"store table {table!r} is declared by the studies {owner[table]} and {study.name}; each table has one owner")
            merged.setdefault(table, set()).update(str(p) for p in paths)
    return {table: sorted(merged[table]) for table in sorted(merged)}


def report_entries(config: Mapping[str, Any]) -> dict[str, ReportEntry]:
    """Output path → its report entry, over every configured study (:meth:`Study.report_entries`).

    Raises
    ------
    ValueError
        If two entries name the same file.
    """
    entries: dict[str, ReportEntry] = {}
    for study in configured_studies(config):
        for entry in study.report_entries(config):
            if entry.path in entries:
                raise ValueError(f"report entry {entry.path} is declared twice (study {study.name})")
            entries[entry.path] = entry
    return entries


def wildcard_constraints() -> dict[str, str]:
    """Wildcard → regular expression over every registered study, plus the engine's ``cell``
    (a 12-hex-digit cell id).

    Raises
    ------
    ValueError
        If two studies constrain one wildcard differently.
    """
    constraints = {"cell": "[0-9a-f]{12}"}
    for study in STUDIES.values():
        for wildcard, pattern in study.wildcard_constraints.items():
            if constraints.setdefault(wildcard, pattern) != pattern:
                raise ValueError(f"study {study.name} constrains the wildcard {wildcard!r} differently from another study; rename it")
    return constraints


def rules_files(basedir: str | Path) -> list[str]:
    """The rules file of every registered study with one, in registry order, as absolute paths
    (a relative :attr:`Study.rules_file` is relative to the workflow folder ``basedir``).

    Raises
    ------
    FileNotFoundError
        Naming the study whose rules file is missing.
    """
    files = []
    for study in STUDIES.values():
        if study.rules_file is None:
            continue
        path = Path(basedir) / study.rules_file
        if not path.is_file():
            raise FileNotFoundError(f"study {study.name}: rules file {path} does not exist; fix its rules_file")
        files.append(str(path))
    return files
