"""Snakemake adapter: the report's run summary page (agents, decisions, failures, cost, judge)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

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
