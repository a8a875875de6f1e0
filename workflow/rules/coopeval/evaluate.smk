# parse: δ-weighted scores per match-up; evaluate: Mean, replicator-dynamics Fitness and
# deviation ratings per cell; design_quality: NS/WD of every submitted design.


rule parse:
    input:
        decisions="results/play/coopeval/{mechanism}/{game}/{cell}/decisions.parquet",
        matchups="results/play/coopeval/{mechanism}/{game}/{cell}/matchups.parquet",
    output:
        scores="results/parse/coopeval/{mechanism}/{game}/{cell}/scores.parquet",
    log:
        "results/logs/parse/coopeval/{mechanism}/{game}/{cell}.log",
    conda:
        "../../envs/coopeval.yaml"
    script:
        "../../scripts/parse.py"


rule evaluate:
    input:
        scores="results/parse/coopeval/{mechanism}/{game}/{cell}/scores.parquet",
        matchups="results/play/coopeval/{mechanism}/{game}/{cell}/matchups.parquet",
    output:
        metrics="results/evaluate/coopeval/{mechanism}/{game}/{cell}/metrics.parquet",
        trajectory="results/evaluate/coopeval/{mechanism}/{game}/{cell}/trajectory.parquet",
    log:
        "results/logs/evaluate/coopeval/{mechanism}/{game}/{cell}.log",
    conda:
        "../../envs/coopeval.yaml"
    params:
        steps=config["evaluation"]["steps"],
        lr=config["evaluation"]["lr"],
        dr_rule=config["evaluation"]["dr_rule"],
        # the cell's agent entries: the roster says which agents are LLM agents (LLM Average)
        agents=lambda wildcards: CELL_BY_ID[wildcards.cell]["agents"],
    script:
        "../../scripts/evaluate.py"


# One target per mechanism: `snakemake --cores 8 mechanism_Repetition` plays, parses and
# evaluates only that mechanism's cells (run `all` afterwards to refresh the store and figures).
for _mechanism in config["mechanisms"]:

    rule:
        name:
            f"mechanism_{_mechanism}"
        input:
            [
                cell_file("evaluate", c, name)
                for c in CELLS
                if c["mechanism"] == _mechanism
                for name in ("metrics", "trajectory")
            ],


DESIGN_CELLS = [c for c in CELLS if c["mechanism"] in DESIGN_MECHANISMS]


# NS / WD of every submitted mediator and contract design (docs/protocol/design-checks.md#ns-wd), over all design cells.
rule design_quality:
    input:
        designs=[cell_file("play", c, "designs") for c in DESIGN_CELLS],
    output:
        **DESIGN_QUALITY_OUTPUTS,
    log:
        "results/logs/design_quality.log",
    localrule: True
    conda:
        "../../envs/coopeval.yaml"
    params:
        game_params={c["cell_id"]: c["game_params"] for c in DESIGN_CELLS},
    script:
        "../../scripts/design_quality.py"
