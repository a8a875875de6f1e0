"""Snakemake adapter: every configured study's prompt sensitivity tables as the store's
``sensitivity_*`` Parquet files (docs/paraphrases.md#the-sensitivity-report)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.evaluation.sensitivity_store import (  # noqa: E402
    SENSITIVITY_STORE_FILES,
    write_sensitivity_store_rows,
)

write_sensitivity_store_rows(dict(snakemake.params.reports), {name: snakemake.output[name] for name in SENSITIVITY_STORE_FILES})
