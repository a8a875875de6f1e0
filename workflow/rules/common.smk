# Helpers shared by all rules: config validation, the static cell list, input functions.
# Nothing here imports litellm, llama.cpp or duckdb (the Snakefile must parse in well under 1 s).

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(workflow.basedir) / "src"))

from snakemake.exceptions import WorkflowError

from coopeval.pipeline.cells import build_cells, cells_tsv, play_cost
from coopeval.pipeline.config import ConfigError, validate_config

try:
    _validated = validate_config(config)
except ConfigError as error:
    raise WorkflowError(str(error)) from None
config.clear()
config.update(_validated)

CELLS = build_cells(config, repo_root=Path(workflow.basedir))
CELL_BY_ID = {cell["cell_id"]: cell for cell in CELLS}
PROMPT_FILES = sorted(str(p) for p in Path(config["prompts_dir"]).glob("*.txt"))
PLAY_TABLES = ["decisions", "llm_calls", "matchups", "designs", "votes", "selections"]


def _write_if_changed(path, text):
    target = Path(path)
    if not target.exists() or target.read_text() != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)


_write_if_changed("results/cells.tsv", cells_tsv(CELLS))


def _required_env():
    names = set()
    for agent in config["agents"]:
        model = agent["model"]
        if model.startswith(("bot/", "local/")):
            continue
        from coopeval.agents.llm_agent import required_env_vars

        names.update(required_env_vars(model))
    return sorted(names)


REQUIRED_ENV = _required_env()

# API keys come from the environment only and are checked before any job starts.
if REQUIRED_ENV:

    envvars:
        *REQUIRED_ENV,


wildcard_constraints:
    cell="[0-9a-f]{12}",
    mechanism="[A-Za-z]+",
    game="[a-z_]+",


def cell_dir(stage, cell):
    return f"results/{stage}/{cell['mechanism']}/{cell['game']}/{cell['cell_id']}"


def uses_local_llm(wildcards):
    cell = CELL_BY_ID[wildcards.cell]
    return any(a["model"].startswith("local/") for a in cell["agents"])


def play_priority(wildcards):
    # longest cells first, so that no long cell runs alone at the end of a run
    return play_cost(CELL_BY_ID[wildcards.cell])


def cell_files(stage, names, mechanism=None):
    return [
        f"{cell_dir(stage, c)}/{name}.parquet"
        for c in CELLS
        if mechanism is None or c["mechanism"] == mechanism
        for name in names
    ]


def figure_files():
    formats = config["figures"]["formats"]
    stems = ["results/figures/mean_fitness"]
    if config["variants"]:
        stems.append("results/figures/ablation")
    for mechanism in config["mechanisms"]:
        for game in config["games"]:
            stems.append(f"results/figures/payoffs_{mechanism}_{game}")
            stems.append(f"results/figures/replicator_{mechanism}_{game}")
    return [f"{stem}.{fmt}" for stem in stems for fmt in formats]


# Report placement of figures and table pages (coopeval.studies.coopeval.figures.catalog): one format of each
# figure is flagged for `snakemake --report`, category = mechanism, subcategory = game.
from coopeval.studies.coopeval.figures.catalog import (
    analysis_figures,
    core_figures,
    report_format,
    table_pages,
)


def report_caption(name):
    """Absolute path of a caption file in workflow/report/ (Snakemake resolves relative
    caption paths against the including Snakefile, not this file)."""
    return str(Path(workflow.basedir) / "workflow" / "report" / name)


def reported_figures(entries):
    """The files of catalog entries, the report format of each flagged with its caption,
    category (mechanism) and subcategory (game)."""
    formats = config["figures"]["formats"]
    shown = report_format(formats)
    files = []
    for entry in entries:
        for fmt in formats:
            path = f"results/figures/{entry.stem}.{fmt}"
            if fmt == shown:
                path = report(
                    path,
                    caption=report_caption(entry.caption),
                    category=entry.category,
                    subcategory=entry.subcategory,
                )
            files.append(path)
    return files


def table_page(entry):
    """The HTML page of a paper table (results/tables/*.csv), flagged for the report."""
    return report(
        f"results/report/tables/{entry.stem}.html",
        caption=report_caption(entry.caption),
        category=entry.category,
        subcategory=entry.subcategory,
    )
