"""Build the paper's result tables from plain frames (imported reference data or our runs).

Inputs are frames, never files, so the Snakemake rule for our own runs and
``coopeval reproduce`` call the same code:

* ``metrics`` (required): the long ``metrics`` table (:func:`coopeval.studies.coopeval.tables.metrics.compute_metrics`);
* ``released`` (optional): released summary values (``released_metrics``); when a cell has
  released ``DR_rank`` rows, the table's ``DR`` uses them;
* ``scores`` (optional): the ``scores`` table, for the bootstrap intervals;
* ``designs`` (optional): the ``designs`` table (or the ``design_quality`` table with its
  ``ns``/``wd`` columns), for the design-quality table.

Derivation (docs/protocol/tables.md): per-run values → mean over runs ± standard error
√(Σ(x − x̄)²/(n − 1)/n) for the per-game table (raw payoffs); the aggregate table normalises the
run-averaged per-game Mean and Fitness (docs/protocol/games.md#normalisation) and averages over the four social dilemmas,
± the standard error *across games*; DR is never normalised. LLM Average: unweighted mean over
types for Mean and DR; population-weighted Σ x_m f_m for Fitness (weights checked to sum to
1 ± 0.01). Ranks with 5 % grouping, bold rank ≤ 2, grey rank ≥ n − 1 with n ≥ 5
(:mod:`coopeval.studies.coopeval.tables.ranks`). Design quality (docs/protocol/tables.md step 6, docs/protocol/design-checks.md#ns-wd): per game, the share of
designs (pooled over runs and seats) that pass NS / WD; cell = mean over games × 100 ± s.e.
across games × 100.

Row order comes from the registries (:mod:`coopeval.games`, the mechanism catalog), column
order and labels from the config's roster (:mod:`coopeval.studies.coopeval.tables.roster`).
The steps live in :mod:`.per_game`, :mod:`.aggregate` and :mod:`.design_table`; the frames and
their types in :mod:`.frames`; this module puts them together.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import polars as pl

from coopeval.games import GAME_TYPES, SOCIAL_DILEMMA_TYPES, Game, get_game
from coopeval.studies.coopeval.mechanisms import catalog
from coopeval.studies.coopeval.tables.aggregate import aggregate_rows
from coopeval.studies.coopeval.tables.defaults import DEFAULT_TABLE_SETTINGS, TableSettings
from coopeval.studies.coopeval.tables.design_table import design_rows
from coopeval.studies.coopeval.tables.frames import (
    AGGREGATE_COLUMNS,
    DESIGN_COLUMNS,
    PER_GAME_COLUMNS,
    TABLE_METRICS,
    AgentColumns,
    CellStats,
    CellValues,
    GroupSizeCells,
    TableAxes,
    TableCell,
    TableSet,
    csv_schema,
    frame,
)
from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE
from coopeval.studies.coopeval.tables.per_game import (
    bootstrap_replicates,
    per_game_rows,
    per_run_values,
)
from coopeval.studies.coopeval.tables.stats import in_order, llm_average, standard_error
from coopeval.studies.coopeval.tables.tie_groups import (
    attach_tie_groups,
    table_tie_groups,
    tie_groups_from,
    untestable_families,
)
from coopeval.studies.coopeval.tables.undefined import blank_rows, undefined_metrics

__all__ = [
    "AGGREGATE_COLUMNS",
    "DESIGN_COLUMNS",
    "PER_GAME_COLUMNS",
    "TABLE_METRICS",
    "GroupSizeCells",
    "TableSet",
    "TableSettings",
    "build_tables",
    "csv_schema",
    "llm_average",
    "standard_error",
]


class _GameCatalogue:
    """Game definitions by type name: the given ones first, else :func:`coopeval.games.get_game`
    (looked up once per name). Unknown names raise KeyError (from ``get_game``)."""

    def __init__(self, games: Mapping[str, Game] | None) -> None:
        self._games: dict[str, Game] = dict(games or {})

    def __call__(self, name: str) -> Game:
        if name not in self._games:
            self._games[name] = get_game(name)
        return self._games[name]


def _table_axes(values: CellValues, per_game_games: Sequence[str] | None, columns: AgentColumns) -> TableAxes:
    """Games and mechanisms of the tables in the registries' (paper) order, agents in the
    ``columns`` order (others after, sorted); see :class:`TableAxes`."""
    present_games = {g for _, g in values}
    game_list = list(per_game_games) if per_game_games is not None else in_order(sorted(present_games), GAME_TYPES)
    mechanisms = in_order(sorted({m for m, _ in values}), catalog.MECHANISM_ORDER)
    all_agents = columns.arrange(
        sorted({a for group in values.values() for runs in group.values() for v in runs.values() for a in v} - {LLM_AVERAGE})
    )
    return TableAxes(games=game_list, mechanisms=mechanisms, agents=all_agents)


@dataclass
class _PerGame:
    """One cell set's per-game rows (ordered, with ``players``) and what the other tables need."""

    rows: list[TableCell]
    cell_stats: CellStats
    dr_source: dict[tuple[str, str], str]
    axes: TableAxes
    bootstrapped: bool


