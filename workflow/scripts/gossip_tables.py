"""Snakemake adapter: the gossip study's Tables 1-2 layout (CSV, Markdown, LaTeX, report page)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.pipeline.outputs import output_dir  # noqa: E402
from coopeval.studies.gossip.figures import render_tables  # noqa: E402

render_tables(
    snakemake.input[0],
    snakemake.params.testbeds,
    output_dir(snakemake.output.tables),
    output_dir(snakemake.output.pages),
)
