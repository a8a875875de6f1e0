# The CoopEval study: parse → evaluate → design quality → judge → (store) → figures, tables,
# report. Target: `snakemake --cores 8 coopeval`; one mechanism: `mechanism_<Name>`.

from coopeval.agents.registry import is_scripted, uses_local_llm
from coopeval.studies.coopeval.figures.catalog import (
    analysis_figures,
    core_figures,
    group_sizes,
    has_ablation,
    table_pages,
)
from coopeval.studies.coopeval.judge.selection import judge_has_work
from coopeval.studies.coopeval.judge.shards import judge_shards
from coopeval.studies.coopeval.mechanisms.catalog import DESIGN_MECHANISMS
from coopeval.studies.coopeval.study import (
    DESIGN_QUALITY_OUTPUTS,
    JUDGE_OUTPUTS,
    REPORT_TABLES,
    RUN_SUMMARY_PAGE,
    cell_file,
)

# CoopEval's cells (none when the study is not configured; its rules then have no job)
CELLS = CELLS_BY_STUDY.get("coopeval", [])


include: "coopeval/evaluate.smk"
include: "coopeval/judge.smk"
include: "coopeval/figures.smk"
include: "coopeval/tables.smk"
include: "coopeval/comparisons.smk"
include: "coopeval/report.smk"
include: "coopeval/sensitivity.smk"


rule coopeval:
    input:
        "results/coopeval.duckdb",
        "results/checks/failures.txt",
        CORE_FIGURES,
        TABLE_FILES,
        COMPARISON_FILES,
        REPORT_FILES,
        SENSITIVITY_FILES,
