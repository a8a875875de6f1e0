# prompt_sensitivity: with more than one prompt variant configured (config `prompt_variants`),
# each agent's metric per wording, the variance shares and the pairwise orderings
# (docs/paraphrases.md), read from the cells' metrics files. sensitivity_store_rows: every
# configured study's report tables (CoopEval's, and gossip's when it runs) as the store's
# sensitivity_* tables (CoopEvalStudy.store_inputs), which the explorer shows.

from coopeval.evaluation.sensitivity_store import SENSITIVITY_STORE_FILES
from coopeval.studies.coopeval.analysis.prompt_sensitivity import (
    SENSITIVITY,
    cell_contexts,
)
from coopeval.studies.gossip.sensitivity import SENSITIVITY as _GOSSIP_REPORT

SENSITIVITY_FILES = []
if len(config["prompt_variants"]) > 1:
    SENSITIVITY_FILES = [
        *SENSITIVITY.tables.values(),
        *figure_paths([SENSITIVITY.figure]),
        SENSITIVITY.page,
    ]

    rule prompt_sensitivity:
        input:
            metrics=[cell_file("evaluate", c, "metrics") for c in CELLS],
        output:
            **SENSITIVITY.tables,
            figures=reported(figure_paths([SENSITIVITY.figure])),
            page=reported([SENSITIVITY.page])[0],
        log:
            "results/logs/prompt_sensitivity.log",
        conda:
            "../../envs/coopeval.yaml"
        params:
            source="coopeval.studies.coopeval.analysis.prompt_sensitivity",
            contexts=cell_contexts(CELLS),
            figure_stem=f"results/figures/{SENSITIVITY.figure}",
            formats=config["figures"]["formats"],
        script:
            "../../scripts/prompt_sensitivity.py"

    # the report tables of every configured study with one (gossip's rule: gossip.smk)
    _REPORTS = {"coopeval": SENSITIVITY.tables}
    if "gossip" in STUDIES:
        _REPORTS["gossip"] = _GOSSIP_REPORT.tables

    rule sensitivity_store_rows:
        input:
            [path for tables in _REPORTS.values() for path in tables.values()],
        output:
            **SENSITIVITY_STORE_FILES,
        log:
            "results/logs/sensitivity_store_rows.log",
        localrule: True
        conda:
            "../../envs/coopeval.yaml"
        params:
            reports=_REPORTS,
        script:
            "../../scripts/sensitivity_store_rows.py"
