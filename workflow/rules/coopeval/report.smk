# report: the analyses' figures, the run summary page and the paper tables as HTML pages, all
# flagged for `snakemake --report report.html` as CoopEvalStudy.report_entries declares them
# (category = mechanism, subcategory = game; the top-level page is workflow/report/workflow.rst).

ANALYSIS_FIGURES = reported(
    figure_paths(
        entry.stem for entry in analysis_figures(config["mechanisms"], config["games"])
    )
)
TABLE_PAGES = reported(
    table_page_file(entry.stem)
    for entry in table_pages(REPORT_TABLES, config["mechanisms"], config["games"])
)
REPORT_FILES = [str(f) for f in [*ANALYSIS_FIGURES, RUN_SUMMARY_PAGE, *TABLE_PAGES]]


rule analysis_figures:
    input:
        store="results/coopeval.duckdb",
        taxonomy=config["judge"]["taxonomy"],
    output:
        ANALYSIS_FIGURES,
    log:
        "results/logs/analysis_figures.log",
    conda:
        "../../envs/coopeval.yaml"
    params:
        formats=config["figures"]["formats"],
        mechanisms=config["mechanisms"],
        games=config["games"],
        denominator=(
            "reference" if config["judge"]["compat_share_denominator"] else "judged"
        ),
    script:
        "../../scripts/analysis_figures.py"


rule run_summary:
    input:
        "results/coopeval.duckdb",
    output:
        reported([RUN_SUMMARY_PAGE]),
    log:
        "results/logs/run_summary.log",
    localrule: True
    conda:
        "../../envs/coopeval.yaml"
    params:
        agents=config["agents"],
        games=config["games"],
        mechanisms=config["mechanisms"],
        judge=config["judge"],
        seed=config["seed"],
        replicates=config["replicates"],
    script:
        "../../scripts/run_summary.py"


rule report_tables:
    input:
        [f"results/tables/{table}.csv" for table in REPORT_TABLES],
    output:
        TABLE_PAGES,
    log:
        "results/logs/report_tables.log",
    localrule: True
    conda:
        "../../envs/coopeval.yaml"
    params:
        tables=REPORT_TABLES,
        mechanisms=config["mechanisms"],
        games=config["games"],
    script:
        "../../scripts/report_tables.py"
