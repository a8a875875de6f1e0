# figures: Altair charts (PNG, SVG, HTML) read from the store, read-only.


rule figures:
    input:
        "results/coopeval.duckdb",
    output:
        figure_files(),
    log:
        "results/logs/figures.log",
    conda:
        "../envs/coopeval.yaml"
    params:
        formats=config["figures"]["formats"],
        mechanisms=config["mechanisms"],
        games=config["games"],
        ablation=bool(config["variants"]),
    script:
        "../scripts/figures.py"
