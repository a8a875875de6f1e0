"""Snakemake adapter: the gossip study's figures from the store (opened read-only)."""

from coopeval.pipeline.joblog import log_to

log_to(snakemake.log[0])

from coopeval.pipeline.plugins import load_plugins  # noqa: E402

load_plugins(snakemake.config)  # the config's plugin games, mechanisms, providers and studies register at import

from coopeval.pipeline.outputs import output_dir  # noqa: E402
from coopeval.studies.gossip.figures import render_figures  # noqa: E402

render_figures(snakemake.input[0], output_dir(snakemake.output), snakemake.params.formats)
