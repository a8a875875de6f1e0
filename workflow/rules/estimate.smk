# estimate: calls, tokens, dollars and a wall-time bound of the configured run, from a simulated
# run with scripted stand-ins (coopeval.estimate; docs/estimate.md). No key, no model call; not
# part of `all`. The same as `coopeval estimate --out results/estimate.json` with this config.


rule estimate:
    input:
        prompts=PROMPT_FILES,
    output:
        "results/estimate.json",
    log:
        "results/logs/estimate.log",
    localrule: True
    conda:
        "../envs/coopeval.yaml"
    script:
        "../scripts/estimate.py"
