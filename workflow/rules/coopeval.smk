# The CoopEval study: parse → evaluate → design quality → judge → (store) → figures, tables,
# report. Target: `snakemake --cores 8 coopeval`; one mechanism: `mechanism_<Name>`.

from coopeval.agents.registry import uses_local_llm
from coopeval.studies.coopeval.figures.catalog import (
    analysis_figures,
    core_figures,
    report_format,
    table_pages,
)
from coopeval.studies.coopeval.judge.selection import judge_has_work
from coopeval.studies.coopeval.mechanisms.catalog import DESIGN_MECHANISMS


def reported_figures(entries):
    """The files of catalog entries, the report format of each flagged with its caption,
    category (mechanism) and subcategory (game)."""
    formats = config["figures"]["formats"]
    shown = report_format(formats)
    files = []
    for entry in entries:
        for fmt in formats:
            path = f"results/figures/{entry.stem}.{fmt}"
            if fmt == shown:
                path = report(
                    path,
                    caption=report_caption(entry.caption),
                    category=entry.category,
                    subcategory=entry.subcategory,
                )
            files.append(path)
    return files


def table_page(entry):
    """The HTML page of a paper table (results/tables/*.csv), flagged for the report."""
    return report(
        f"results/report/tables/{entry.stem}.html",
        caption=report_caption(entry.caption),
        category=entry.category,
        subcategory=entry.subcategory,
    )


include: "coopeval/evaluate.smk"
include: "coopeval/judge.smk"
include: "coopeval/figures.smk"
include: "coopeval/tables.smk"
include: "coopeval/report.smk"


rule coopeval:
    input:
        "results/coopeval.duckdb",
        "results/checks/failures.txt",
        CORE_FIGURES,
        TABLE_FILES,
        REPORT_FILES,
