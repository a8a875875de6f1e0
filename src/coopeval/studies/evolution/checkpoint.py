"""Per-generation checkpoints: a generation is never replayed after a kill (issue 11 §5).

Layout: ``<root>/<run_key>/gen_0001/`` holds one Parquet file per table of that generation's
rows and ``members.json`` (the scored population the next step selects from). A step's folder
is written to ``gen_NNNN.tmp`` and renamed into place, so it appears whole or not at all. The
folder is keyed by the run's hash *without* the number of generations: a run of G generations
extended to G' > G resumes after generation G.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.studies.evolution.population import Member
from coopeval.studies.evolution.records import StepRecords, frame

MEMBERS_FILE = "members.json"


class Checkpoints:
    """The finished generations of one run below ``root / run_key``."""

    def __init__(self, root: str | os.PathLike[str], run_key: str) -> None:
        self.directory = Path(root) / run_key

    def _gen(self, generation: int) -> Path:
        return self.directory / f"gen_{generation:04d}"

    def finished(self) -> int:
        """The number of consecutive finished generations from 1."""
        g = 0
        while (self._gen(g + 1) / MEMBERS_FILE).is_file():
            g += 1
        return g

    def save(self, generation: int, members: list[Member], records: StepRecords, tables: tuple[str, ...]) -> None:
        """Write generation ``generation`` atomically (tmp folder, then rename)."""
        final = self._gen(generation)
        tmp = final.with_name(final.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        for table in tables:
            frame(table, records.tables.get(table, [])).write_parquet(tmp / f"{table}.parquet")
        (tmp / MEMBERS_FILE).write_text(json.dumps([m.to_json() for m in members], allow_nan=True), encoding="utf-8")
        if final.exists():
            shutil.rmtree(final)
        os.replace(tmp, final)

    def load(self, generation: int, tables: tuple[str, ...]) -> tuple[list[Member], dict[str, pl.DataFrame]]:
        """Members and table frames of a finished generation."""
        folder = self._gen(generation)
        members = [Member.from_json(m) for m in json.loads((folder / MEMBERS_FILE).read_text(encoding="utf-8"))]
        frames = {t: pl.read_parquet(folder / f"{t}.parquet") for t in tables}
        return members, frames


def relabel(frames: Mapping[str, pl.DataFrame], columns: Mapping[str, Any]) -> dict[str, pl.DataFrame]:
    """Overwrite identifying columns (e.g. the new ``cell_id`` of an extended run)."""
    out = {}
    for name, df in frames.items():
        present = {k: v for k, v in columns.items() if k in df.columns}
        out[name] = df.with_columns([pl.lit(v, dtype=df.schema[k]).alias(k) for k, v in present.items()]) if df.height else df
    return out
