"""Snakemake adapter: every pair of CoopEval agents compared (Parquet rows for the store)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.studies.coopeval.comparison_outputs import write_comparisons  # noqa: E402

write_comparisons(list(snakemake.input.scores), list(snakemake.input.metrics), snakemake.output[0],
                  steps=snakemake.params.steps, lr=snakemake.params.lr, dr_rule=snakemake.params.dr_rule)
