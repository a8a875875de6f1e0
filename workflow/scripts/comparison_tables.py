"""Snakemake adapter: the comparison tables (comparisons.{csv,md,tex}) from the store's comparisons table."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from pathlib import Path  # noqa: E402

from coopeval.studies.coopeval.comparison_outputs import comparison_tables_from_store  # noqa: E402

comparison_tables_from_store(snakemake.input[0], Path(snakemake.output[0]).parent)
