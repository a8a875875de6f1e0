# explorer: the static site of every episode in the store (docs/explorer.md), part of `all`.
# It shows every prompt and raw reply; `coopeval explore STORE --out DIR --no-raw-replies`
# builds a copy without the replies for publishing.


rule explorer:
    input:
        "results/coopeval.duckdb",
    output:
        "results/explorer/index.html",
    log:
        "results/logs/explorer.log",
    localrule: True
    conda:
        "../envs/coopeval.yaml"
    script:
        "../scripts/explorer.py"
