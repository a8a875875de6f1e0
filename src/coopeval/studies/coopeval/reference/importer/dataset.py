"""The whole data folder: every run's experiments → :class:`ReferenceData` (all-or-nothing).

Each experiment is imported into its own rows first; the rows are merged only if it validated,
and nothing is returned unless every experiment did (the error lists one problem per failing
experiment). Missing main-study experiments are flagged (``experiment_missing``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from coopeval.studies.coopeval.reference.importer.errors import (
    ImportProblem,
    ReferenceImportError,
    ReleasedFileError,
)
from coopeval.studies.coopeval.reference.importer.experiment import import_experiment_into
from coopeval.studies.coopeval.reference.importer.flags import missing_main_experiments
from coopeval.studies.coopeval.reference.importer.layout import discover_runs
from coopeval.studies.coopeval.reference.importer.rows import TableRows, to_frames

__all__ = ["ReferenceData", "import_reference"]


@dataclass
class ReferenceData:
    """Imported frames, one per table of :data:`~coopeval.studies.coopeval.reference.importer.rows.IMPORTED_TABLES`.

    Attributes
    ----------
    frames:
        Table name → frame conformed to its schema.
    runs:
        Run folder names in import order.
    experiments:
        ``cell_id`` of every imported experiment, in import order.
    """

    frames: dict[str, pl.DataFrame]
    runs: list[str]
    experiments: list[str]

    def __getitem__(self, table: str) -> pl.DataFrame:
        """The frame of ``table``; KeyError if it is not an imported table."""
        return self.frames[table]


def import_reference(
    data_dir: str | Path,
    *,
    progress: Callable[[str], None] | None = None,
) -> ReferenceData:
    """Import a run folder or a folder of run folders of the released CoopEval data.

    Every experiment folder of every run is read and validated in memory (docs/protocol/reference-data.md#layout formats,
    all schema variants); matchup scores are the δ-weighted averages (docs/protocol/tournament.md#delta-weighted-score) with the
    stored discount. Released summary values go to ``released_metrics`` (rule
    ``"released"``), never mixed with recomputed metrics.

    Parameters
    ----------
    data_dir:
        One run folder (holding ``{mechanism}_{game}/`` experiment folders) or a folder of run
        folders (each run = one replicate; ``run`` = its folder name).
    progress:
        Called with one human-readable line per imported experiment.

    Returns
    -------
    ReferenceData
        Frames for :data:`~coopeval.studies.coopeval.reference.importer.rows.IMPORTED_TABLES`.

    Raises
    ------
    ReferenceImportError
        If any file is missing or malformed; the message names every offending file (at most
        one per experiment) and what was expected. Nothing is returned in that case.
    """
    runs = discover_runs(data_dir)
    rows = TableRows()
    problems: list[ImportProblem] = []
    cells: list[str] = []
    total = sum(len(exps) for _, _, exps in runs)
    done = 0
    for run, _, experiments in runs:
        for folder in experiments:
            done += 1
            start = time.perf_counter()
            local = TableRows()
            try:
                cell_id = import_experiment_into(folder, run, local)
            except ReleasedFileError as exc:
                problems.append(exc.problem)
                if progress is not None:
                    progress(f"[{done}/{total}] {run}/{folder.name}: FAILED ({exc.problem.expected})")
                continue
            for table, data in local.tables.items():
                rows.tables[table].extend(data)
            cells.append(cell_id)
            if progress is not None:
                n_matchups = len(local.tables.get("matchups", []))
                n_decisions = len(local.tables.get("decisions", []))
                flags = ",".join(r["flag"] for r in local.tables.get("import_flags", []))
                progress(
                    f"[{done}/{total}] {cell_id}: {n_matchups} matchups, {n_decisions} decisions"
                    f"{' [' + flags + ']' if flags else ''} ({time.perf_counter() - start:.2f} s)"
                )
    if problems:
        raise ReferenceImportError(problems)
    for run, _, experiments in runs:
        for name in missing_main_experiments(f.name for f in experiments):
            rows.add(
                "import_flags",
                cell_id=f"{run}/{name}",
                source="reference",
                run=run,
                mechanism="",
                game="",
                flag="experiment_missing",
                detail=f"run {run} has no folder {name}/; tables average over the experiments present",
            )
            if progress is not None:
                progress(f"WARNING: {run}/{name}/ is missing; its table cells are absent")
    return ReferenceData(frames=to_frames(rows), runs=[r for r, _, _ in runs], experiments=cells)
