"""One experiment folder → rows of every imported table, in the order the files are read.

Order (each step validates its file strictly): ``config.json`` → ``matchup_payoffs.json``
(``matchups``, ``scores``) → summary files (``released_metrics``) → design file
(Mediation/Contracting: ``designs``) → records (``decisions``, ``votes``, ``selections``) →
one ``experiments`` row → ``import_flags``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.studies.coopeval.mechanisms.catalog import DESIGN_MECHANISMS
from coopeval.studies.coopeval.reference.importer.config import ExperimentConfig, read_config
from coopeval.studies.coopeval.reference.importer.designs import read_designs
from coopeval.studies.coopeval.reference.importer.errors import (
    ReferenceImportError,
    ReleasedFileError,
)
from coopeval.studies.coopeval.reference.importer.flags import ImportFlag
from coopeval.studies.coopeval.reference.importer.layout import experiment_kind
from coopeval.studies.coopeval.reference.importer.matchups import (
    add_matchup_rows,
    read_matchup_payoffs,
)
from coopeval.studies.coopeval.reference.importer.metrics import read_released_metrics
from coopeval.studies.coopeval.reference.importer.records import read_records
from coopeval.studies.coopeval.reference.importer.rows import CellRows, TableRows, to_frames

__all__ = ["add_experiment_row", "import_experiment", "import_experiment_into"]


def import_experiment(folder: str | Path, run: str) -> dict[str, pl.DataFrame]:
    """Import one experiment folder into frames (one per table of :data:`IMPORTED_TABLES`).

    Parameters
    ----------
    folder:
        The experiment folder, named ``{mechanism}_{game}`` (or ``ablation_abl_{variant}_{game}``).
    run:
        The run name (replicate id) written to the ``run`` column.

    Raises
    ------
    ReferenceImportError
        Naming the offending file and what was expected, on any missing or malformed file.
    """
    rows = TableRows()
    try:
        import_experiment_into(Path(folder), run, rows)
    except ReleasedFileError as exc:
        raise ReferenceImportError([exc.problem]) from None
    return to_frames(rows)


def import_experiment_into(folder: Path, run: str, rows: TableRows) -> str:
    """Append the rows of experiment ``folder`` (replicate ``run``) to ``rows``; return its ``cell_id``.

    ``cell_id`` is ``"<run>/<experiment folder>"``; every row carries it with ``source =
    "reference"``, ``run``, ``mechanism`` and ``game``. Raises ReleasedFileError on the first
    problem (``rows`` may then hold a partial experiment: pass a fresh :class:`TableRows`).
    """
    if experiment_kind(folder.name) is None:
        raise ReleasedFileError(folder, "not an experiment folder; expected a name {mechanism}_{game}")
    cfg = read_config(folder)
    cell_id = f"{run}/{folder.name}"
    cell = {"cell_id": cell_id, "source": "reference", "run": run, "mechanism": cfg.mechanism, "game": cfg.game.name}
    out = CellRows(rows, cell)
    flags: list[ImportFlag] = []
    discount, matches = read_matchup_payoffs(folder, cfg)
    add_matchup_rows(out, cfg, discount, matches)
    read_released_metrics(folder, cfg, out, flags)
    designs: dict[str, dict[str, Any]] = {}
    if cfg.mechanism_type in DESIGN_MECHANISMS:
        designs = read_designs(folder, cfg, out)
    records_file = read_records(folder, cfg, matches, designs, out, flags)
    add_experiment_row(out, folder.name, cfg, discount, records_file)
    for flag, detail in flags:
        out.add("import_flags", flag=flag, detail=detail)
    return cell_id


def add_experiment_row(
    rows: CellRows,
    experiment: str,
    cfg: ExperimentConfig,
    discount: float,
    records_file: str | None,
) -> None:
    """Append the ``experiments`` row: folder name, sizes, roster and the raw kwargs (sorted JSON)."""
    rows.add(
        "experiments",
        experiment=experiment,
        n_players=cfg.game.n_players,
        n_rounds=cfg.n_rounds,
        discount=discount,
        agents=list(cfg.roster),
        mechanism_kwargs=json.dumps(cfg.mechanism_kwargs, sort_keys=True),
        game_kwargs=json.dumps(cfg.game_kwargs, sort_keys=True),
        records_file=records_file,
    )
