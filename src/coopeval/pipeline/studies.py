"""The study registry: every study the workflow can run, by config name."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from coopeval.studies.base import Study
from coopeval.studies.coopeval.study import CoopEvalStudy
from coopeval.studies.evolution.study import EvolutionStudy
from coopeval.studies.gossip.study import GossipStudy
from coopeval.agents.registry import required_env as model_env
from coopeval.agents.registry import is_scripted, routing_error, uses_local_llm

STUDIES: dict[str, Study] = {study.name: study for study in (CoopEvalStudy(), GossipStudy(), EvolutionStudy())}
"""Name → study, in the order ``all`` lists them."""


def get_study(name: str) -> Study:
    """The study called ``name``.

    Raises
    ------
    KeyError
        Naming the known studies.
    """
    if name not in STUDIES:
        raise KeyError(f"unknown study {name!r}; known studies: {', '.join(STUDIES)}")
    return STUDIES[name]


def configured_studies(config: Mapping[str, Any]) -> list[Study]:
    """The studies a validated config runs (its ``studies`` list), in registry order."""
    wanted = set(config["studies"])
    return [study for name, study in STUDIES.items() if name in wanted]


def all_cells(config: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Study name → its cells (each with ``study`` added) for every configured study."""
    return {study.name: [{**cell, "study": study.name} for cell in study.cells(config)] for study in configured_studies(config)}


def required_env(config: Mapping[str, Any]) -> list[str]:
    """API-key variables every model of the configured studies needs (for Snakemake ``envvars:``)."""
    return sorted({name for study in configured_studies(config) for model in study.models(config) for name in model_env(model)})


def run_start_errors(config: Mapping[str, Any]) -> list[str]:
    """What a validated config can only be checked for when a run starts, one message each
    (empty if none): models of the configured studies that litellm cannot route (an unknown
    provider prefix; imports litellm when a litellm model is configured, hence once per run, in
    the workflow's ``onstart``, before any model call) and a ``cache_dir`` that cannot be
    created (it is created here when missing)."""
    models = {model: study.name for study in configured_studies(config) for model in study.models(config)}
    problems = ((model, study, routing_error(model)) for model, study in sorted(models.items()))
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
        f"config studies: {', '.join(empty)} would run no cell with this config (e.g. every agent's "
        "`mechanisms` excludes the configured mechanisms); fix the roster or drop the study from `studies`."
    )


def cell_uses_local_llm(study: Study, spec: Mapping[str, Any]) -> bool:
    """Whether playing ``spec`` runs the embedded model (the job takes the ``local_llm`` resource)."""
    return any(uses_local_llm(model) for model in study.cell_models(spec))


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
