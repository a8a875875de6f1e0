"""Snakemake adapter: the gossip study's figures from the store (opened read-only)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.pipeline.outputs import output_dir  # noqa: E402
from coopeval.studies.gossip.figures import render_figures  # noqa: E402

render_figures(snakemake.input[0], output_dir(snakemake.output), snakemake.params.formats)
