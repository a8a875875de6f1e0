"""Snakemake adapter: write each study's cell manifest (text computed by the package)."""

from coopeval.pipeline.joblog import log_to

log_to(snakemake.log[0])

from coopeval.pipeline.plugins import load_plugins  # noqa: E402

load_plugins(snakemake.config)  # the config's plugin games, mechanisms, providers and studies register at import

from pathlib import Path  # noqa: E402

for path, text in snakemake.params.manifests.items():
    Path(path).write_text(text, encoding="utf-8")
