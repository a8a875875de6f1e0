# play: one job per cell of every configured study; every model call is cached.
# The cell manifests (results/cells.tsv for CoopEval) are written by the `manifest` rule.
# A study shipping its own prompt templates (package data) is played with those.


for _study in STUDIES.values():

    rule:
        name:
            f"play_{_study.name}"
        input:
            prompts=study_prompt_files(_study),
            prompts_dir=study_prompts_dir(_study, config),
        output:
            **_play_output(_study),
        log:
            f"results/logs/play/{_study.name}/{{cellpath}}/{{cell}}.log",
        priority: lambda w, study=_study: play_priority(study, CELL_BY_ID[w.cell], w.cell in PLAYED_FIRST)
        conda:
            "../envs/coopeval.yaml"
        threads: 1
        resources:
            local_llm=lambda wildcards, study=_study: int(
                cell_uses_local_llm(study, CELL_BY_ID[wildcards.cell])
            ),
            # calls in flight over all jobs: `--resources api_calls=N` (docs/scale.md)
            api_calls=lambda wildcards, study=_study: cell_api_slots(
                study, CELL_BY_ID[wildcards.cell], config["max_concurrency"]
            ),
        params:
            study=_study.name,
            spec=lambda wildcards: CELL_BY_ID[wildcards.cell],
            cache_dir=config["cache_dir"],
            # per-attempt journal, never a declared output (coopeval.pipeline.play)
            journal_dir="results/.journal",
            max_concurrency=config["max_concurrency"],
            max_usd=config["max_usd"],
        script:
            "../scripts/play.py"


rule manifest:
    output:
        [study.manifest_path for study in STUDIES.values()],
    log:
        "results/logs/manifest.log",
    localrule: True
    conda:
        "../envs/coopeval.yaml"
    params:
        manifests={
            study.manifest_path: study.manifest(CELLS_BY_STUDY[study.name])
            for study in STUDIES.values()
        },
    script:
        "../scripts/manifest.py"
