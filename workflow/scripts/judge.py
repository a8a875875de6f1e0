"""Snakemake adapter: the LLM judge of reasoning (coopeval.studies.coopeval.judge.stage, docs/protocol/design-checks.md#judge)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

import os  # noqa: E402

# the embedded model computes with this job's threads (1; the local_llm resource in workflow/rules/common.smk)
os.environ.setdefault("COOPEVAL_LLAMA_THREADS", str(snakemake.threads))

from pathlib import Path  # noqa: E402

from coopeval.studies.coopeval.judge.stage import run_judge  # noqa: E402

paths = (
    [snakemake.input.decisions]
    if isinstance(snakemake.input.decisions, str)
    else list(snakemake.input.decisions)
)
judge = dict(snakemake.params.judge)
judge["taxonomy"] = snakemake.input.taxonomy
run_judge(
    decision_paths=paths,
    outputs={"judgements": snakemake.output.judgements, "llm_calls": snakemake.output.llm_calls},
    judge_config=judge,
    agents=snakemake.params.agents,
    seed=snakemake.params.seed,
    cache_dir=snakemake.params.cache_dir,
    prompts_dir=Path(snakemake.input.template).parent.parent,
    games=snakemake.params.games,
    max_concurrency=snakemake.params.max_concurrency,
    max_usd=snakemake.params.max_usd,
    retry_failed=snakemake.params.retry_failed,
)
