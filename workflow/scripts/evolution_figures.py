"""Snakemake adapter: the evolution study's figures and OES page from the store (read-only)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.pipeline.outputs import output_dir  # noqa: E402
from coopeval.studies.evolution.figures import render_figures  # noqa: E402

render_figures(
    snakemake.input[0],
    snakemake.params.formats,
    snakemake.params.n_models,
    out_dir=output_dir(snakemake.output.figures),
    oes_path=snakemake.output.oes,
)
