"""Snakemake adapter: fail the final target when failed decisions exceed max_failed_decisions."""

from coopeval.pipeline.joblog import log_to

log_to(snakemake.log[0])

from coopeval.pipeline.plugins import load_plugins  # noqa: E402

load_plugins(snakemake.config)  # the config's plugin games, mechanisms, providers and studies register at import

from coopeval.pipeline.checks import check_failed_decisions  # noqa: E402

check_failed_decisions(snakemake.input[0], snakemake.output[0], snakemake.params.max_failed)
