# judge: an LLM labels the reasoning of CoT agents' action decisions with the justification
# taxonomy (docs/protocol/design-checks.md#judge). Every call is cached and re-asked like a player's. Judging every eligible
# decision (judge.sample_size: 0) runs one judge_shard job per (mechanism, game) as soon as its
# cells are played; a sample is one shard ("all"). `judge` gathers the shards' tables
# (coopeval.studies.coopeval.judge.shards). Nothing to judge (no CoT agent) gives empty outputs.

JUDGE = config["judge"]
JUDGE_LOCAL = judge_has_work(config) and uses_local_llm(JUDGE["model"])
JUDGE_CONCURRENCY = JUDGE.get("max_concurrency") or config["max_concurrency"]
JUDGE_REMOTE = (
    judge_has_work(config) and not JUDGE_LOCAL and not is_scripted(JUDGE["model"])
)
JUDGE_SHARDS = judge_shards(CELLS, int(JUDGE.get("sample_size") or 0))
PLAYED_FIRST.update(c["cell_id"] for cells in JUDGE_SHARDS.values() for c in cells)


rule judge_shard:
    input:
        decisions=lambda wildcards: [
            cell_file("play", c, "decisions") for c in JUDGE_SHARDS[wildcards.shard]
        ],
        taxonomy=JUDGE["taxonomy"],
        template=f"{config['prompts_dir']}/judge/judge.txt",
        prompts=PROMPT_FILES,
    output:
        judgements="results/judge/shards/{shard}/judgements.parquet",
        llm_calls="results/judge/shards/{shard}/llm_calls.parquet",
    log:
        "results/logs/judge/{shard}.log",
    wildcard_constraints:
        shard="|".join(JUDGE_SHARDS),
    # as the cells it reads (common.smk, PLAYED_FIRST): a shard whose cells are played starts at
    # once, so judging runs beside the rest of the play
    priority: FIRST_PRIORITY
    conda:
        "../../envs/coopeval.yaml"
    # one thread, as every embedded-model job: the texts do not depend on --cores
    threads: 1
    resources:
        local_llm=1 if JUDGE_LOCAL else 0,
        api_calls=JUDGE_CONCURRENCY if JUDGE_REMOTE else 0,
    params:
        judge=JUDGE,
        agents=config["agents"],
        games=config["games"],
        seed=config["seed"],
        cache_dir=config["cache_dir"],
        max_concurrency=JUDGE_CONCURRENCY,
        max_usd=config["max_usd"],
        retry_failed=config["retry_failed"],
    script:
        "../../scripts/judge.py"


rule judge:
    input:
        judgements=expand(rules.judge_shard.output.judgements, shard=JUDGE_SHARDS),
        llm_calls=expand(rules.judge_shard.output.llm_calls, shard=JUDGE_SHARDS),
    output:
        **JUDGE_OUTPUTS,
    log:
        "results/logs/judge.log",
    localrule: True
    conda:
        "../../envs/coopeval.yaml"
    script:
        "../../scripts/judge_gather.py"
