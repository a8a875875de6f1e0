"""Snakemake adapter: play one cell of one study (see coopeval.pipeline.play)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

import os  # noqa: E402

# the embedded model computes with this job's threads (1; the local_llm resource in workflow/rules/common.smk)
os.environ.setdefault("COOPEVAL_LLAMA_THREADS", str(snakemake.threads))

from coopeval.pipeline.play import run_cell  # noqa: E402

run_cell(
    study=snakemake.params.study,
    spec=snakemake.params.spec,
    outputs=dict(snakemake.output.items()),
    cache_dir=snakemake.params.cache_dir,
    journal_dir=snakemake.params.journal_dir,
    prompts_dir=snakemake.input.prompts_dir,
    max_concurrency=snakemake.params.max_concurrency,
    max_usd=snakemake.params.max_usd,
)
