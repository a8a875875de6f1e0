"""Snakemake adapter: the prompt sensitivity tables, figure and report page (docs/paraphrases.md)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.studies.coopeval.figures.sensitivity import render_prompt_sensitivity  # noqa: E402

render_prompt_sensitivity(
    list(snakemake.input.metrics),
    snakemake.params.contexts,
    {name: snakemake.output[name] for name in ("per_variant", "shares", "orderings", "markdown")},
    snakemake.params.figure_stem,
    snakemake.output.page,
    snakemake.params.formats,
)
