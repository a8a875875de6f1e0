"""Snakemake adapter: the paper tables (results/tables/*.csv) as HTML pages for the report."""

from coopeval.pipeline.joblog import log_to

log_to(snakemake.log[0])

from pathlib import Path  # noqa: E402

from coopeval.studies.coopeval.figures.run_page import render_table_pages  # noqa: E402

inputs = [snakemake.input] if isinstance(snakemake.input, str) else list(snakemake.input)
render_table_pages(
    Path(inputs[0]).parent if inputs else "results/tables",
    "results/report/tables",
    snakemake.params.tables,
    snakemake.params.mechanisms,
    snakemake.params.games,
)
