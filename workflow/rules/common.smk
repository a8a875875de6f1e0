# Shared by all rules: config validation, the cells of every configured study, input functions.
# Wiring only: every decision (which cells run the embedded model, who is judged) is taken by
# the package. API keys are checked by each job that calls a provider, before its first call
# (coopeval.agents.registry.missing_key_error), so a dry run needs none. Nothing here imports litellm, llama.cpp or duckdb.

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from snakemake.exceptions import WorkflowError
from snakemake.io import is_flagged

from coopeval.core.io import write_text_if_changed
from coopeval.pipeline.config import (
    EFFECTIVE_CONFIG_PATH,
    ConfigError,
    config_summary,
    effective_config_yaml,
    validate_config,
)
from coopeval.pipeline.studies import (
    all_cells,
    cell_api_slots,
    cell_uses_local_llm,
    configured_models,
    configured_studies,
    empty_studies_error,
    FIRST_PRIORITY,
    local_llm_jobs,
    play_priority,
    report_entries,
    run_start_errors,
    store_inputs,
)
from coopeval.pipeline.studies import prompts_dir as study_prompts_dir
from coopeval.pipeline.studies import rules_files as study_rules_files
from coopeval.pipeline.studies import wildcard_constraints as study_wildcards
from coopeval.studies.base import figure_file, play_file, table_page_file

# validate_config first imports the config's `plugins` (modules that may register a study, game,
# mechanism or provider), so everything below sees the registries with the plugins' entries.
try:
    _validated = validate_config(config)
except ConfigError as error:
    raise WorkflowError(str(error)) from None
config.clear()
config.update(_validated)

# How many jobs may run the embedded llama.cpp model at once, when the run provides no
# `local_llm` resource (command line `--resources local_llm=N` or a profile's `resources:`):
# the cores the run may use, capped at the usable CPUs (coopeval.pipeline.studies.local_llm_jobs).
# Declared here, not in an auto-loaded workflow profile, because Snakemake lets a workflow
# profile override a user's `--profile` key by key. A play job computes with one thread, so the
# run never oversubscribes the CPU and every job's texts are those of a one-thread runtime.
_local_llm_source = "your --resources or profile"
if "local_llm" not in workflow.global_resources:
    workflow.register_resource(
        "local_llm",
        local_llm_jobs(
            workflow.global_resources["_cores"].value,
            workflow.global_resources["_nodes"].value,
        ),
    )
    _local_llm_source = "workflow default: --cores capped at the usable CPUs; set resources: local_llm: N in a profile to change it"
if workflow.is_main_process:
    print(
        f"coopeval: local_llm = {workflow.global_resources['local_llm'].value} "
        f"embedded-model jobs at once ({_local_llm_source})",
        file=sys.stderr,
    )

STUDIES = {study.name: study for study in configured_studies(config)}
CELLS_BY_STUDY = all_cells(config)
if _empty := empty_studies_error(CELLS_BY_STUDY):
    raise WorkflowError(_empty)
CELL_BY_ID = {c["cell_id"]: c for cells in CELLS_BY_STUDY.values() for c in cells}
# The cells a later model stage reads (the judge's: coopeval/judge.smk adds them), played first
# (coopeval.pipeline.studies.play_priority).
PLAYED_FIRST = set()
PROMPT_FILES = sorted(str(p) for p in Path(config["prompts_dir"]).glob("*.txt"))
# Everything below is derived from the study registry (coopeval.pipeline.studies): the tables
# the `store` rule gathers (table -> Parquet files) and the files the report embeds.
STORE_INPUTS = store_inputs(config, CELLS_BY_STUDY)
REPORT_ENTRIES = report_entries(config)

# Once per run (not in the per-job processes of cluster executors): what runs, to stderr, and
# the merged config into results/ (rewritten only when it changed: no rule reads it, no rerun).
# Merge order: the Snakefile's configfile, then --configfile overlays, then --config values.
if workflow.is_main_process:
    _overlays = [Path(p) for p in workflow.config_settings.configfiles]
    _sources = [
        str(p) for p in workflow.configfiles if Path(p).absolute() not in _overlays
    ]
    _sources += [os.path.relpath(p) for p in _overlays]
    _sources += ["--config"] if workflow.config_settings.config else []
    print(config_summary(config, CELLS_BY_STUDY, _sources), file=sys.stderr)


onstart:
    # On a cluster, SIGTERM cancels the run's jobs as Ctrl-C does (coopeval.pipeline.sigterm).
    from coopeval.pipeline.sigterm import sigterm_cancels_remote_jobs

    sigterm_cancels_remote_jobs(workflow)
    # every job process imports coopeval: its bytecode, written here once, saves each a compile
    from coopeval.pipeline.bytecode import precompile_package

    precompile_package()
    # the packaged model's weights re-encoded (Q8_0) once, before jobs that would race to write them
    from coopeval.agents.local.encoding import prepare_weights

    prepare_weights(configured_models(config))
    # litellm's provider table costs its 1-4 s import: asked here, once per run before the
    # first job (a dry run skips it), not while every job process parses this file.
    _problems = run_start_errors(config)
    if _problems:
        raise WorkflowError("invalid configuration:\n  " + "\n  ".join(_problems))
    # the run's estimated dollar bound against its budget (docs/estimate.md)
    if config["max_usd"]:
        from coopeval.estimate.report import budget_error

        if (_over_budget := budget_error(config)) is not None:
            raise WorkflowError(_over_budget)
    # prompts that will outgrow a model's known context window (docs/estimate.md#context-windows)
    from coopeval.estimate.windows import print_window_warnings

    print_window_warnings(config)
    write_text_if_changed(
        EFFECTIVE_CONFIG_PATH, effective_config_yaml(config, _sources)
    )


# `cell` (12 hex digits) and each registered study's own wildcards
wildcard_constraints:
    **study_wildcards(),


def _play_output(study):
    return {
        table: play_file(f"{study.name}/{{cellpath}}/{{cell}}", table)
        for table in study.play_tables
    }


def report_caption(name):
    """Absolute path of a caption file in workflow/report/ (Snakemake resolves relative
    caption paths against the including Snakefile, not this file); an absolute name (a
    plugin's own caption) is kept."""
    return str(Path(workflow.basedir) / "workflow" / "report" / name)


def reported(paths):
    """`paths`, each flagged for the report when a configured study declares it a report
    entry (REPORT_ENTRIES: caption, category, subcategory), else unchanged."""
    flagged = []
    for path in paths:
        entry = REPORT_ENTRIES.get(str(path))
        if entry is not None:
            path = report(
                path,
                caption=report_caption(entry.caption),
                category=entry.category,
                subcategory=entry.subcategory,
            )
        flagged.append(path)
    return flagged


def figure_paths(stems):
    """results/figures/<stem>.<format> for every stem and configured figure format."""
    return [
        figure_file(stem, fmt) for stem in stems for fmt in config["figures"]["formats"]
    ]


def unflagged_report_entries():
    """Report entries that no rule declares as a report-flagged output (checked once every
    rule is defined, at the end of the Snakefile)."""
    flagged = {
        str(path)
        for rule in workflow.rules
        for path in rule.output
        if is_flagged(path, "report")
    }
    return sorted(set(REPORT_ENTRIES) - flagged)


def study_prompt_files(study):
    return sorted(str(p) for p in Path(study_prompts_dir(study, config)).glob("*.txt"))
