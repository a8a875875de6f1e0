# tables: the paper's per-game, aggregate and design-quality tables, built by the same code
# for our own runs (from the store) and for the authors' released data (reproduce).

TABLE_FILES = expand(
    "results/tables/{table}.{ext}",
    table=["per_game", "aggregate", "design_quality"],
    ext=["csv", "md", "tex"],
)


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
    script:
        "../../scripts/tables.py"


# `snakemake --cores 2 reproduce`: import the released data in config `reference_data` and
# regenerate the paper's tables into results/reproduce/.
rule reproduce:
    input:
        ancient(config["reference_data"]),
    output:
        store="results/reproduce/coopeval.duckdb",
        tables=expand(
            "results/reproduce/{table}.{ext}",
            table=["per_game", "aggregate", "design_quality"],
            ext=["csv", "md", "tex"],
        ),
    log:
        "results/logs/reproduce.log",
    conda:
        "../../envs/coopeval.yaml"
    params:
        dr_rule=config["evaluation"]["dr_rule"],
        bootstrap=config["tables"]["bootstrap"],
    script:
        "../../scripts/reproduce.py"
