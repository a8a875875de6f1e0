# play: one job per cell (game x mechanism x replicate); every model call is cached.


rule play:
    input:
        prompts=PROMPT_FILES,
        prompts_dir=config["prompts_dir"],
    output:
        decisions="results/play/{mechanism}/{game}/{cell}/decisions.parquet",
        llm_calls="results/play/{mechanism}/{game}/{cell}/llm_calls.parquet",
        matchups="results/play/{mechanism}/{game}/{cell}/matchups.parquet",
        designs="results/play/{mechanism}/{game}/{cell}/designs.parquet",
        votes="results/play/{mechanism}/{game}/{cell}/votes.parquet",
        selections="results/play/{mechanism}/{game}/{cell}/selections.parquet",
    log:
        "results/logs/play/{mechanism}/{game}/{cell}.log",
    priority: play_priority
    conda:
        "../envs/coopeval.yaml"
    threads: 1
    resources:
        local_llm=lambda wildcards: 1 if uses_local_llm(wildcards) else 0,
    params:
        spec=lambda wildcards: CELL_BY_ID[wildcards.cell],
        cache_dir=config["cache_dir"],
        max_concurrency=config["max_concurrency"],
        max_usd=config["max_usd"],
    script:
        "../scripts/play.py"


rule parse:
    input:
        decisions="results/play/{mechanism}/{game}/{cell}/decisions.parquet",
        matchups="results/play/{mechanism}/{game}/{cell}/matchups.parquet",
    output:
        scores="results/parse/{mechanism}/{game}/{cell}/scores.parquet",
    log:
        "results/logs/parse/{mechanism}/{game}/{cell}.log",
    conda:
        "../envs/coopeval.yaml"
    script:
        "../scripts/parse.py"
