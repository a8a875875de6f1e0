# evaluate: Mean, replicator-dynamics Fitness and deviation ratings per cell.


rule evaluate:
    input:
        scores="results/parse/{mechanism}/{game}/{cell}/scores.parquet",
        matchups="results/play/{mechanism}/{game}/{cell}/matchups.parquet",
    output:
        metrics="results/evaluate/{mechanism}/{game}/{cell}/metrics.parquet",
        trajectory="results/evaluate/{mechanism}/{game}/{cell}/trajectory.parquet",
    log:
        "results/logs/evaluate/{mechanism}/{game}/{cell}.log",
    conda:
        "../envs/coopeval.yaml"
    params:
        steps=config["evaluation"]["steps"],
        lr=config["evaluation"]["lr"],
        dr_rule=config["evaluation"]["dr_rule"],
    script:
        "../scripts/evaluate.py"


# One target per mechanism: `snakemake --cores 8 mechanism_Repetition` plays, parses and
# evaluates only that mechanism's cells (run `all` afterwards to refresh the store and figures).
for _mechanism in config["mechanisms"]:

    rule:
        name:
            f"mechanism_{_mechanism}"
        input:
            cell_files("evaluate", ["metrics", "trajectory"], _mechanism),
