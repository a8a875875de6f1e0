"""Build the paper's result tables from plain frames (imported reference data or our runs).

Inputs are frames, never files, so the Snakemake rule for our own runs and
``coopeval reproduce`` call the same code:

* ``metrics`` (required): the long ``metrics`` table (:func:`coopeval.studies.coopeval.tables.metrics.compute_metrics`);
* ``released`` (optional): released summary values (``released_metrics``); when a cell has
  released ``DR_rank`` rows, the table's ``DR`` uses them;
* ``scores`` (optional): the ``scores`` table, for the bootstrap intervals;
* ``designs`` (optional): the ``designs`` table (or the ``design_quality`` table with its
  ``ns``/``wd`` columns), for the design-quality table.

Derivation (spec §7): per-run values → mean over runs ± standard error
√(Σ(x − x̄)²/(n − 1)/n) for the per-game table (raw payoffs); the aggregate table normalises the
run-averaged per-game Mean and Fitness (spec §2.7) and averages over the four social dilemmas,
± the standard error *across games*; DR is never normalised. LLM Average: unweighted mean over
types for Mean and DR; population-weighted Σ x_m f_m for Fitness (weights checked to sum to
1 ± 0.01). Ranks with 5 % grouping, bold rank ≤ 2, grey rank ≥ n − 1 with n ≥ 5
(:mod:`coopeval.studies.coopeval.tables.ranks`). Design quality (spec §7 step 6, §8): per game, the share of
designs (pooled over runs and seats) that pass NS / WD; cell = mean over games × 100 ± s.e.
across games × 100.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from coopeval.studies.coopeval.mechanisms.catalog import MECHANISM_INFO, MECHANISM_LABELS, MECHANISM_ORDER
from coopeval.games.designs import design_checks
from coopeval.games import Game, get_game
from coopeval.studies.coopeval.tables.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    CellReplicates,
    bootstrap_groups,
    group_rng,
    percentile_interval,
)
from coopeval.studies.coopeval.tables.defaults import REPLICATOR_LR, REPLICATOR_STEPS
from coopeval.studies.coopeval.tables.metrics import LLM_AVERAGE, observations_by_cell
from coopeval.studies.coopeval.tables.ranks import descending, group_ranks, is_bold, is_grey

__all__ = [
    "MECHANISM_ORDER",
    "GAME_ORDER",
    "SOCIAL_DILEMMA_TYPES",
    "AGENT_ORDER",
    "AGENT_LABELS",
    "MECHANISM_LABELS",
    "TABLE_METRICS",
    "PER_GAME_COLUMNS",
    "DESIGN_COLUMNS",
    "TableSet",
    "build_tables",
    "standard_error",
    "llm_average",
]

GAME_ORDER = ("PrisonersDilemma", "PublicGoods", "TravellersDilemma", "TrustGame", "StagHunt", "MatchingPennies")
SOCIAL_DILEMMA_TYPES = GAME_ORDER[:4]
"""The four games of every headline number (spec §1)."""
AGENT_ORDER = (
    "anthropic/claude-sonnet-4.5(CoT)",
    "google/gemini-3-flash-preview(CoT)",
    "google/gemini-3-flash-preview(IO)",
    "openai/gpt-5.2(CoT)",
    "openai/gpt-4o-2024-05-13(CoT)",
    "qwen/qwen3-30b-a3b-instruct-2507(CoT)",
)
"""Table column order (spec §1); other agents follow, sorted by name."""
AGENT_LABELS = dict(zip(AGENT_ORDER, ("Claude", "Gemini-R", "Gemini-B", "GPT-5.2", "GPT-4o", "Qwen-30b"), strict=True))
TABLE_METRICS = ("Mean", "Fitness", "DR", "DR_exact")
PER_GAME_COLUMNS = ("mechanism", "game", "metric", "agent", "mean", "se", "rank", "ci_low", "ci_high")
DESIGN_COLUMNS = ("mechanism", "metric", "agent", "mean", "se")


def csv_schema(table: str) -> dict[str, pl.DataType]:
    """The column types of ``results/tables/<table>.csv`` (``per_game``, ``aggregate`` or
    ``design_quality``), for reading it back without guessing (issue 13 kind 10c).

    Raises
    ------
    KeyError
        For another table name.
    """
    columns = {"per_game": PER_GAME_COLUMNS, "aggregate": PER_GAME_COLUMNS, "design_quality": DESIGN_COLUMNS}[table]
    return {c: _FRAME_SCHEMA[c] for c in columns}
_WEIGHT_TOLERANCE = 0.01


@dataclass
class TableSet:
    """The built tables. CSV columns are :data:`PER_GAME_COLUMNS` / :data:`DESIGN_COLUMNS`;
    the frames carry extra columns for rendering (``n``: runs or games averaged, ``bold``,
    ``grey``, ``dr_source``).
    """

    per_game: pl.DataFrame
    aggregate: pl.DataFrame
    design_quality: pl.DataFrame
    notes: dict[str, str] = field(default_factory=dict)


# ----------------------------------------------------------------------------------------------
# Small statistics


def standard_error(values: Sequence[float]) -> float | None:
    """√(Σ(x − x̄)²/(n − 1)/n) (spec §7 step 4); None for fewer than 2 values."""
    x = np.asarray(values, dtype=float)
    if len(x) < 2:
        return None
    return float(np.std(x, ddof=1) / math.sqrt(len(x)))


def llm_average(metric: str, values: Mapping[str, float], populations: Mapping[str, float] | None = None) -> float:
    """LLM-average of one run (spec §7 step 3).

    Mean and DR ranks: unweighted mean over types. Fitness: Σ_m population_m · fitness_m.

    Raises
    ------
    ValueError
        If Fitness lacks populations for some type, or the weights do not sum to 1 ± 0.01.
    """
    if metric != "Fitness":
        return float(np.mean(list(values.values())))
    if populations is None or set(populations) != set(values):
        raise ValueError("Fitness LLM average needs the final population of every type")
    weight = sum(populations.values())
    if abs(weight - 1.0) > _WEIGHT_TOLERANCE:
        raise ValueError(f"final population weights sum to {weight}, not 1 ± {_WEIGHT_TOLERANCE}")
    return float(sum(populations[a] * values[a] for a in values))


def _order(items: Sequence[str], preferred: Sequence[str]) -> list[str]:
    """``items`` in ``preferred`` order, then the others sorted."""
    known = [x for x in preferred if x in items]
    return known + sorted(set(items) - set(known))


def _ranked_rows(
    cells: dict[str, dict[str, object]], metric: str, agents: Sequence[str]
) -> list[dict[str, object]]:
    """Attach rank/bold/grey to per-agent cells (LLM Average unranked), in agent order."""
    ranked = {a: float(cells[a]["mean"]) for a in agents if a in cells and a != LLM_AVERAGE}  # type: ignore[arg-type]
    ranks = group_ranks(ranked, descending(metric))
    n = len(ranks)
    rows = []
    for agent in [*agents, LLM_AVERAGE]:
        if agent not in cells:
            continue
        rank = ranks.get(agent) if agent != LLM_AVERAGE else None
        rows.append({**cells[agent], "agent": agent, "rank": rank, "bold": is_bold(rank), "grey": is_grey(rank, n)})
    return rows


# ----------------------------------------------------------------------------------------------
# Types of the intermediate values

RunValues = dict[str, dict[str, float]]
"""run → {agent (incl. LLM Average): value} of one metric in one (mechanism, game) cell."""
CellValues = dict[tuple[str, str], dict[str, RunValues]]
"""(mechanism, game) → metric → :data:`RunValues`."""
TableCell = dict[str, object]
"""One table cell before ranking: the row's columns (``mechanism``, ``game``, ``metric``, ``mean``,
``se``, ``ci_low``, ``ci_high``, ``n``, ``dr_source``; per-game cells also ``_reps``, the
bootstrap replicates, shape (B,) or None)."""
CellStats = dict[tuple[str, str, str], dict[str, TableCell]]
"""(mechanism, game, metric) → agent → per-game :data:`TableCell`."""


class _GameCatalogue:
    """Game definitions by type name: the given ones first, else :func:`coopeval.games.get_game`
    (looked up once per name). Unknown names raise KeyError (from ``get_game``)."""

    def __init__(self, games: Mapping[str, Game] | None) -> None:
        self._games: dict[str, Game] = dict(games or {})

    def __call__(self, name: str) -> Game:
        if name not in self._games:
            self._games[name] = get_game(name)
        return self._games[name]


@dataclass(frozen=True)
class _TableAxes:
    """Row order of the tables.

    Attributes
    ----------
    games:
        Games of the per-game table (given, or every game present in paper order).
    mechanisms:
        Mechanisms present, in paper order (unknown ones after, sorted).
    agents:
        Agent types present (LLM Average excluded), in :data:`AGENT_ORDER` (others after, sorted).
    """

    games: list[str]
    mechanisms: list[str]
    agents: list[str]


# ----------------------------------------------------------------------------------------------
# Per-run values


def _metric_lookup(frame: pl.DataFrame) -> dict[tuple[str, str, str, str, str], dict[str, float]]:
    """(mechanism, game, run, metric, rule or "") → {agent: value} of a long metrics frame."""
    table: dict[tuple[str, str, str, str, str], dict[str, float]] = {}
    for row in frame.iter_rows(named=True):
        key = (row["mechanism"], row["game"], row["run"], row["metric"], row["rule"] or "")
        table.setdefault(key, {})[row["agent"]] = float(row["value"])
    return table


def _per_run_values(
    metrics: pl.DataFrame, released: pl.DataFrame | None, dr_rule: str
) -> tuple[CellValues, dict[tuple[str, str], str]]:
    """(mechanism, game) → metric → run → {agent (incl. LLM Average): value}; and DR source.

    ``DR`` takes the released ``DR_rank`` of a run where there is one, else the ``dr_rule``
    ranks; the DR source of a cell is ``"released"``, ``dr_rule`` or both joined by ``+``.
    LLM averages follow :func:`llm_average` (spec §7 step 3).
    """
    out: CellValues = {}
    dr_source: dict[tuple[str, str], set[str]] = {}
    ours = _metric_lookup(metrics)
    rel = _metric_lookup(released) if released is not None and released.height else {}
    runs = sorted({(k[0], k[1], k[2]) for k in ours})
    for mech, game, run in runs:
        group = out.setdefault((mech, game), {})
        means = ours.get((mech, game, run, "Mean", ""))
        if means:
            values = {a: v for a, v in means.items() if a != LLM_AVERAGE}
            group.setdefault("Mean", {})[run] = {**values, LLM_AVERAGE: llm_average("Mean", values)}
        fitness = ours.get((mech, game, run, "Fitness", ""))
        if fitness:
            pops = ours.get((mech, game, run, "FinalPopulation", ""), {})
            values = {a: v for a, v in fitness.items() if a != LLM_AVERAGE}
            group.setdefault("Fitness", {})[run] = {**values, LLM_AVERAGE: llm_average("Fitness", values, pops)}
        exact = ours.get((mech, game, run, "DR_rank", "strictest"))
        if exact:
            group.setdefault("DR_exact", {})[run] = {**exact, LLM_AVERAGE: llm_average("DR", exact)}
        released_ranks = rel.get((mech, game, run, "DR_rank", "released"))
        configured = ours.get((mech, game, run, "DR_rank", dr_rule))
        chosen, source = (released_ranks, "released") if released_ranks else (configured, dr_rule)
        if chosen:
            group.setdefault("DR", {})[run] = {**chosen, LLM_AVERAGE: llm_average("DR", chosen)}
            dr_source.setdefault((mech, game), set()).add(source)
    return out, {k: "+".join(sorted(v)) for k, v in dr_source.items()}


def _table_axes(values: CellValues, per_game_games: Sequence[str] | None) -> _TableAxes:
    """Games, mechanisms and agents of the tables, in paper order (see :class:`_TableAxes`)."""
    present_games = {g for _, g in values}
    game_list = list(per_game_games) if per_game_games is not None else _order(sorted(present_games), GAME_ORDER)
    mechanisms = _order(sorted({m for m, _ in values}), MECHANISM_ORDER)
    all_agents = _order(
        sorted({a for group in values.values() for runs in group.values() for v in runs.values() for a in v} - {LLM_AVERAGE}),
        AGENT_ORDER,
    )
    return _TableAxes(games=game_list, mechanisms=mechanisms, agents=all_agents)


# ----------------------------------------------------------------------------------------------
# Bootstrap


def _bootstrap(
    scores: pl.DataFrame, n_resamples: int, seed: int, steps: int, lr: float, progress: Callable[[str], None] | None
) -> dict[tuple[str, str], CellReplicates]:
    """Bootstrap replicates per (mechanism, game), resampling runs and matchups (stratified).

    One RNG stream per (mechanism, game) from ``seed`` (:func:`group_rng`); see
    :mod:`coopeval.studies.coopeval.tables.bootstrap` (spec §7).
    """
    cells = observations_by_cell(scores)
    groups: dict[tuple[str, str], dict[str, list]] = {}  # type: ignore[type-arg]
    for (_cell_id, _source, run, mech, game), observations in cells.items():
        groups.setdefault((mech, game), {}).setdefault(run, []).extend(observations)
    if progress is not None:
        progress(f"bootstrap: {n_resamples} resamples for {len(groups)} (mechanism, game) group(s)")
    work = {
        key: ([runs[r] for r in sorted(runs)], group_rng(seed, *key)) for key, runs in groups.items()
    }
    return bootstrap_groups(work, n_resamples, steps, lr)  # type: ignore[return-value]


def _replicates(rep: CellReplicates | None, metric: str, agent: str) -> np.ndarray | None:
    """Bootstrap replicates of one agent's (or the LLM Average's) metric, shape (B,), or None.

    Only Mean and Fitness have replicates; the LLM Average of Mean is the unweighted mean over
    types, of Fitness the population-weighted fitness.
    """
    if rep is None:
        return None
    if metric == "Mean":
        if agent == LLM_AVERAGE:
            return rep.mean.mean(axis=1)
        return rep.mean[:, rep.agents.index(agent)] if agent in rep.agents else None
    if metric == "Fitness" and rep.fitness is not None and rep.population_fitness is not None:
        if agent == LLM_AVERAGE:
            return rep.population_fitness
        return rep.fitness[:, rep.agents.index(agent)] if agent in rep.agents else None
    return None


# ----------------------------------------------------------------------------------------------
# Per-game table


def _per_game_cell(
    mech: str,
    game: str,
    metric: str,
    agent: str,
    runs: RunValues,
    replicates: Mapping[tuple[str, str], CellReplicates],
    dr_source: Mapping[tuple[str, str], str],
) -> TableCell | None:
    """Mean over runs ± standard error (spec §7 step 4) and bootstrap percentile interval of one
    agent in one (mechanism, game, metric) cell; None if the agent has no run value."""
    xs = [runs[r][agent] for r in sorted(runs) if agent in runs[r]]
    if not xs:
        return None
    ci = (None, None)
    reps = _replicates(replicates.get((mech, game)), metric, agent)
    if reps is not None:
        ci = percentile_interval(reps)
    return {
        "mechanism": mech,
        "game": game,
        "metric": metric,
        "mean": float(np.mean(xs)),
        "se": standard_error(xs),
        "ci_low": ci[0],
        "ci_high": ci[1],
        "n": len(xs),
        "dr_source": dr_source.get((mech, game)) if metric == "DR" else None,
        "_reps": reps,
    }


def _per_game_rows(
    values: CellValues,
    dr_source: Mapping[tuple[str, str], str],
    replicates: Mapping[tuple[str, str], CellReplicates],
    axes: _TableAxes,
) -> tuple[list[TableCell], CellStats]:
    """Ranked rows of the per-game table (raw payoffs) and its cells for the aggregate table.

    Rows run game → mechanism → metric (:data:`TABLE_METRICS`) → agent, LLM Average last.
    """
    rows: list[TableCell] = []
    cell_stats: CellStats = {}
    for game in axes.games:
        for mech in axes.mechanisms:
            group = values.get((mech, game))
            if not group:
                continue
            for metric in TABLE_METRICS:
                runs = group.get(metric)
                if not runs:
                    continue
                cells: dict[str, TableCell] = {}
                for agent in [*axes.agents, LLM_AVERAGE]:
                    cell = _per_game_cell(mech, game, metric, agent, runs, replicates, dr_source)
                    if cell is not None:
                        cells[agent] = cell
                cell_stats[(mech, game, metric)] = cells
                rows.extend(_ranked_rows(cells, metric, axes.agents))
    return rows, cell_stats


# ----------------------------------------------------------------------------------------------
# Aggregate table


def _normalised_game_cell(
    cell: TableCell, metric: str, game: Game
) -> tuple[float, float | None, np.ndarray | None]:
    """(mean, s.e., bootstrap replicates or None) of one per-game cell on the aggregate scale.

    Mean and Fitness are normalised (x − NE) / (coop − NE) (spec §2.7), their s.e. divided by
    |coop − NE|; DR stays raw and has no replicates.
    """
    scale = 1.0
    if metric in ("Mean", "Fitness"):
        scale = abs(game.coop_value - game.ne_value)
        mean = game.normalise(float(cell["mean"]))  # type: ignore[arg-type]
        reps = cell["_reps"]
        normalised = None if reps is None else (np.asarray(reps) - game.ne_value) / (game.coop_value - game.ne_value)
    else:
        mean = float(cell["mean"])  # type: ignore[arg-type]
        normalised = None
    se = cell["se"]
    return mean, None if se is None else float(se) / scale, normalised  # type: ignore[arg-type]


def _aggregate_cell(
    mech: str,
    metric: str,
    agent: str,
    in_games: Sequence[str],
    cell_stats: CellStats,
    dr_source: Mapping[tuple[str, str], str],
    game_of: Callable[[str], Game],
) -> TableCell | None:
    """One agent's aggregate cell: mean over games of the normalised per-game means (spec §7).

    s.e. across games (a single game keeps its own normalised s.e.); the interval is the
    percentile interval of the game-averaged replicates when every game has replicates. None
    if the agent has no per-game cell.
    """
    per_game_means: list[float] = []
    per_game_se: list[float | None] = []
    reps_list: list[np.ndarray | None] = []
    games_used: list[str] = []
    for g in in_games:
        cell = cell_stats[(mech, g, metric)].get(agent)
        if cell is None:
            continue
        mean, se, reps = _normalised_game_cell(cell, metric, game_of(g))
        per_game_means.append(mean)
        reps_list.append(reps)
        per_game_se.append(se)
        games_used.append(g)
    if not per_game_means:
        return None
    se_value = standard_error(per_game_means) if len(per_game_means) >= 2 else per_game_se[0]
    ci = (None, None)
    if reps_list and all(r is not None for r in reps_list):
        ci = percentile_interval(np.mean(np.vstack(reps_list), axis=0))  # type: ignore[arg-type]
    return {
        "mechanism": mech,
        "game": "All",
        "metric": metric,
        "mean": float(np.mean(per_game_means)),
        "se": se_value,
        "ci_low": ci[0],
        "ci_high": ci[1],
        "n": len(per_game_means),
        "dr_source": "+".join(sorted({dr_source[(mech, g)] for g in games_used if (mech, g) in dr_source}))
        if metric == "DR"
        else None,
    }


def _aggregate_rows(
    cell_stats: CellStats,
    dr_source: Mapping[tuple[str, str], str],
    axes: _TableAxes,
    aggregate_games: Sequence[str],
    game_of: Callable[[str], Game],
) -> list[TableCell]:
    """Ranked rows of the aggregate table over ``aggregate_games`` (mechanism → metric → agent)."""
    rows: list[TableCell] = []
    for mech in axes.mechanisms:
        for metric in TABLE_METRICS:
            in_games = [g for g in aggregate_games if (mech, g, metric) in cell_stats]
            if not in_games:
                continue
            cells: dict[str, TableCell] = {}
            for agent in [*axes.agents, LLM_AVERAGE]:
                cell = _aggregate_cell(mech, metric, agent, in_games, cell_stats, dr_source, game_of)
                if cell is not None:
                    cells[agent] = cell
            rows.extend(_ranked_rows(cells, metric, axes.agents))
    return rows


# ----------------------------------------------------------------------------------------------
# Builder


def build_tables(
    metrics: pl.DataFrame,
    *,
    released: pl.DataFrame | None = None,
    scores: pl.DataFrame | None = None,
    designs: pl.DataFrame | None = None,
    dr_rule: str = "strictest",
    games: Mapping[str, Game] | None = None,
    per_game_games: Sequence[str] | None = None,
    aggregate_games: Sequence[str] = SOCIAL_DILEMMA_TYPES,
    n_bootstrap: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    steps: int = REPLICATOR_STEPS,
    lr: float = REPLICATOR_LR,
    progress: Callable[[str], None] | None = None,
) -> TableSet:
    """Build the per-game, aggregate and design-quality tables (spec §7, §8).

    Parameters
    ----------
    metrics:
        Long ``metrics`` frame: per (run, mechanism, game, agent) ``Mean``, ``Fitness``,
        ``FinalPopulation`` (rule ""), ``DR_rank`` (rule ``"strictest"`` and optionally
        ``dr_rule``).
    released:
        Optional ``released_metrics`` frame; its ``DR_rank`` rows (rule ``"released"``) become
        the ``DR`` metric of their cells.
    scores:
        Optional ``scores`` frame; enables the bootstrap intervals of Mean and Fitness.
    designs:
        Optional ``designs`` frame (NS/WD computed here, spec §8) or ``design_quality`` frame
        (its ``ns``/``wd`` columns are used as they are); enables the design-quality table.
    dr_rule:
        Rule whose ``DR_rank`` is used for ``DR`` where no released ratings exist.
    games:
        Game definitions by type name (default :func:`coopeval.games.get_game`), used for
        normalisation (spec §2.7) and the NS/WD checks.
    per_game_games:
        Games of the per-game table (default: every game present, in paper order).
    aggregate_games:
        Games averaged in the aggregate and design tables (default the four social dilemmas).
    n_bootstrap, seed:
        Bootstrap resamples (0 disables the intervals) and seed.
    steps, lr:
        Replicator settings of the bootstrap; pass the ones the ``metrics`` were computed with
        (``evaluation.steps`` / ``evaluation.lr``), so the Fitness intervals match the point
        estimates.
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
    values, dr_source = _per_run_values(metrics, released, dr_rule)
    replicates = (
        _bootstrap(scores, n_bootstrap, seed, steps, lr, progress) if scores is not None and n_bootstrap > 0 else {}
    )
    axes = _table_axes(values, per_game_games)
    per_game_rows, cell_stats = _per_game_rows(values, dr_source, replicates, axes)
    aggregate_rows = _aggregate_rows(cell_stats, dr_source, axes, aggregate_games, game_of)
    design_rows: list[TableCell] = []
    if designs is not None and designs.height:
        design_rows = _design_rows(designs, aggregate_games, game_of, axes.agents)
    return TableSet(
        per_game=_frame(per_game_rows, with_rank=True),
        aggregate=_frame(aggregate_rows, with_rank=True),
        design_quality=_frame(design_rows, with_rank=False),
        notes=_notes(dr_rule, n_bootstrap, seed, bool(replicates), aggregate_games),
    )


