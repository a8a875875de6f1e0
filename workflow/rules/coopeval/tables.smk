# tables: the paper's per-game, aggregate and design-quality tables, built by the same code
# for our own runs (from the store) and for the authors' released data (reproduce).

from coopeval.studies.coopeval.tables.from_store import (
    tables_settings as _tables_settings,
)
from coopeval.studies.coopeval.tables.render import TABLE_FILES as _TABLE_NAMES

TABLE_FILES = [f"results/tables/{name}" for name in _TABLE_NAMES]


rule tables:
    input:
        "results/coopeval.duckdb",
    output:
        TABLE_FILES,
    log:
        "results/logs/tables.log",
    conda:
        "../../envs/coopeval.yaml"
    params:
        **_tables_settings(config),
    script:
        "../../scripts/tables.py"


# `snakemake --cores 2 reproduce`: import the released data in config `reference_data` and
# regenerate the paper's tables into results/reproduce/.
rule reproduce:
    input:
        data=ancient(config["reference_data"]),
        roster=config["reference_roster"],
    output:
        store="results/reproduce/coopeval.duckdb",
        tables=[f"results/reproduce/{name}" for name in _TABLE_NAMES],
    log:
        "results/logs/reproduce.log",
    conda:
        "../../envs/coopeval.yaml"
    params:
        dr_rule=config["evaluation"]["dr_rule"],
        bootstrap=config["tables"]["bootstrap"],
        steps=config["evaluation"]["steps"],
        lr=config["evaluation"]["lr"],
    script:
        "../../scripts/reproduce.py"
