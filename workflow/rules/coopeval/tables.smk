# tables: the paper's per-game, aggregate and design-quality tables, built by the same code
# for our own runs (from the store) and for the authors' released data (reproduce).

from coopeval.studies.coopeval.tables.render import TABLE_FILES as _TABLE_NAMES
from coopeval.studies.coopeval.tables.roster import table_agents as _table_agents

_AGENT_COLUMNS = _table_agents(config["agents"])

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
        dr_rule=config["evaluation"]["dr_rule"],
        bootstrap=config["tables"]["bootstrap"],
        seed=config["seed"],
        steps=config["evaluation"]["steps"],
        lr=config["evaluation"]["lr"],
        agent_order=list(_AGENT_COLUMNS.order),
        agent_labels=dict(_AGENT_COLUMNS.labels),
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
