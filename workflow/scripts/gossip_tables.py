"""Snakemake adapter: the gossip study's Tables 1-2 layout (CSV, Markdown, LaTeX, report page)."""

from coopeval.pipeline.joblog import log_to

log_to(snakemake.log[0])

from coopeval.pipeline.plugins import load_plugins  # noqa: E402

load_plugins(snakemake.config)  # the config's plugin games, mechanisms, providers and studies register at import

from coopeval.pipeline.outputs import output_dir  # noqa: E402
from coopeval.studies.gossip.figures import render_tables  # noqa: E402

render_tables(
    snakemake.input[0],
    snakemake.params.testbeds,
    output_dir(snakemake.output.tables),
    output_dir(snakemake.output.pages),
)
