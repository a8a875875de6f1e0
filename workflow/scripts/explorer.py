"""Snakemake adapter: build the explorer site (docs/explorer.md) from the store."""

import sys
from pathlib import Path

from coopeval.pipeline.joblog import start_job

start_job(snakemake.log[0], snakemake.config)  # log, offline litellm, the config's plugins

from coopeval.explorer import build_site  # noqa: E402
from coopeval.explorer.build import PRIVACY_NOTE  # noqa: E402

report = build_site(snakemake.input[0], Path(snakemake.output[0]).parent)
print(
    f"explorer: {report.cells} cells, {report.decisions} decisions, {report.files} files, {report.bytes / 1e6:.1f} MB,"
    f" largest {report.largest[0]} ({report.largest[1]} bytes), {report.seconds:.1f} s",
    file=sys.stderr,
)
for study, tables in report.missing.items():
    print(f"explorer: study {study}: the store lacks {', '.join(tables)}", file=sys.stderr)
print(f"explorer: {PRIVACY_NOTE}", file=sys.stderr)
