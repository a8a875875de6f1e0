"""Snakemake adapter: write each study's cell manifest (text computed by the package)."""

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from pathlib import Path  # noqa: E402

for path, text in snakemake.params.manifests.items():
    Path(path).write_text(text, encoding="utf-8")
