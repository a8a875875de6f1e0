# figures: Altair charts (PNG, SVG, HTML) read from the store, read-only.

CORE_FIGURES = reported(
    figure_paths(
        entry.stem
        for entry in core_figures(
            config["mechanisms"], config["games"], bool(config["variants"])
        )
    )
)


rule figures:
    input:
        "results/coopeval.duckdb",
    output:
        CORE_FIGURES,
    log:
        "results/logs/figures.log",
    conda:
        "../../envs/coopeval.yaml"
    params:
        formats=config["figures"]["formats"],
        mechanisms=config["mechanisms"],
        games=config["games"],
        ablation=bool(config["variants"]),
    script:
        "../../scripts/figures.py"
