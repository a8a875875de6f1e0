"""Snakemake adapter: the paper's tables for our own runs, from the store (read-only)."""

from coopeval.pipeline.joblog import log_to

log_to(snakemake.log[0])

from pathlib import Path  # noqa: E402

from coopeval.studies.coopeval.tables.frames import AgentColumns  # noqa: E402
from coopeval.studies.coopeval.tables.from_store import tables_from_store  # noqa: E402

tables_from_store(
    snakemake.input[0],
    Path(snakemake.output[0]).parent,
    dr_rule=snakemake.params.dr_rule,
    n_bootstrap=snakemake.params.bootstrap,
    seed=snakemake.params.seed,
    steps=snakemake.params.steps,
    lr=snakemake.params.lr,
    columns=AgentColumns(tuple(snakemake.params.agent_order), snakemake.params.agent_labels),
)
