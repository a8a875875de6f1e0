# store: the only writer of results/coopeval.duckdb (every configured study's tables, as each
# declares them: STORE_INPUTS from Study.store_inputs, common.smk); check_failures: fail on too
# many failed decisions.


rule store:
    input:
        **STORE_INPUTS,
        manifests=[study.manifest_path for study in STUDIES.values()],
    output:
        "results/coopeval.duckdb",
    log:
        "results/logs/store.log",
    localrule: True
    conda:
        "../envs/coopeval.yaml"
    params:
        tables=sorted(STORE_INPUTS),
        manifest_tables={
            study.manifest_path: study.manifest_table for study in STUDIES.values()
        },
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
