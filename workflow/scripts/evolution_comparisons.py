"""Snakemake adapter: every pair of evolution models compared (Parquet rows for the store)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.studies.evolution.comparisons import write_evolution_comparisons  # noqa: E402

write_evolution_comparisons(list(snakemake.input.generations), list(snakemake.input.invasions), snakemake.output[0])
