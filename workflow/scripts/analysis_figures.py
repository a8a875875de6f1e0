"""Snakemake adapter: figures of the analyses and the judge's labels, from the store (read-only)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.decisions.taxonomy import load_taxonomy  # noqa: E402
from coopeval.pipeline.outputs import output_dir  # noqa: E402
from coopeval.studies.coopeval.figures.render_analyses import render_analysis_figures  # noqa: E402

render_analysis_figures(
    snakemake.input.store,
    output_dir(snakemake.output),
    snakemake.params.mechanisms,
    snakemake.params.games,
    snakemake.params.formats,
    labels=load_taxonomy(snakemake.input.taxonomy).labels,
    denominator=snakemake.params.denominator,
)
