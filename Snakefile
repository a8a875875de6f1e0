# coopeval: which institutions keep self-interested LLM agents cooperating?
# This file is the table of contents; rules live in workflow/rules/, logic in src/coopeval/.
# Run: snakemake --cores 8 all          (default config: config/config.yaml; every configured study)
#      snakemake --cores 8 coopeval     (one study; likewise gossip, evolution)
#      snakemake --cores 8 mechanism_Repetition   (one CoopEval mechanism)
#      snakemake --cores 2 all --configfile config/smoke.yaml   (scripted bots only)
#      snakemake --report report.html   (after a run: every figure and table, one HTML file)

from snakemake.utils import min_version

min_version("9.0")


configfile: "config/config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/play.smk"
include: "workflow/rules/store.smk"
include: "workflow/rules/estimate.smk"
include: "workflow/rules/explorer.smk"


# Each registered study's rules file (coopeval.pipeline.studies, plugins included), in registry
# order; it defines the study's stages after `store` and a target rule named after the study.
for _rules_file in study_rules_files(workflow.basedir):

    include: _rules_file


# A study without a rules file is done once its tables are in the store.
for _study in STUDIES.values():
    if _study.rules_file is None:

        rule:
            name:
                _study.name
            input:
                "results/coopeval.duckdb",
                "results/checks/failures.txt",


rule all:
    default_target: True
    input:
        [getattr(rules, name).input for name in STUDIES],
        rules.explorer.output,


if _unflagged := unflagged_report_entries():
    raise WorkflowError(
        "report entries without a report-flagged rule output (flag them with reported(...) "
        "in the study's rules file): " + ", ".join(_unflagged)
    )
