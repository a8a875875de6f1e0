"""Snakemake adapter: the report's run summary page (agents, decisions, failures, cost, judge)."""

from coopeval.pipeline.joblog import log_to

log_to(snakemake.log[0])

from coopeval.pipeline.plugins import load_plugins  # noqa: E402

load_plugins(snakemake.config)  # the config's plugin games, mechanisms, providers and studies register at import

from coopeval.studies.coopeval.figures.run_page import render_run_summary  # noqa: E402

render_run_summary(
    snakemake.input[0],
    snakemake.output[0],
    agents=snakemake.params.agents,
    games=snakemake.params.games,
    mechanisms=snakemake.params.mechanisms,
    judge=snakemake.params.judge,
    seed=snakemake.params.seed,
    replicates=snakemake.params.replicates,
)
