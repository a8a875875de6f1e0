"""Snakemake adapter: the paper tables (the CSV files of the `tables` rule) as HTML pages for the report."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.pipeline.outputs import output_dir  # noqa: E402
from coopeval.studies.coopeval.figures.run_page import render_table_pages  # noqa: E402

render_table_pages(
    output_dir(snakemake.input),
    output_dir(snakemake.output),
    snakemake.params.tables,
    snakemake.params.mechanisms,
    snakemake.params.games,
)
