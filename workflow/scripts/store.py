"""Snakemake adapter: gather every stage's Parquet into the DuckDB store (its single writer)."""

from coopeval.pipeline.joblog import log_to

log_to(snakemake.log[0])

import sys  # noqa: E402

from coopeval.pipeline.plugins import load_plugins  # noqa: E402
from coopeval.pipeline.store import build_store  # noqa: E402

load_plugins(snakemake.config)  # a plugin study's tables register their schemas at import

tables = {name: list(snakemake.input[name]) for name in snakemake.params.tables}
counts = build_store(tables, snakemake.output[0], manifests=snakemake.params.manifest_tables)
print("store:", ", ".join(f"{k}={v}" for k, v in sorted(counts.items())), file=sys.stderr)