def _per_game(
    metrics: pl.DataFrame,
    released: pl.DataFrame | None,
    scores: pl.DataFrame | None,
    settings: TableSettings,
    per_game_games: Sequence[str] | None,
    players: Callable[[str, str], int | None],
    progress: Callable[[str], None] | None,
) -> _PerGame:
    """Per-game rows of one cell set: the ranked cells (:func:`per_game_rows`) and the blank rows
    of undefined metrics (:mod:`.undefined`), in game → mechanism → metric → agent order, each
    with its ``players`` (``players(mechanism, game)``)."""
    columns = settings.columns or AgentColumns()
    values, dr_source = per_run_values(metrics, released, settings.dr_rule, columns.is_llm)
    replicates = bootstrap_replicates(scores, settings, progress) if scores is not None and settings.n_bootstrap > 0 else {}
    axes = _table_axes(values, per_game_games, columns)
    rows, cell_stats = per_game_rows(values, dr_source, replicates, axes, columns.is_llm)
    game_pos = {g: i for i, g in enumerate(axes.games)}
    mech_pos = {m: i for i, m in enumerate(axes.mechanisms)}
    metric_pos = {m: i for i, m in enumerate(TABLE_METRICS)}
    rows = sorted(  # stable: the agents keep their order
        [*rows, *blank_rows(undefined_metrics(metrics), values, axes)],
        key=lambda r: (game_pos[str(r["game"])], mech_pos[str(r["mechanism"])], metric_pos[str(r["metric"])]),
    )
    for row in rows:
        row["players"] = players(str(row["mechanism"]), str(row["game"]))
    return _PerGame(rows, cell_stats, dr_source, axes, bool(replicates))


def build_tables(
    metrics: pl.DataFrame,
    *,
    released: pl.DataFrame | None = None,
    scores: pl.DataFrame | None = None,
    designs: pl.DataFrame | None = None,
    comparisons: pl.DataFrame | None = None,
    settings: TableSettings = DEFAULT_TABLE_SETTINGS,
    games: Mapping[str, Game] | None = None,
    per_game_games: Sequence[str] | None = None,
    aggregate_games: Sequence[str] = SOCIAL_DILEMMA_TYPES,
    players: Mapping[tuple[str, str], int] | None = None,
    group_sizes: Sequence[GroupSizeCells] = (),
    progress: Callable[[str], None] | None = None,
) -> TableSet:
    """Build the per-game, aggregate and design-quality tables (docs/protocol/tables.md, docs/protocol/design-checks.md#ns-wd).

    Parameters
    ----------
    metrics:
        Long ``metrics`` frame: per (run, mechanism, game, agent) ``Mean``, ``Fitness``,
        ``FinalPopulation`` (rule ""), ``DR_rank`` (rule ``"strictest"`` and optionally
        ``dr_rule``); note metrics (``TensorIncomplete``, ``NoMetagame``, ``DRNotComputed``)
        give the per-game table blank rows with the reason (:mod:`.undefined`).
    released:
        Optional ``released_metrics`` frame; its ``DR_rank`` rows (rule ``"released"``) become
        the ``DR`` metric of their cells.
    scores:
        Optional ``scores`` frame; enables the bootstrap intervals of Mean and Fitness.
    comparisons:
        Optional ``comparisons`` frame (:mod:`coopeval.comparison.record`); enables the rank
        tie groups (column ``tie_group``, :mod:`coopeval.studies.coopeval.tables.tie_groups`).
    designs:
        Optional ``designs`` frame (NS/WD computed here, docs/protocol/design-checks.md#ns-wd) or ``design_quality`` frame
        (its ``ns``/``wd`` columns are used as they are); enables the design-quality table.
    settings:
        DR rule (used for ``DR`` where no released ratings exist), bootstrap resamples (0
        disables the intervals) and seed, and the replicator settings of the bootstrap (pass
        the ones the ``metrics`` were computed with, so the Fitness intervals match the point
        estimates): :class:`~coopeval.studies.coopeval.tables.defaults.TableSettings`.
    games:
        Game definitions by type name (default :func:`coopeval.games.get_game`), used for
        normalisation (docs/protocol/games.md#normalisation) and the NS/WD checks.
    per_game_games:
        Games of the per-game table (default: every game present, in paper order).
    aggregate_games:
        Games averaged in the aggregate and design tables (default the four social dilemmas).
    players:
        (mechanism, game) → the number of players N of the ``metrics`` cells (the per-game
        table's ``players``); default each game's own (``games``, else the registry; null for
        an unknown game).
    group_sizes:
        Cells of further group sizes N (variants that change only the number of players,
        :mod:`coopeval.studies.coopeval.tables.group_sizes`): each adds its own per-game rows
        after those of ``metrics`` within every game, without tie groups (the comparisons cover
        the default cells). They enter neither the aggregate nor the design-quality table,
        which keep the paper's definition over ``metrics`` (its N = 3 for Public Goods).
    progress:
        Called with progress lines.

    Returns
    -------
    TableSet

    Raises
    ------
    ValueError
        If a Fitness LLM average has population weights not summing to 1 ± 0.01.
    """
    game_of = _GameCatalogue(games)
    main = _per_game(metrics, released, scores, settings, per_game_games, _players_of(players, game_of), progress)
    aggregate = aggregate_rows(main.cell_stats, main.dr_source, main.axes, aggregate_games, game_of)
    ties = table_tie_groups(tie_groups_from(comparisons), settings.dr_rule, main.dr_source, aggregate_games)
    untestable = (
        untestable_families(comparisons.filter(pl.col("study") == "coopeval"), _replicates(main.rows, aggregate_games))
        if comparisons is not None and comparisons.height
        else {}
    )
    corrections = (attach_tie_groups(main.rows, ties, main.axes.agents, untestable)
                   | attach_tie_groups(aggregate, ties, main.axes.agents, untestable))
    others = [
        _per_game(cells.metrics, None, cells.scores, settings, per_game_games, _players_of(cells.players, game_of), progress)
        for cells in group_sizes
    ]
    for part in others:
        for row in part.rows:
            row["tie_group"] = None
    designs_rows: list[TableCell] = []
    if designs is not None and designs.height:
        designs_rows = design_rows(designs, aggregate_games, game_of, main.axes.agents, (settings.columns or AgentColumns()).is_llm)
    return TableSet(
        per_game=frame(_by_game([main, *others], per_game_games), with_rank=True),
        aggregate=frame(aggregate, with_rank=True),
        design_quality=frame(designs_rows, with_rank=False),
        notes={**_notes(settings, main.bootstrapped, aggregate_games),
               **({"tie_groups": ",".join(sorted(corrections))} if corrections else {}),
               **({"group_sizes": _group_sizes_note(others)} if any(p.rows for p in others) else {})},
        columns=settings.columns or AgentColumns(),
    )


