"""Snakemake adapter: raw play records → δ-weighted scores (coopeval.studies.coopeval.parse)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

import polars as pl  # noqa: E402

from coopeval.core.io import write_parquet_atomic  # noqa: E402
from coopeval.studies.coopeval.parse import matchup_scores  # noqa: E402

scores = matchup_scores(pl.read_parquet(snakemake.input.decisions), pl.read_parquet(snakemake.input.matchups))
write_parquet_atomic(scores, snakemake.output.scores)
