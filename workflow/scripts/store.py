"""Snakemake adapter: gather every stage's Parquet into the DuckDB store (its single writer)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

import sys  # noqa: E402

from coopeval.pipeline.store import build_store  # noqa: E402

tables = {name: list(snakemake.input[name]) for name in snakemake.params.tables}
counts = build_store(tables, snakemake.output[0], manifests=snakemake.params.manifest_tables)
print("store:", ", ".join(f"{k}={v}" for k, v in sorted(counts.items())), file=sys.stderr)
