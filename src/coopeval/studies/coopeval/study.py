"""CoopEval as a :class:`~coopeval.studies.base.Study`: cells = mechanism × game × replicate
(plus ablation variants) with the full roster, played by :func:`~.play.play_cell`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import polars as pl

from coopeval.agents.maker import CallStats
from coopeval.studies.base import PlayInputs
from coopeval.studies.coopeval.cells import build_cells, cells_tsv, play_cost
from coopeval.studies.coopeval.config_checks import check_config
from coopeval.studies.coopeval.config_schema import config_schema_part
from coopeval.studies.coopeval.judge.selection import judge_has_work
from coopeval.studies.coopeval.play import PLAY_TABLES, play_cell


class CoopEvalStudy:
    """The CoopEval study (arXiv 2604.15267): social dilemmas under six mechanisms."""

    name = "coopeval"
    play_tables = PLAY_TABLES
    manifest_path = "results/cells.tsv"
    manifest_table = "cells"
    default_enabled = True

    def config_schema(self) -> dict[str, Any]:
        """CoopEval's keys (top level: ``agents``, ``games``, ``mechanisms`` …)."""
        return config_schema_part()

    def check_config(self, config: Mapping[str, Any]) -> None:
        """See :func:`~.config_checks.check_config`."""
        check_config(config)

    def cells(self, config: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Every cell of a validated config, each with ``cell_id`` and ``path``
        (``coopeval/<mechanism>/<game>/<cell_id>``)."""
        return [
            {**cell, "path": f"{self.name}/{cell['mechanism']}/{cell['game']}/{cell['cell_id']}"}
            for cell in build_cells(config)
        ]

    def models(self, config: Mapping[str, Any]) -> list[str]:
        """Every model string the configured roster and the judge call."""
        models = [str(a["model"]) for a in config["agents"]]
        if judge_has_work(config):
            models.append(str(config["judge"]["model"]))
        return models

    def cell_models(self, spec: Mapping[str, Any]) -> list[str]:
        """The model strings seated in one cell."""
        return [str(a["model"]) for a in spec["agents"]]

    def play(self, spec: Mapping[str, Any], inputs: PlayInputs) -> tuple[dict[str, pl.DataFrame], CallStats]:
        """Play one cell (see :func:`~.play.play_cell`)."""
        return play_cell(
            spec,
            inputs.cache,
            inputs.prompts,
            inputs.journal,
            max_concurrency=inputs.max_concurrency,
            max_usd=inputs.max_usd,
        )

    def label(self, spec: Mapping[str, Any]) -> str:
        """``<mechanism>/<game>/r<replicate>``."""
        return f"{spec['mechanism']}/{spec['game']}/r{spec['replicate']}"

    def cost(self, spec: Mapping[str, Any]) -> int:
        """See :func:`~.cells.play_cost`."""
        return play_cost(spec)

    def manifest(self, cells: list[dict[str, Any]]) -> str:
        """See :func:`~.cells.cells_tsv`."""
        return cells_tsv(cells)
