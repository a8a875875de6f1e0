# figures: Altair charts (PNG, SVG, HTML) read from the store, read-only.

CORE_FIGURES = reported(
    figure_paths(
        entry.stem
        for entry in core_figures(
            config["mechanisms"],
            config["games"],
            has_ablation(config["variants"]),
            len(group_sizes(config)) > 1,
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
        ablation=has_ablation(config["variants"]),
        group_size=len(group_sizes(config)) > 1,
    script:
        "../../scripts/figures.py"
