"""Snakemake adapter: the paper tables (the CSV files of the `tables` rule) as HTML pages for the report."""

from coopeval.pipeline.joblog import log_to

log_to(snakemake.log[0])

from coopeval.pipeline.plugins import load_plugins  # noqa: E402

load_plugins(snakemake.config)  # the config's plugin games, mechanisms, providers and studies register at import

from coopeval.pipeline.outputs import output_dir  # noqa: E402
from coopeval.studies.coopeval.figures.run_page import render_table_pages  # noqa: E402

render_table_pages(
    output_dir(snakemake.input),
    output_dir(snakemake.output),
    snakemake.params.tables,
    snakemake.params.mechanisms,
    snakemake.params.games,
)
