"""A toy study defined outside ``src/``: the proof that a plugin adds a study with no edit to any
other file (the recipe in :mod:`coopeval.studies.base`).

Run it with this folder on ``PYTHONPATH`` and a config holding ``plugins: [toy_study]`` and
``studies: [toy]`` (see ``tests/workflow/test_plugins.py``). Importing the module registers the
study's tables and the study itself.

The game: in each of ``toy.rounds`` rounds of replicate ``r``, one scripted player earns
``round * r`` points. So the store's ``toy_rounds`` table holds ``rounds`` rows per replicate and
the points of replicate ``r`` sum to ``r * rounds * (rounds + 1) / 2``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from coopeval.agents.maker import CallStats
from coopeval.core.hashing import canonical_json
from coopeval.core.schemas import register_tables
from coopeval.pipeline.studies import register_study
from coopeval.studies.base import PlayInputs, ReportEntry, play_table_paths

TOY_ROUNDS: dict[str, pl.DataType] = {"cell_id": pl.String(), "replicate": pl.Int64(), "round": pl.Int64(), "points": pl.Float64()}
"""One row per round: the points of the toy's one player."""

TOY_CELLS: dict[str, pl.DataType] = {"cell_id": pl.String(), "replicate": pl.Int64(), "rounds": pl.Int64(), "path": pl.String()}
"""The toy's cell manifest (store table ``toy_cells``)."""

register_tables({"toy_rounds": TOY_ROUNDS, "toy_cells": TOY_CELLS})


class ToyStudy:
    """A study of ``toy.replicates`` cells of ``toy.rounds`` rounds, played without a model."""

    name = "toy"
    title = "Toy: a plugin study (tests only)"
    order = 90
    play_tables: tuple[str, ...] = ("toy_rounds",)
    manifest_path = "results/toy/cells.tsv"
    manifest_table = "toy_cells"
    default_enabled = False
    rules_file: str | None = None
    wildcard_constraints: Mapping[str, str] = {}

    def config_schema(self) -> dict[str, Any]:
        """The ``toy:`` section: ``rounds`` and ``replicates`` (both at least 1)."""
        count = {"type": "integer", "minimum": 1}
        section = {
            "type": "object",
            "additionalProperties": False,
            "default": {},
            "properties": {"rounds": {**count, "default": 3}, "replicates": {**count, "default": 2}},
        }
        return {"properties": {"toy": section}, "required": []}

    def check_config(self, config: Mapping[str, Any]) -> None:
        """Nothing beyond the schema."""

    def cells(self, config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """One cell per replicate; the id is sha256[:12] of the spec's canonical JSON."""
        section = config["toy"]
        cells = []
        for replicate in range(1, int(section["replicates"]) + 1):
            spec = {"study": self.name, "replicate": replicate, "rounds": int(section["rounds"])}
            cell_id = hashlib.sha256(canonical_json(spec).encode("utf-8")).hexdigest()[:12]
            cells.append({**spec, "cell_id": cell_id, "path": f"{self.name}/r{replicate}/{cell_id}"})
        return cells

    def models(self, config: Mapping[str, Any]) -> list[str]:
        """No model is called."""
        return []

    def cell_models(self, spec: Mapping[str, Any]) -> list[str]:
        """No model is called."""
        return []

    def play(self, spec: Mapping[str, Any], inputs: PlayInputs) -> tuple[dict[str, pl.DataFrame], CallStats]:
        """Round ``t`` of replicate ``r`` earns ``t * r`` points."""
        rounds = range(1, int(spec["rounds"]) + 1)
        replicate = int(spec["replicate"])
        frame = pl.DataFrame(
            {"cell_id": [spec["cell_id"]] * len(rounds), "replicate": [replicate] * len(rounds), "round": list(rounds),
             "points": [float(t * replicate) for t in rounds]},
            schema=TOY_ROUNDS,
        )
        return {"toy_rounds": frame}, CallStats()

    def cost(self, spec: Mapping[str, Any]) -> int:
        """Every cell costs the same."""
        return 1

    def manifest(self, cells: list[dict[str, Any]]) -> str:
        """``results/toy/cells.tsv``: the columns of :data:`TOY_CELLS`."""
        lines = ["\t".join(TOY_CELLS)]
        lines += ["\t".join(str(c[k]) for k in TOY_CELLS) for c in cells]
        return "\n".join(lines) + "\n"

    def label(self, spec: Mapping[str, Any]) -> str:
        """``toy/r<replicate>``."""
        return f"toy/r{spec['replicate']}"

    def store_inputs(self, config: Mapping[str, Any], cells: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
        """The play table of every cell."""
        return play_table_paths(self, cells)

    def report_entries(self, config: Mapping[str, Any]) -> list[ReportEntry]:
        """The toy has no figure."""
        return []


register_study(ToyStudy())