def _players_of(given: Mapping[tuple[str, str], int] | None, game_of: _GameCatalogue) -> Callable[[str, str], int | None]:
    """``players(mechanism, game)``: from ``given``, else the game's own N (null for an unknown game)."""

    def players(mechanism: str, game: str) -> int | None:
        if given is not None and (mechanism, game) in given:
            return given[(mechanism, game)]
        try:
            return game_of(game).n_players
        except KeyError:
            return None

    return players


def _by_game(parts: Sequence[_PerGame], per_game_games: Sequence[str] | None) -> list[TableCell]:
    """The parts' rows game by game (paper order, or ``per_game_games``'), each game's parts in
    the given order (the default cells first)."""
    present = sorted({str(r["game"]) for part in parts for r in part.rows})
    order = list(per_game_games) if per_game_games is not None else in_order(present, GAME_TYPES)
    return [r for game in order for part in parts for r in part.rows if r["game"] == game]


def _replicates(rows: Sequence[TableCell], aggregate_games: Sequence[str]) -> dict[str, int]:
    """Scope → the replicates behind its comparisons: ``<mechanism>/<game>`` the most runs any
    agent's per-game cell averages, ``<mechanism>/All`` the most over the ``aggregate_games``."""
    out: dict[str, int] = {}
    for r in rows:
        n = int(r.get("n") or 0)  # type: ignore[call-overload]
        scopes = [f"{r['mechanism']}/{r['game']}"] + ([f"{r['mechanism']}/All"] if r["game"] in aggregate_games else [])
        for scope in scopes:
            out[scope] = max(out.get(scope, 0), n)
    return out


def _group_sizes_note(others: Sequence[_PerGame]) -> str:
    """``"PublicGoods:5,8"``-style list of the further group sizes per game (the aggregate caption's note)."""
    sizes: dict[str, set[int]] = {}
    for part in others:
        for row in part.rows:
            if isinstance(row["players"], int):
                sizes.setdefault(str(row["game"]), set()).add(row["players"])
    return ";".join(f"{game}:{','.join(str(n) for n in sorted(ns))}" for game, ns in sizes.items())


def _notes(settings: TableSettings, bootstrapped: bool, aggregate_games: Sequence[str]) -> dict[str, str]:
    """The :attr:`TableSet.notes`: DR rule, bootstrap description and aggregate games."""
    described = f"{settings.n_bootstrap} resamples over runs and matchups (stratified), seed {settings.seed}"
    return {
        "dr_rule": settings.dr_rule,
        "bootstrap": described if bootstrapped else "none",
        "aggregate_games": ",".join(aggregate_games),
    }
