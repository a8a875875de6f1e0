# The gossip study (ALIGN, issue 10): cells are played by the generic `play_gossip` rule (play.smk;
# the round metrics come out of play), written into the store with every other study's tables,
# then figures and the Tables 1-2 layout. Target: `snakemake --cores 8 gossip`.

from coopeval.studies.gossip.catalog import (
    CATEGORY as GOSSIP_CATEGORY,
    FIGURES as GOSSIP_FIGURE_ENTRIES,
    TABLE_FORMATS as GOSSIP_TABLE_FORMATS,
    table_stems as gossip_table_stems,
)

# `path` flagged for the Snakemake report under the category Gossip
gossip_reported = lambda path, caption, subcategory: report(
    path,
    caption=report_caption(caption),
    category=GOSSIP_CATEGORY,
    subcategory=subcategory,
)


if "gossip" in STUDIES:
    GOSSIP_CELLS = CELLS_BY_STUDY["gossip"]
    GOSSIP_STEMS = gossip_table_stems(config["gossip"]["testbeds"])
    GOSSIP_SHOWN = report_format(config["figures"]["formats"])

    # Shared tables (decisions, llm_calls) get the gossip files appended to other studies' files.
    for _table in STUDIES["gossip"].play_tables:
        STORE_INPUTS[_table] = STORE_INPUTS.get(_table, []) + [
            f"results/play/{c['path']}/{_table}.parquet" for c in GOSSIP_CELLS
        ]

    GOSSIP_FIGURES = [
        (
            gossip_reported(
                f"results/figures/{entry.stem}.{fmt}", entry.caption, entry.subcategory
            )
            if fmt == GOSSIP_SHOWN
            else f"results/figures/{entry.stem}.{fmt}"
        )
        for entry in GOSSIP_FIGURE_ENTRIES
        for fmt in config["figures"]["formats"]
    ]
    GOSSIP_TABLE_FILES = [
        f"results/tables/{stem}.{fmt}"
        for stem in GOSSIP_STEMS
        for fmt in GOSSIP_TABLE_FORMATS
    ]
    GOSSIP_TABLE_PAGES = [
        gossip_reported(
            f"results/report/tables/{stem}.html", "gossip_table.rst", "Tables"
        )
        for stem in GOSSIP_STEMS
    ]

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

    rule gossip_tables:
        input:
            "results/coopeval.duckdb",
        output:
            GOSSIP_TABLE_FILES,
            GOSSIP_TABLE_PAGES,
        log:
            "results/logs/gossip_tables.log",
        localrule: True
        conda:
            "../envs/coopeval.yaml"
        params:
            testbeds=config["gossip"]["testbeds"],
        script:
            "../scripts/gossip_tables.py"

    rule gossip:
        input:
            "results/coopeval.duckdb",
            "results/checks/failures.txt",
            GOSSIP_FIGURES,
            GOSSIP_TABLE_FILES,
            GOSSIP_TABLE_PAGES,