def _notes(dr_rule: str, n_bootstrap: int, seed: int, bootstrapped: bool, aggregate_games: Sequence[str]) -> dict[str, str]:
    """The :attr:`TableSet.notes`: DR rule, bootstrap description and aggregate games."""
    return {
        "dr_rule": dr_rule,
        "bootstrap": f"{n_bootstrap} resamples over runs and matchups (stratified), seed {seed}" if bootstrapped else "none",
        "aggregate_games": ",".join(aggregate_games),
    }


def _design_rows(
    designs: pl.DataFrame, games: Sequence[str], game_of: Callable[[str], Game], agent_order: Sequence[str]
) -> list[dict[str, object]]:
    """Ranked rows of the design-quality table (spec §7 step 6, §8).

    Per game, the share (in %) of designs, pooled over runs and seats, that pass NS / WD; a
    cell is the mean over ``games`` ± s.e. across games, or, with one game, that game's share ±
    binomial s.e. NS/WD come from the ``ns``/``wd`` columns of a ``design_quality`` frame or are
    computed with :func:`coopeval.games.designs.design_checks`.
    """
    usable = designs.filter(pl.col("game").is_in(list(games)))
    if "status" in usable.columns:
        usable = usable.filter(pl.col("status").is_null() | (pl.col("status") == "ok"))
    precomputed = "ns" in usable.columns and "wd" in usable.columns  # a ``design_quality`` table
    passes: dict[tuple[str, str, str, str], list[bool]] = {}
    for row in usable.iter_rows(named=True):
        kind = MECHANISM_INFO[row["mechanism"]].design_kind if row["mechanism"] in MECHANISM_INFO else None
        if kind is None or row["design_kind"] != kind:
            continue
        if precomputed:
            checks = {"NS": bool(row["ns"]), "WD": bool(row["wd"])}
        else:
            checks = design_checks(game_of(row["game"]), kind, row["design"])
        for metric in ("NS", "WD"):
            passes.setdefault((row["mechanism"], metric, row["agent"], row["game"]), []).append(checks[metric])
    rows: list[dict[str, object]] = []
    mechanisms = _order(sorted({k[0] for k in passes}), MECHANISM_ORDER)
    agents = _order(sorted({k[2] for k in passes}), agent_order)
    for mech in mechanisms:
        for metric in ("NS", "WD"):
            rates: dict[str, dict[str, float]] = {}
            counts: dict[str, dict[str, int]] = {}
            for agent in agents:
                for game in games:
                    got = passes.get((mech, metric, agent, game))
                    if got:
                        rates.setdefault(agent, {})[game] = float(np.mean(got))
                        counts.setdefault(agent, {})[game] = len(got)
            if not rates:
                continue
            avg_games = [g for g in games if all(g in rates.get(a, {}) for a in rates)]
            llm = {g: float(np.mean([rates[a][g] for a in rates])) for g in avg_games}
            cells: dict[str, dict[str, object]] = {}
            for agent, by_game in [*rates.items(), (LLM_AVERAGE, llm)]:
                if not by_game:
                    continue
                xs = [by_game[g] for g in games if g in by_game]
                if len(xs) >= 2:
                    se = standard_error(xs)
                elif agent != LLM_AVERAGE:
                    (g,) = [g for g in games if g in by_game]
                    p, n = by_game[g], counts[agent][g]
                    se = math.sqrt(p * (1 - p) / n)  # per-game variant: binomial s.e. (spec §7 step 6)
                else:
                    se = None
                cells[agent] = {
                    "mechanism": mech,
                    "game": "All" if len(xs) != 1 else next(g for g in games if g in by_game),
                    "metric": metric,
                    "mean": 100.0 * float(np.mean(xs)),
                    "se": None if se is None else 100.0 * se,
                    "n": len(xs),
                }
            rows.extend(_ranked_rows(cells, metric, agents))
    return rows


_FRAME_SCHEMA = {
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
    "bold": pl.Boolean(),
    "grey": pl.Boolean(),
    "dr_source": pl.String(),
}


def _frame(rows: list[dict[str, object]], with_rank: bool) -> pl.DataFrame:
    """Rows as a frame of :data:`_FRAME_SCHEMA` (without ``ci_*``/``dr_source`` unless ``with_rank``)."""
    schema = dict(_FRAME_SCHEMA)
    if not with_rank:
        for key in ("ci_low", "ci_high", "dr_source"):
            schema.pop(key)
    clean = [{k: r.get(k) for k in schema} for r in rows]
    return pl.DataFrame(clean, schema=schema) if clean else pl.DataFrame(schema=schema)
