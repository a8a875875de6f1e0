# The evolution study (issue 11): cultural evolution of donation strategies (V&H, Horibe).
# play_evolution (generic, play.smk) -> store -> figures and the OES page in the report.
# Target: `snakemake --cores 8 evolution`. Generations are checkpointed in results/.state/.

from coopeval.studies.evolution.figures import OES_PAGE, figure_files
from coopeval.studies.evolution.figures import is_reported

EVOLUTION_CELLS = CELLS_BY_STUDY.get("evolution", [])
EVOLUTION_FILES = figure_files(
    config["figures"]["formats"], len(config["evolution"]["models"])
)


# every figure file; the one shown format of each (and the lineage HTML) goes to the report
EVOLUTION_FIGURES = [
    (
        path
        if not is_reported(stem, path, config["figures"]["formats"])
        else report(
            path,
            caption=report_caption(f"evolution/{stem}.rst"),
            category="Evolution",
            subcategory="Figures",
        )
    )
    for stem, paths in EVOLUTION_FILES.items()
    for path in paths
]

if "evolution" in STUDIES:
    for _table in STUDIES["evolution"].play_tables:
        STORE_INPUTS[_table] = [
            *STORE_INPUTS.get(_table, []),
            *(f"results/play/{c['path']}/{_table}.parquet" for c in EVOLUTION_CELLS),
        ]


rule evolution_figures:
    input:
        "results/coopeval.duckdb",
    output:
        EVOLUTION_FIGURES,
        report(
            OES_PAGE,
            caption=report_caption("evolution/oes.rst"),
            category="Evolution",
            subcategory="Tables",
        ),
    log:
        "results/logs/evolution_figures.log",
    conda:
        "../envs/coopeval.yaml"
    params:
        formats=config["figures"]["formats"],
        n_models=len(config["evolution"]["models"]),
    script:
        "../scripts/evolution_figures.py"


rule evolution:
    input:
        "results/coopeval.duckdb",
        "results/checks/failures.txt",
        rules.evolution_figures.output,
