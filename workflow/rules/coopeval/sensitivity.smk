# prompt_sensitivity: with more than one prompt variant configured (config `prompt_variants`),
# each agent's metric per wording, the variance shares and the pairwise orderings
# (docs/paraphrases.md), read from the cells' metrics files.

from coopeval.studies.coopeval.analysis.prompt_sensitivity import (
    SENSITIVITY,
    cell_contexts,
)

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
