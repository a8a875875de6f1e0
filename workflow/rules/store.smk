# store: the only writer of results/coopeval.duckdb; check: fail on too many failed decisions.


rule store:
    input:
        play=cell_files("play", PLAY_TABLES),
        scores=cell_files("parse", ["scores"]),
        evaluate=cell_files("evaluate", ["metrics", "trajectory"]),
        design_quality=rules.design_quality.output,
        judge=rules.judge.output,
        cells="results/cells.tsv",
    output:
        "results/coopeval.duckdb",
    log:
        "results/logs/store.log",
    localrule: True
    conda:
        "../envs/coopeval.yaml"
    script:
        "../scripts/store.py"


rule check_failures:
    input:
        "results/coopeval.duckdb",
    output:
        "results/checks/failures.txt",
    log:
        "results/logs/check_failures.log",
    localrule: True
    conda:
        "../envs/coopeval.yaml"
    params:
        max_failed=config["max_failed_decisions"],
    script:
        "../scripts/check_failures.py"
