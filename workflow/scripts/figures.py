"""Snakemake adapter: core figures from the store (opened read-only)."""

from coopeval.pipeline.joblog import log_to

log_to(snakemake.log[0])

from coopeval.pipeline.plugins import load_plugins  # noqa: E402

load_plugins(snakemake.config)  # the config's plugin games, mechanisms, providers and studies register at import

from coopeval.pipeline.outputs import output_dir  # noqa: E402
from coopeval.studies.coopeval.figures.render import render_core_figures  # noqa: E402

render_core_figures(
    snakemake.input[0],
    output_dir(snakemake.output),
    snakemake.params.mechanisms,
    snakemake.params.games,
    snakemake.params.formats,
    ablation=snakemake.params.ablation,
)
