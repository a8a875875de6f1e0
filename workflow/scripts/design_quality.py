"""Snakemake adapter: NS/WD of every submitted design (coopeval.studies.coopeval.design_quality, docs/protocol/design-checks.md#ns-wd)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

import sys  # noqa: E402

import polars as pl  # noqa: E402

from coopeval.core.io import write_parquet_atomic  # noqa: E402
from coopeval.core.schemas import empty_frame  # noqa: E402
from coopeval.studies.coopeval.design_quality import (  # noqa: E402
    design_quality_rows,
    design_quality_summary,
)

paths = [snakemake.input.designs] if isinstance(snakemake.input.designs, str) else list(snakemake.input.designs)
frames = [f for f in (pl.read_parquet(p) for p in paths) if f.height]
designs = pl.concat(frames, how="diagonal_relaxed") if frames else empty_frame("designs")
rows = design_quality_rows(designs, game_params=snakemake.params.get("game_params", {}))
summary = design_quality_summary(rows, designs)
write_parquet_atomic(rows, snakemake.output.rows)
write_parquet_atomic(summary, snakemake.output.summary)
print(
    f"design_quality: {rows.height} designs from {len(paths)} file(s); NS {rows['ns'].sum()}, WD {rows['wd'].sum()}",
    file=sys.stderr,
)
