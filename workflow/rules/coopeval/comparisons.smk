# comparisons: every pair of agents compared on the same co-player profiles and replicates
# (docs/comparisons.md), written as Parquet for the store; comparison_tables: the store's
# `comparisons` table (every study's rows) as results/tables/comparisons.{csv,md,tex}.

from coopeval.studies.coopeval.comparison_outputs import (
    COMPARISON_TABLE_FILES as _COMPARISON_NAMES,
)
from coopeval.studies.coopeval.study import COMPARISONS_OUTPUT

COMPARISON_FILES = [f"results/tables/{name}" for name in _COMPARISON_NAMES]
_DEFAULT_CELLS = [c for c in CELLS if c["variant"] == "default"]


rule comparisons:
    input:
        scores=[cell_file("parse", c, "scores") for c in _DEFAULT_CELLS],
        metrics=[cell_file("evaluate", c, "metrics") for c in _DEFAULT_CELLS],
    output:
        COMPARISONS_OUTPUT,
    log:
        "results/logs/comparisons.log",
    conda:
        "../../envs/coopeval.yaml"
    params:
        steps=config["evaluation"]["steps"],
        lr=config["evaluation"]["lr"],
        dr_rule=config["evaluation"]["dr_rule"],
    script:
        "../../scripts/comparisons.py"


rule comparison_tables:
    input:
        "results/coopeval.duckdb",
    output:
        COMPARISON_FILES,
    log:
        "results/logs/comparison_tables.log",
    conda:
        "../../envs/coopeval.yaml"
    script:
        "../../scripts/comparison_tables.py"
