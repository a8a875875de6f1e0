"""Snakemake adapter: core figures from the store (opened read-only)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.pipeline.outputs import output_dir  # noqa: E402
from coopeval.studies.coopeval.figures.render import render_core_figures  # noqa: E402

render_core_figures(
    snakemake.input[0],
    output_dir(snakemake.output),
    snakemake.params.mechanisms,
    snakemake.params.games,
    snakemake.params.formats,
    ablation=snakemake.params.ablation,
    group_size=snakemake.params.group_size,
)
