"""Snakemake adapter: every pair of gossip models compared (Parquet rows for the store)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.studies.gossip.comparisons import write_gossip_comparisons  # noqa: E402

write_gossip_comparisons(list(snakemake.input), snakemake.output[0])
