"""Snakemake adapter: the estimate of the run's config into the rule's output (coopeval.estimate)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.estimate.cli import write_estimate  # noqa: E402

write_estimate(snakemake.config, snakemake.output[0])
