"""Snakemake adapter: Mean, replicator Fitness and deviation ratings of one cell."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

import polars as pl  # noqa: E402

from coopeval.core.io import write_parquet_atomic  # noqa: E402
from coopeval.studies.coopeval.evaluate import evaluate_cell  # noqa: E402
from coopeval.studies.coopeval.mechanisms.catalog import mechanism_info  # noqa: E402
from coopeval.studies.coopeval.tables.roster import table_agents  # noqa: E402

matchups = pl.read_parquet(snakemake.input.matchups)
scores = pl.read_parquet(snakemake.input.scores)
game = snakemake.wildcards.game
ids = {
    "cell_id": snakemake.wildcards.cell,
    "source": "ours",
    "run": matchups["run"][0] if matchups.height else "",
    "mechanism": snakemake.wildcards.mechanism,
    "game": matchups["game"][0] if matchups.height else game,
}
metrics, trajectory = evaluate_cell(
    scores,
    matchups,
    ids,
    has_metagame=not mechanism_info(snakemake.wildcards.mechanism).population_game,
    steps=snakemake.params.steps,
    lr=snakemake.params.lr,
    dr_rule=snakemake.params.dr_rule,
    # the LLM Average is over the LLM agents of the cell's roster
    llm=table_agents(snakemake.params.agents).llm,
)
write_parquet_atomic(metrics, snakemake.output.metrics)
write_parquet_atomic(trajectory, snakemake.output.trajectory)
