"""The list of figures a config produces, with where each one goes in the Snakemake report.

Used by the workflow at parse time (rule outputs and ``report(...)`` flags) and by the
renderers, so file names are defined once. Import-light: no Altair, polars or duckdb.

Report placement (docs/protocol/engineering.md#figures): category = mechanism, subcategory = game. Figures that
span several mechanisms or games go to :data:`ALL_MECHANISMS` / :data:`ALL_GAMES`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from coopeval.games import get_game
from coopeval.studies.coopeval.mechanisms import catalog

__all__ = [
    "ALL_GAMES",
    "ALL_MECHANISMS",
    "GROUP_SIZE_GAME",
    "FigureEntry",
    "analysis_figures",
    "core_figures",
    "game_title",
    "group_sizes",
    "has_ablation",
    "table_pages",
]

ALL_MECHANISMS = "All mechanisms"
ALL_GAMES = "All games"


@dataclass(frozen=True)
class FigureEntry:
    """One figure or table page: file stem, report category and subcategory, and the caption
    file (under ``workflow/report/``). Table pages also name their source table, mechanism and
    game key (empty when the page spans all games)."""

    stem: str
    category: str
    subcategory: str
    caption: str
    table: str = ""
    mechanism: str = ""
    game: str = ""


def game_title(key: str) -> str:
    """Human-readable game name (e.g. ``Prisoner's Dilemma``) of a config key."""
    return get_game(key).title


GROUP_SIZE_GAME = "public_goods"
"""The game whose group size (``players``) a config may vary (the ``group_size`` figure)."""


def group_sizes(config: Mapping[str, Any]) -> list[int]:
    """The Public Goods player counts a validated config plays, sorted (empty when it does not
    play Public Goods); the figure is drawn when there are two or more."""
    if GROUP_SIZE_GAME not in config.get("games", []):
        return []
    base = dict(config.get("game_params", {}).get(GROUP_SIZE_GAME, {}))
    sizes = {get_game(GROUP_SIZE_GAME, **base).n_players}
    for variant in config.get("variants", []):
        own = variant.get("game_params", {}).get(GROUP_SIZE_GAME)
        if own:
            sizes.add(get_game(GROUP_SIZE_GAME, **{**base, **own}).n_players)
    return sorted(sizes)


def has_ablation(variants: Sequence[Mapping[str, Any]]) -> bool:
    """Whether some variant changes mechanism parameters (the ablation figure's panels); a
    variant that only sets ``game_params`` (a group size) is not an ablation."""
    return any(v.get("params") for v in variants)


def core_figures(
    mechanisms: Sequence[str], games: Sequence[str], ablation: bool, group_size: bool = False
) -> list[FigureEntry]:
    """The spine's figures (:mod:`coopeval.studies.coopeval.figures.render`), in ``figure_files()`` order;
    ``group_size``: Public Goods is played at two or more N
    (:func:`group_sizes`)."""
    entries = [FigureEntry("mean_fitness", ALL_MECHANISMS, ALL_GAMES, "mean_fitness.rst")]
    if ablation:
        entries.append(FigureEntry("ablation", ALL_MECHANISMS, ALL_GAMES, "ablation.rst"))
    if group_size:
        entries.append(FigureEntry("group_size", ALL_MECHANISMS, game_title("public_goods"), "group_size.rst"))
    for mechanism in mechanisms:
        for game in games:
            title = game_title(game)
            entries.append(
                FigureEntry(f"payoffs_{mechanism}_{game}", mechanism, title, "payoffs.rst")
            )
            entries.append(
                FigureEntry(f"replicator_{mechanism}_{game}", mechanism, title, "replicator.rst")
            )
    return entries


def analysis_figures(mechanisms: Sequence[str], games: Sequence[str]) -> list[FigureEntry]:
    """The analyses' figures (:mod:`coopeval.studies.coopeval.figures.render_analyses`)."""
    entries = [
        FigureEntry("actions_by_mechanism", ALL_MECHANISMS, ALL_GAMES, "actions_by_mechanism.rst"),
        FigureEntry(
            "justifications_by_mechanism", ALL_MECHANISMS, ALL_GAMES, "justifications_heatmap.rst"
        ),
        FigureEntry("justifications_radar", ALL_MECHANISMS, ALL_GAMES, "justifications_radar.rst"),
        FigureEntry(
            "justifications_by_model", ALL_MECHANISMS, ALL_GAMES, "justifications_by_model.rst"
        ),
        FigureEntry(
            "justifications_by_game", ALL_MECHANISMS, ALL_GAMES, "justifications_by_game.rst"
        ),
    ]
    for mechanism in mechanisms:
        entries.append(
            FigureEntry(
                f"actions_by_model_{mechanism}", mechanism, ALL_GAMES, "actions_by_model.rst"
            )
        )
        entries.append(
            FigureEntry(
                f"justifications_{mechanism}", mechanism, ALL_GAMES, "justifications_mechanism.rst"
            )
        )
        if mechanism in catalog.DESIGN_MECHANISMS:
            entries.append(
                FigureEntry(
                    f"design_quality_{mechanism}", mechanism, ALL_GAMES, "design_quality.rst"
                )
            )
        for game in games:
            if mechanism in catalog.CONDITIONAL_MECHANISMS:
                entries.append(
                    FigureEntry(
                        f"conditional_{mechanism}_{game}",
                        mechanism,
                        game_title(game),
                        "conditional.rst",
                    )
                )
            if mechanism in catalog.DESIGN_MECHANISMS:
                entries.append(
                    FigureEntry(
                        f"voting_{mechanism}_{game}", mechanism, game_title(game), "voting.rst"
                    )
                )
    return entries


def table_pages(
    tables: Sequence[str], mechanisms: Sequence[str], games: Sequence[str]
) -> list[FigureEntry]:
    """HTML pages of the paper tables (``results/tables/<table>.csv``) split for the report:
    ``per_game`` into one page per (mechanism, game), ``design_quality`` into one per design
    mechanism, any other table into one per mechanism. ``stem`` is ``<table>_<mechanism>[_<game>]``;
    ``caption`` is ``table_<table>.rst``."""
    entries = []
    for table in tables:
        for mechanism in mechanisms:
            if table == "design_quality" and mechanism not in catalog.DESIGN_MECHANISMS:
                continue
            if table == "per_game":
                for game in games:
                    entries.append(
                        FigureEntry(
                            f"{table}_{mechanism}_{game}",
                            mechanism,
                            game_title(game),
                            f"table_{table}.rst",
                            table,
                            mechanism,
                            game,
                        )
                    )
            else:
                entries.append(
                    FigureEntry(
                        f"{table}_{mechanism}",
                        mechanism,
                        ALL_GAMES,
                        f"table_{table}.rst",
                        table,
                        mechanism,
                    )
                )
    return entries
