"""Snakemake adapter: the judge shards' tables into one pair (coopeval.studies.coopeval.judge.shards)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.studies.coopeval.judge.shards import gather_judgements  # noqa: E402

counts = gather_judgements(
    {"judgements": list(snakemake.input.judgements), "llm_calls": list(snakemake.input.llm_calls)},
    {"judgements": snakemake.output.judgements, "llm_calls": snakemake.output.llm_calls},
)
print(f"[judge] gathered {counts['judgements']} judgements, {counts['llm_calls']} calls")
