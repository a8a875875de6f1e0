"""Snakemake adapter: the paper's tables for our own runs, from the store (read-only).

The rule's params are :func:`coopeval.studies.coopeval.tables.from_store.tables_settings` of
the config, passed through unchanged."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from pathlib import Path  # noqa: E402

from coopeval.studies.coopeval.tables.from_store import tables_from_store  # noqa: E402

tables_from_store(snakemake.input[0], Path(snakemake.output[0]).parent, **dict(snakemake.params.items()))
