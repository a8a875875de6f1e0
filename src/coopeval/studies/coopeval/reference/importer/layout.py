"""The released data's folder layout: experiment-folder names and run discovery (docs/protocol/reference-data.md#layout).

A run folder holds experiment folders named ``{mechanism stem}_{game stem}`` (e.g.
``no_mechanism_prisoners_dilemma/``) or ``ablation_abl_{variant}_{game stem}``; a data folder is
one run folder or a folder of run folders (each run = one replicate).
"""

from __future__ import annotations

from pathlib import Path

from coopeval.games import TYPE_NAMES
from coopeval.games.base import Game
from coopeval.studies.coopeval.mechanisms.catalog import POPULATION_MECHANISMS, REFERENCE_STEMS
from coopeval.studies.coopeval.reference.importer.errors import ImportProblem, ReferenceImportError

__all__ = [
    "GAME_STEMS",
    "MAIN_STUDY_EXPERIMENTS",
    "MECHANISM_STEMS",
    "REPUTATION_MECHANISMS",
    "discover_runs",
    "experiment_dirs",
    "experiment_kind",
    "game_stem",
    "reference_enum_members",
]

MECHANISM_STEMS: dict[str, str] = dict(REFERENCE_STEMS)
"""Experiment-folder mechanism stem → mechanism type name (docs/protocol/reference-data.md#layout; declared in the catalog)."""

GAME_STEMS: dict[str, str] = {key: name for name, key in TYPE_NAMES.items()}
"""Experiment-folder game stem (the game's config key) → game type name (docs/protocol/reference-data.md#layout)."""

MAIN_STUDY_EXPERIMENTS = frozenset(f"{m}_{g}" for m in MECHANISM_STEMS for g in GAME_STEMS)
"""Experiment folders of one main-study run: every mechanism stem x every game stem (docs/protocol/reference-data.md#layout)."""

REPUTATION_MECHANISMS = POPULATION_MECHANISMS
"""Mechanism types whose ``matchup_payoffs.json`` and records use the per-agent reputation format."""

_ENUM_MEMBERS = {
    "PrisonersDilemma": ("COOPERATE", "DEFECT"),
    "PublicGoods": ("CONTRIBUTE", "FREE_RIDE"),
    "TrustGame": ("GIVE", "KEEP"),
    "StagHunt": ("STAG", "HARE"),
    "MatchingPennies": ("HEADS", "TAILS"),
}


def reference_enum_members(game: Game) -> tuple[str, ...]:
    """The reference implementation's action enum member names of ``game`` in token order,
    e.g. ``("COOPERATE", "DEFECT")``; Traveller's Dilemma claims are ``CLAIM_0`` … ``CLAIM_{n-1}``."""
    if game.name == "TravellersDilemma":
        return tuple(f"CLAIM_{i}" for i in range(len(game.actions)))
    return _ENUM_MEMBERS[game.name]


def experiment_kind(name: str) -> tuple[str | None, str] | None:
    """(mechanism type or None for ablations, game type) if ``name`` is an experiment folder."""
    for stem, game in GAME_STEMS.items():
        suffix = "_" + stem
        if not name.endswith(suffix):
            continue
        prefix = name[: -len(suffix)]
        if prefix in MECHANISM_STEMS:
            return MECHANISM_STEMS[prefix], game
        if prefix.startswith("ablation_abl_"):
            return None, game
    return None


def experiment_dirs(folder: Path) -> list[Path]:
    """Experiment folders directly inside ``folder``, sorted by path (others are ignored)."""
    return sorted(p for p in folder.iterdir() if p.is_dir() and experiment_kind(p.name) is not None)


def discover_runs(data_dir: str | Path) -> list[tuple[str, Path, list[Path]]]:
    """Find the run folders under ``data_dir``.

    ``data_dir`` is either one run folder (it holds experiment folders named
    ``{mechanism}_{game}`` or ``ablation_abl_{variant}_{game}``) or a folder of run folders.
    Other entries (``configs/``, ``batch_config.json`` …) are ignored.

    Returns
    -------
    list of (run name, run folder, experiment folders), sorted by run name.

    Raises
    ------
    ReferenceImportError
        If ``data_dir`` does not exist or holds no experiment folder at either level.
    """
    root = Path(data_dir)
    if not root.is_dir():
        what = "a file, not a folder" if root.exists() else "missing folder"
        raise ReferenceImportError([ImportProblem(root, f"{what}; expected a run folder or a folder of run folders")])
    direct = experiment_dirs(root)
    if direct:
        return [(root.resolve().name, root, direct)]
    runs = []
    for child in sorted(p for p in root.iterdir() if p.is_dir()):
        experiments = experiment_dirs(child)
        if experiments:
            runs.append((child.name, child, experiments))
    if not runs:
        raise ReferenceImportError(
            [
                ImportProblem(
                    root,
                    "no experiment folders found; expected folders named {mechanism}_{game} (e.g. "
                    "no_mechanism_prisoners_dilemma/) here or in its run sub-folders",
                )
            ]
        )
    return runs



def game_stem(game_type: str) -> str:
    """Experiment-folder game stem of a game type name (inverse of :data:`GAME_STEMS`).

    Raises
    ------
    StopIteration
        If ``game_type`` is not a value of :data:`GAME_STEMS`.
    """
    return next(stem for stem, name in GAME_STEMS.items() if name == game_type)
