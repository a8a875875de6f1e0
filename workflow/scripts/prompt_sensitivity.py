"""Snakemake adapter: a study's prompt sensitivity tables, figure and report page
(docs/paraphrases.md#the-sensitivity-report). ``params.source`` names the study module whose
``SENSITIVITY`` (a :class:`coopeval.evaluation.sensitivity_report.SensitivitySource`) declares the report."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from importlib import import_module  # noqa: E402

from coopeval.evaluation.sensitivity_report import (  # noqa: E402
    TABLE_KEYS,
    render_sensitivity_report,
)

render_sensitivity_report(
    import_module(snakemake.params.source).SENSITIVITY,
    list(snakemake.input.metrics),
    snakemake.params.contexts,
    {name: snakemake.output[name] for name in TABLE_KEYS},
    snakemake.params.figure_stem,
    snakemake.output.page,
    snakemake.params.formats,
)
