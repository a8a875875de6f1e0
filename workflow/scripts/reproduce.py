"""Snakemake adapter: `coopeval reproduce` on the released data folder in config `reference_data`."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from pathlib import Path  # noqa: E402

from coopeval.studies.coopeval.reference.cli import reproduce  # noqa: E402
from coopeval.studies.coopeval.tables.defaults import TableSettings  # noqa: E402
from coopeval.studies.coopeval.tables.roster import roster_file_agents  # noqa: E402

reproduce(
    snakemake.input.data,
    Path(snakemake.output.store).parent,
    settings=TableSettings(
        dr_rule=snakemake.params.dr_rule,
        n_bootstrap=snakemake.params.bootstrap,
        steps=snakemake.params.steps,
        lr=snakemake.params.lr,
        columns=roster_file_agents(snakemake.input.roster),
    ),
)
