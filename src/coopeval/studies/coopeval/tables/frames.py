"""The table frames: column sets, frame schema, the built :class:`TableSet` and the types of
the intermediate values of the table builder (:mod:`coopeval.studies.coopeval.tables.builder`)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

__all__ = [
    "AGGREGATE_COLUMNS",
    "DESIGN_COLUMNS",
    "FRAME_SCHEMA",
    "PER_GAME_COLUMNS",
    "TABLE_METRICS",
    "AgentColumns",
    "CellStats",
    "CellValues",
    "GroupSizeCells",
    "RunValues",
    "TableAxes",
    "TableCell",
    "TableSet",
    "csv_schema",
    "frame",
]

TABLE_METRICS = ("Mean", "Fitness", "DR", "DR_exact")
AGGREGATE_COLUMNS = ("mechanism", "game", "metric", "agent", "mean", "se", "rank", "ci_low", "ci_high", "tie_group")
"""CSV columns of the aggregate table; ``tie_group`` (letters, docs/comparisons.md) is last so the
earlier columns keep their positions."""
PER_GAME_COLUMNS = (*AGGREGATE_COLUMNS, "players", "note")
"""CSV columns of the per-game table: the aggregate's, then ``players`` (the game's number of
players N: the table has one set of rows per N a game was played at) and ``note`` (why a row's
metric is blank: the cell's note metric and message, e.g. ``TensorIncomplete: …``; empty
otherwise), after the earlier columns so those keep their positions."""
DESIGN_COLUMNS = ("mechanism", "metric", "agent", "mean", "se")

FRAME_SCHEMA: dict[str, pl.DataType] = {
    "mechanism": pl.String(),
    "game": pl.String(),
    "metric": pl.String(),
    "agent": pl.String(),
    "mean": pl.Float64(),
    "se": pl.Float64(),
    "rank": pl.Int64(),
    "ci_low": pl.Float64(),
    "ci_high": pl.Float64(),
    "n": pl.Int64(),
    "n_valid": pl.Int64(),  # of the n runs (games) averaged, those with a finite value
    "bold": pl.Boolean(),
    "grey": pl.Boolean(),
    "dr_source": pl.String(),
    "tie_group": pl.String(),
    "players": pl.Int64(),
    "note": pl.String(),
}
"""Columns of the built frames (CSV columns plus the rendering columns ``n``, ``bold``, ``grey``,
``dr_source``)."""


def csv_schema(table: str) -> dict[str, pl.DataType]:
    """The column types of ``results/tables/<table>.csv`` (``per_game``, ``aggregate`` or
    ``design_quality``), for reading it back without guessing (issue 13 kind 10c).

    Raises
    ------
    KeyError
        For another table name.
    """
    columns = {"per_game": PER_GAME_COLUMNS, "aggregate": AGGREGATE_COLUMNS, "design_quality": DESIGN_COLUMNS}[table]
    return {c: FRAME_SCHEMA[c] for c in columns}


@dataclass(frozen=True)
class AgentColumns:
    """The agent columns of the rendered tables: preferred order (agent type strings) and
    column labels (default: the type string); see :mod:`coopeval.studies.coopeval.tables.roster`."""

    order: tuple[str, ...] = ()
    labels: Mapping[str, str] = field(default_factory=dict)
    llm: Mapping[str, bool] = field(default_factory=dict)
    """Agent → whether the roster says it is a language model (not a bot, not a person)."""

    def is_llm(self, agent: str) -> bool:
        """Whether ``agent`` enters the LLM Average: as the roster says (:attr:`llm`), else by
        its type string's provider (``bot/…`` and ``human/…`` are not LLM agents,
        :func:`coopeval.agents.registry.is_llm`)."""
        if agent in self.llm:
            return bool(self.llm[agent])
        from coopeval.agents.registry import is_llm

        return is_llm(re.sub(r"\([^()]*\)$", "", agent))

    def arrange(self, present: Sequence[str]) -> list[str]:
        """``present`` agents in :attr:`order`, the others after, sorted."""
        known = [a for a in self.order if a in present]
        return known + sorted(set(present) - set(known))

    def label(self, agent: str) -> str:
        """The column label of ``agent``."""
        return self.labels.get(agent, agent)


@dataclass
class TableSet:
    """The built tables. CSV columns are :data:`PER_GAME_COLUMNS` / :data:`AGGREGATE_COLUMNS` /
    :data:`DESIGN_COLUMNS`;
    the frames carry extra columns for rendering (``n``: runs or games averaged, ``bold``,
    ``grey``, ``dr_source``).

    ``columns`` gives the column order and labels of the rendered tables.
    """

    per_game: pl.DataFrame
    aggregate: pl.DataFrame
    design_quality: pl.DataFrame
    notes: dict[str, str] = field(default_factory=dict)
    columns: AgentColumns = field(default_factory=AgentColumns)


@dataclass(frozen=True)
class GroupSizeCells:
    """The cells of one further group size N of the per-game table (variants that change only
    the number of players; :mod:`coopeval.studies.coopeval.tables.group_sizes`).

    Attributes
    ----------
    metrics, scores:
        Their long ``metrics`` frame and ``scores`` frame (None: no bootstrap intervals).
    players:
        (mechanism, game type name) → N, the ``players`` of their rows.
    """

    metrics: pl.DataFrame
    scores: pl.DataFrame | None
    players: Mapping[tuple[str, str], int]


@dataclass(frozen=True)
class TableAxes:
    """Row order of the tables.

    Attributes
    ----------
    games:
        Games of the per-game table (given, or every game present in paper order).
    mechanisms:
        Mechanisms present, in paper order (unknown ones after, sorted).
    agents:
        Agent types present (LLM Average excluded), in the given order (others after, sorted).
    """

    games: list[str]
    mechanisms: list[str]
    agents: list[str]


RunValues = dict[str, dict[str, float]]
"""run → {agent (incl. LLM Average): value} of one metric in one (mechanism, game) cell."""
CellValues = dict[tuple[str, str], dict[str, RunValues]]
"""(mechanism, game) → metric → :data:`RunValues`."""
TableCell = dict[str, object]
"""One table cell before ranking: the row's columns (``mechanism``, ``game``, ``metric``, ``mean``,
``se``, ``ci_low``, ``ci_high``, ``n``, ``dr_source``; per-game cells also ``_reps``, the
bootstrap replicates, shape (B,) or None, and ``players``, ``note``)."""
CellStats = dict[tuple[str, str, str], dict[str, TableCell]]
"""(mechanism, game, metric) → agent → per-game :data:`TableCell`."""


def frame(rows: list[dict[str, object]], with_rank: bool) -> pl.DataFrame:
    """Rows as a frame of :data:`FRAME_SCHEMA` (without ``ci_*``/``dr_source`` unless ``with_rank``)."""
    schema = dict(FRAME_SCHEMA)
    if not with_rank:
        for key in ("ci_low", "ci_high", "dr_source", "tie_group", "players", "note"):
            schema.pop(key)
    clean = [{k: r.get(k) for k in schema} for r in rows]
    return pl.DataFrame(clean, schema=schema) if clean else pl.DataFrame(schema=schema)
