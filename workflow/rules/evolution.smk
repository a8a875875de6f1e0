# The evolution study (issue 11): cultural evolution of donation strategies (V&H, Horibe).
# play_evolution (generic, play.smk) -> store -> figures and the OES page in the report.
# Target: `snakemake --cores 8 evolution`. Generations are checkpointed in results/.state/.

from coopeval.studies.evolution.figures import OES_PAGE, figure_files
from coopeval.studies.evolution.study import COMPARISONS_OUTPUT as EVOLUTION_COMPARISONS

# every figure file; the report entries among them (EvolutionStudy.report_entries) are flagged
EVOLUTION_FIGURES = reported(
    path
    for paths in figure_files(
        config["figures"]["formats"], len(config["evolution"]["models"])
    ).values()
    for path in paths
)


rule evolution_comparisons:
    input:
        generations=[
            play_file(c["path"], "evo_generations")
            for c in CELLS_BY_STUDY.get("evolution", [])
        ],
        invasions=[
            play_file(c["path"], "invasion_tests")
            for c in CELLS_BY_STUDY.get("evolution", [])
        ],
    output:
        EVOLUTION_COMPARISONS,
    log:
        "results/logs/evolution_comparisons.log",
    localrule: True
    conda:
        "../envs/coopeval.yaml"
    script:
        "../scripts/evolution_comparisons.py"


rule evolution_figures:
    input:
        "results/coopeval.duckdb",
    output:
        figures=EVOLUTION_FIGURES,
        oes=reported([OES_PAGE])[0],
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
