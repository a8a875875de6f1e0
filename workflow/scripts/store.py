"""Snakemake adapter: gather every stage's Parquet into results/coopeval.duckdb (single writer)."""

from coopeval.pipeline.joblog import log_to

log_to(snakemake.log[0])

import sys  # noqa: E402
from collections import defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

from coopeval.pipeline.store import build_store  # noqa: E402

tables = defaultdict(list)
for path in [*snakemake.input.play, *snakemake.input.scores, *snakemake.input.evaluate, *snakemake.input.design_quality, *snakemake.input.judge]:
    name = Path(path).stem
    tables["trajectories" if name == "trajectory" else name].append(path)
counts = build_store(tables, snakemake.output[0], cells_tsv=snakemake.input.cells)
print("store:", ", ".join(f"{k}={v}" for k, v in sorted(counts.items())), file=sys.stderr)
