"""Snakemake adapter: fail the final target when failed decisions exceed max_failed_decisions."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.pipeline.checks import check_failed_decisions  # noqa: E402

check_failed_decisions(snakemake.input[0], snakemake.output[0], snakemake.params.max_failed)
