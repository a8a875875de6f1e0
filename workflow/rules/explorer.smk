# explorer: the static site of every episode in the store (docs/explorer.md), part of `all`.
# It shows every prompt and raw reply; `coopeval explore STORE --out DIR --no-raw-replies`
# builds a copy without the replies for publishing.


rule explorer:
    input:
        "results/coopeval.duckdb",
        # the result tables: the CoopEval leaderboard's rows over the games and per-game intervals over match-ups
        lambda wildcards: (
            ["results/tables/aggregate.csv", "results/tables/per_game.csv"]
            if "coopeval" in STUDIES
            else []
        ),
    output:
        "results/explorer/index.html",
    log:
        "results/logs/explorer.log",
    localrule: True
    conda:
        "../envs/coopeval.yaml"
    script:
        "../scripts/explorer.py"
