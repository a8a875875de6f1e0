# The gossip study (ALIGN, issue 10): cells are played by the generic `play_gossip` rule (play.smk;
# the round metrics come out of play), written into the store with every other study's tables
# (GossipStudy.store_inputs), then figures and the Tables 1-2 layout. Target: `snakemake --cores 8 gossip`.

from coopeval.studies.gossip.study import COMPARISONS_OUTPUT as GOSSIP_COMPARISONS
from coopeval.studies.gossip.catalog import (
    FIGURES as GOSSIP_FIGURE_ENTRIES,
    TABLE_FORMATS as GOSSIP_TABLE_FORMATS,
    table_stems as gossip_table_stems,
)
from coopeval.studies.gossip.sensitivity import (
    SENSITIVITY as GOSSIP_SENSITIVITY,
    cell_contexts as gossip_cell_contexts,
)
from coopeval.studies.gossip.study import model_name as gossip_model_name

if "gossip" in STUDIES:
    GOSSIP_STEMS = gossip_table_stems(config["gossip"]["testbeds"])
    # flagged for the report as GossipStudy.report_entries declares them (category Gossip)
    GOSSIP_FIGURES = reported(
        figure_paths(entry.stem for entry in GOSSIP_FIGURE_ENTRIES)
    )
    GOSSIP_TABLE_FILES = [
        f"results/tables/{stem}.{fmt}"
        for stem in GOSSIP_STEMS
        for fmt in GOSSIP_TABLE_FORMATS
    ]
    GOSSIP_TABLE_PAGES = reported(table_page_file(stem) for stem in GOSSIP_STEMS)

    rule gossip_figures:
        input:
            "results/coopeval.duckdb",
        output:
            GOSSIP_FIGURES,
        log:
            "results/logs/gossip_figures.log",
        conda:
            "../envs/coopeval.yaml"
        params:
            formats=config["figures"]["formats"],
        script:
            "../scripts/gossip_figures.py"

    rule gossip_comparisons:
        input:
            [
                play_file(c["path"], "gossip_run_metrics")
                for c in CELLS_BY_STUDY["gossip"]
            ],
        output:
            GOSSIP_COMPARISONS,
        log:
            "results/logs/gossip_comparisons.log",
        localrule: True
        conda:
            "../envs/coopeval.yaml"
        script:
            "../scripts/gossip_comparisons.py"

    rule gossip_tables:
        input:
            "results/coopeval.duckdb",
        output:
            tables=GOSSIP_TABLE_FILES,
            pages=GOSSIP_TABLE_PAGES,
        log:
            "results/logs/gossip_tables.log",
        localrule: True
        conda:
            "../envs/coopeval.yaml"
        params:
            testbeds=config["gossip"]["testbeds"],
        script:
            "../scripts/gossip_tables.py"

    # with more than one prompt variant: each model's metrics per wording (docs/paraphrases.md)
    GOSSIP_SENSITIVITY_FILES = []
    if len(config["prompt_variants"]) > 1:
        GOSSIP_SENSITIVITY_FILES = [
            *GOSSIP_SENSITIVITY.tables.values(),
            *figure_paths([GOSSIP_SENSITIVITY.figure]),
            GOSSIP_SENSITIVITY.page,
        ]

        rule gossip_prompt_sensitivity:
            input:
                metrics=[
                    play_file(c["path"], "gossip_run_metrics")
                    for c in CELLS_BY_STUDY["gossip"]
                ],
            output:
                **GOSSIP_SENSITIVITY.tables,
                figures=reported(figure_paths([GOSSIP_SENSITIVITY.figure])),
                page=reported([GOSSIP_SENSITIVITY.page])[0],
            log:
                "results/logs/gossip_prompt_sensitivity.log",
            conda:
                "../envs/coopeval.yaml"
            params:
                source="coopeval.studies.gossip.sensitivity",
                contexts=gossip_cell_contexts(
                    CELLS_BY_STUDY["gossip"], gossip_model_name
                ),
                figure_stem=f"results/figures/{GOSSIP_SENSITIVITY.figure}",
                formats=config["figures"]["formats"],
            script:
                "../scripts/prompt_sensitivity.py"

    rule gossip:
        input:
            "results/coopeval.duckdb",
            "results/checks/failures.txt",
            GOSSIP_FIGURES,
            GOSSIP_TABLE_FILES,
            GOSSIP_TABLE_PAGES,
            GOSSIP_SENSITIVITY_FILES,
