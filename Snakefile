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
include: "workflow/rules/coopeval.smk"
include: "workflow/rules/gossip.smk"
include: "workflow/rules/evolution.smk"


rule all:
    default_target: True
    input:
        [getattr(rules, name).input for name in STUDIES],
