"""Import adapter for the authors' released CoopEval data (``Xiao215/CoopEval`` layout).

Reads one run folder (experiment folders such as ``no_mechanism_prisoners_dilemma/``) or a folder
of run folders (each run = one replicate) into polars frames with the schemas of our own runs
(:mod:`coopeval.core.schemas`: ``matchups``, ``scores``, ``decisions``, ``designs``,
``votes``, ``selections``) plus the reference-only tables of :mod:`coopeval.studies.coopeval.reference.schemas`
(``released_metrics``, ``experiments``, ``import_flags``). Every row carries
``source = "reference"``, ``run`` = the run folder name and ``cell_id`` =
``"<run>/<experiment folder>"``.

Formats and every schema variant: spec §10 and ``data/README.md``. Variants accepted:

* ``records.jsonl`` or ``records.jsonl.gz`` (gzip), or no records at all (flagged; metrics still
  come from ``matchup_payoffs.json``);
* moves with or without ``"response"``; ``"mediated": true`` only on delegated moves;
* design files with or without ``"response"``;
* vote dicts keyed ``"1".."N"`` (also ``M1``/``C1``);
* Mediation/Contracting record lines as ``[{…}]`` or a bare ``{…}``.

Validation is strict and happens entirely in memory before anything is returned: a missing or
malformed file raises :class:`ReferenceImportError`, whose message names every offending file and
what was expected. Nothing is written by this module (see :mod:`coopeval.studies.coopeval.reference.store`).
"""

from __future__ import annotations

import gzip
import json
import math
import re
import zlib
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.evaluation.deviation import rank_with_ties
from coopeval.evaluation.metagame import reference_type_string
from coopeval.evaluation.scores import discounted_average
from coopeval.games import Game, get_game
from coopeval.games.definitions import public_goods, travellers_dilemma
from coopeval.studies.coopeval.reference.schemas import conform_any, empty_any

__all__ = [
    "GAME_STEMS",
    "MECHANISM_STEMS",
    "KNOWN_DR_RERUN_MISMATCHES",
    "IMPORTED_TABLES",
    "ImportProblem",
    "ReferenceImportError",
    "ReferenceData",
    "discover_runs",
    "import_reference",
    "import_experiment",
    "agent_type_string",
]

MECHANISM_STEMS: dict[str, str] = {
    "no_mechanism": "NoMechanism",
    "repetition": "Repetition",
    "reputation_first_order": "ReputationFirstOrder",
    "reputation": "Reputation",
    "mediation": "Mediation",
    "contracting": "Contracting",
}
"""Experiment-folder mechanism stem → mechanism type name (spec §10)."""

GAME_STEMS: dict[str, str] = {
    "prisoners_dilemma": "PrisonersDilemma",
    "public_goods": "PublicGoods",
    "travellers_dilemma": "TravellersDilemma",
    "trust_game": "TrustGame",
    "stag_hunt": "StagHunt",
    "matching_pennies": "MatchingPennies",
}
"""Experiment-folder game stem → game type name (spec §10)."""

MAIN_STUDY_EXPERIMENTS = frozenset(f"{m}_{g}" for m in MECHANISM_STEMS for g in GAME_STEMS)
"""Experiment folders of one main-study run: every mechanism stem x every game stem (spec §10)."""

REPUTATION_MECHANISMS = frozenset({"Reputation", "ReputationFirstOrder"})
MATCHUP_MECHANISMS = frozenset({"NoMechanism", "Repetition", "Mediation", "Contracting"})

KNOWN_DR_RERUN_MISMATCHES: frozenset[tuple[int, str]] = frozenset(
    {(1, "mediation_matching_pennies"), (1, "no_mechanism_stag_hunt"), (3, "contracting_prisoners_dilemma")}
)
"""(run number, experiment) whose released ``deviation_ratings.json`` the authors' own code does
not reproduce with gurobipy 13.0.3 (spec §6.4)."""

IMPORTED_TABLES = (
    "matchups",
    "scores",
    "decisions",
    "designs",
    "votes",
    "released_metrics",
    "selections",
    "experiments",
    "import_flags",
)
"""Tables returned by :func:`import_reference`, in write order."""

_SEATED = re.compile(r"^(?P<agent>.+)#P(?P<seat>[1-9][0-9]*)$")
_RUN_NUMBER = re.compile(r"run(\d+)")
_POINT_TOL = 1e-9


# ----------------------------------------------------------------------------------------------
# Errors


@dataclass(frozen=True)
class ImportProblem:
    """One validation failure: the file and what was expected there."""

    path: Path
    expected: str

    def __str__(self) -> str:
        return f"{self.path}: {self.expected}"


class ReferenceImportError(ValueError):
    """The reference data could not be imported; nothing was imported.

    ``problems`` lists every failing file (one per experiment at most) with what was expected.
    """

    def __init__(self, problems: Sequence[ImportProblem]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"reference import failed ({len(self.problems)} problem(s)); nothing imported:\n{lines}")


class _FileError(Exception):
    def __init__(self, path: Path, expected: str) -> None:
        super().__init__(f"{path}: {expected}")
        self.problem = ImportProblem(path, expected)


# ----------------------------------------------------------------------------------------------
# Result


@dataclass
class ReferenceData:
    """Imported frames, one per table of :data:`IMPORTED_TABLES`.

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
        return self.frames[table]


@dataclass
class _Rows:
    tables: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))

    def add(self, table: str, **row: Any) -> None:
        self.tables[table].append(row)


# ----------------------------------------------------------------------------------------------
# Discovery


def _experiment_kind(name: str) -> tuple[str | None, str] | None:
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


def _experiment_dirs(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and _experiment_kind(p.name) is not None)


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
        raise ReferenceImportError([ImportProblem(root, "missing folder; expected a run folder or a folder of run folders")])
    direct = _experiment_dirs(root)
    if direct:
        return [(root.resolve().name, root, direct)]
    runs = []
    for child in sorted(p for p in root.iterdir() if p.is_dir()):
        experiments = _experiment_dirs(child)
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


# ----------------------------------------------------------------------------------------------
# Small readers and validators


def _read_json(path: Path, expected: str) -> Any:
    if not path.is_file():
        raise _FileError(path, f"missing file; expected {expected}")
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise _FileError(path, f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); expected {expected}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise _FileError(path, f"unreadable ({exc}); expected {expected}") from None


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _number(value: Any, path: Path, where: str) -> float:
    if not _is_number(value):
        raise _FileError(path, f"{where} is {value!r}; expected a finite number")
    return float(value)


def agent_type_string(config: Any) -> str:
    """Type string ``"{llm.model}({CoT|IO})"`` of a reference agent config (spec §1).

    Delegates to :func:`coopeval.evaluation.metagame.reference_type_string`.

    Raises
    ------
    ValueError
        If ``llm.model`` is missing or ``type`` is not ``CoTAgent``/``IOAgent``.
    """
    if not isinstance(config, Mapping):
        raise ValueError(f"agent config {config!r} is not an object")
    return reference_type_string(config)


def _seated(name: Any, roster: Sequence[str], n_players: int, path: Path, where: str) -> tuple[str, int]:
    match = _SEATED.match(name) if isinstance(name, str) else None
    if match is None:
        raise _FileError(path, f"{where} is {name!r}; expected a seated agent name '<type>#P<seat>'")
    agent, seat = match["agent"], int(match["seat"])
    if agent not in roster:
        raise _FileError(path, f"{where} names agent {agent!r}, which is not in config.json's agents")
    if not 1 <= seat <= n_players:
        raise _FileError(path, f"{where} names seat {seat}; expected 1..{n_players}")
    return agent, seat


def _action(game: Game, value: Any, path: Path, where: str) -> int:
    enum_class = f"{game.name}Action"
    if isinstance(value, str) and "." in value:
        cls, member = value.split(".", 1)
        if cls == enum_class and member in game.enum_members:
            return game.enum_members.index(member)
    members = ", ".join(f"{enum_class}.{m}" for m in game.enum_members)
    raise _FileError(path, f"{where} is {value!r}; expected one of {members}")


def _token(index: int) -> str:
    return f"A{index}"


# ----------------------------------------------------------------------------------------------
# Game and config


def _game_from_config(game_type: str, kwargs: Any, path: Path) -> Game:
    """Build the game of config.json and check its payoffs against our definition."""
    if not isinstance(kwargs, Mapping):
        raise _FileError(path, "game.kwargs is not an object")
    try:
        if game_type == "PublicGoods":
            unknown = set(kwargs) - {"num_players", "multiplier", "endowment"}
            if unknown:
                raise _FileError(path, f"game.kwargs has unknown keys {sorted(unknown)}; expected num_players, multiplier")
            if kwargs.get("num_players", 3) != 3:
                raise _FileError(path, f"game.kwargs.num_players is {kwargs['num_players']!r}; only 3 is supported")
            return public_goods(
                multiplier=_number(kwargs.get("multiplier", 1.5), path, "game.kwargs.multiplier"),
                endowment=_number(kwargs.get("endowment", 1.0), path, "game.kwargs.endowment"),
            )
        if game_type == "TravellersDilemma":
            known = {"min_claim": "min_claim", "num_actions": "n_claims", "claim_spacing": "spacing", "bonus": "bonus"}
            unknown = set(kwargs) - set(known)
            if unknown:
                raise _FileError(path, f"game.kwargs has unknown keys {sorted(unknown)}; expected {sorted(known)}")
            params: dict[str, Any] = {}
            for key, name in known.items():
                if key in kwargs:
                    value = _number(kwargs[key], path, f"game.kwargs.{key}")
                    params[name] = int(value) if float(value).is_integer() else value
            return travellers_dilemma(**params)
        game = get_game(game_type)
    except KeyError:
        raise _FileError(path, f"game.type {game_type!r} is unknown; expected one of {sorted(GAME_STEMS.values())}") from None
    matrix = kwargs.get("payoff_matrix")
    unknown = set(kwargs) - {"payoff_matrix"}
    if unknown:
        raise _FileError(path, f"game.kwargs has unknown keys {sorted(unknown)}; expected payoff_matrix")
    if matrix is not None:
        letters = {m[0]: i for i, m in enumerate(game.enum_members)}
        expected_keys = {a + b for a in letters for b in letters}
        if not isinstance(matrix, Mapping) or set(matrix) != expected_keys:
            raise _FileError(path, f"game.kwargs.payoff_matrix must have exactly the keys {sorted(expected_keys)}")
        for key, payoffs in matrix.items():
            profile = (letters[key[0]], letters[key[1]])
            if (
                not isinstance(payoffs, list)
                or len(payoffs) != 2
                or not all(_is_number(v) for v in payoffs)
                or any(abs(float(v) - w) > _POINT_TOL for v, w in zip(payoffs, game.payoffs(profile), strict=True))
            ):
                raise _FileError(
                    path,
                    f"game.kwargs.payoff_matrix[{key!r}] is {payoffs!r}; expected {list(game.payoffs(profile))} "
                    f"(the {game.name} of spec §2)",
                )
    return game


@dataclass(frozen=True)
class _Config:
    mechanism: str
    mechanism_type: str
    game: Game
    roster: tuple[str, ...]
    n_rounds: int
    discount: float | None
    methods: frozenset[str]
    mechanism_kwargs: dict[str, Any]
    game_kwargs: dict[str, Any]


def _read_config(folder: Path) -> _Config:
    path = folder / "config.json"
    config = _read_json(path, "the experiment config {game, mechanism, agents, evaluation, …}")
    if not isinstance(config, Mapping):
        raise _FileError(path, "expected a JSON object {game, mechanism, agents, evaluation, …}")
    for key in ("game", "mechanism", "agents"):
        if key not in config:
            raise _FileError(path, f"missing key {key!r}; expected {{game, mechanism, agents, evaluation, …}}")
    game_cfg, mech_cfg = config["game"], config["mechanism"]
    if not isinstance(game_cfg, Mapping) or not isinstance(game_cfg.get("type"), str):
        raise _FileError(path, "game must be an object {type, kwargs}")
    if not isinstance(mech_cfg, Mapping) or not isinstance(mech_cfg.get("type"), str):
        raise _FileError(path, "mechanism must be an object {type, kwargs}")
    mech_type = mech_cfg["type"]
    if mech_type not in MECHANISM_STEMS.values():
        raise _FileError(path, f"mechanism.type {mech_type!r} is unknown; expected one of {sorted(MECHANISM_STEMS.values())}")
    kind = _experiment_kind(folder.name)
    assert kind is not None
    folder_mech, folder_game = kind
    if game_cfg["type"] != folder_game:
        raise _FileError(path, f"game.type {game_cfg['type']!r} does not match the folder name (expected {folder_game!r})")
    if folder_mech is not None and mech_type != folder_mech:
        raise _FileError(path, f"mechanism.type {mech_type!r} does not match the folder name (expected {folder_mech!r})")
    game = _game_from_config(game_cfg["type"], game_cfg.get("kwargs", {}), path)
    agents = config["agents"]
    if not isinstance(agents, list) or len(agents) < 2:
        raise _FileError(path, "agents must be a list of at least 2 agent configs {llm {model, …}, type}")
    roster = []
    for i, agent in enumerate(agents):
        try:
            roster.append(agent_type_string(agent))
        except ValueError as exc:
            raise _FileError(path, f"agents[{i}]: {exc}") from None
    if len(set(roster)) != len(roster):
        raise _FileError(path, f"agents has duplicate type strings {roster}")
    mech_kwargs = mech_cfg.get("kwargs", {})
    if not isinstance(mech_kwargs, Mapping):
        raise _FileError(path, "mechanism.kwargs must be an object")
    n_rounds = 1
    discount = None
    if mech_type in ("Repetition", "Reputation", "ReputationFirstOrder"):
        rounds = mech_kwargs.get("num_rounds")
        if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
            raise _FileError(path, f"mechanism.kwargs.num_rounds is {rounds!r}; expected a positive integer")
        n_rounds = rounds
        if "discount" in mech_kwargs:
            discount = _number(mech_kwargs["discount"], path, "mechanism.kwargs.discount")
    methods: set[str] = set()
    evaluation = config.get("evaluation", {})
    if isinstance(evaluation, Mapping):
        for method in evaluation.get("methods", []) or []:
            if isinstance(method, Mapping) and isinstance(method.get("type"), str):
                methods.add(method["type"])
    mechanism = mech_type
    if folder_mech is None:  # ablation folder: keep variants apart in the tables
        variant = folder.name[len("ablation_abl_") : -len("_" + _game_stem(game.name))]
        mechanism = f"{mech_type}[{variant}]"
    return _Config(
        mechanism=mechanism,
        mechanism_type=mech_type,
        game=game,
        roster=tuple(roster),
        n_rounds=n_rounds,
        discount=discount,
        methods=frozenset(methods),
        mechanism_kwargs=dict(mech_kwargs),
        game_kwargs=dict(game_cfg.get("kwargs", {}) or {}),
    )


def _game_stem(game_type: str) -> str:
    return next(stem for stem, name in GAME_STEMS.items() if name == game_type)


# ----------------------------------------------------------------------------------------------
# Matchup payoffs


@dataclass
class _Match:
    matchup_id: str
    seated: tuple[str, ...]  # seated names in seat order
    agents: tuple[str, ...]
    payoffs: list[list[float]]  # rounds × seats


def _read_matchup_payoffs(folder: Path, cfg: _Config) -> tuple[float, list[_Match]]:
    path = folder / "matchup_payoffs.json"
    n = cfg.game.n_players
    reputation = cfg.mechanism_type in REPUTATION_MECHANISMS
    shape = (
        '{"discount": δ, "profile": [{"player": agent config + player_id, "points": [per-round points]}, …]}'
        if reputation
        else '{"discount": δ, "profile": [{"players": [agent config + player_id, … in seat order], "payoffs": [rounds × seats], …]}, …]}'
    )
    data = _read_json(path, shape)
    if not isinstance(data, Mapping) or "discount" not in data or not isinstance(data.get("profile"), list):
        raise _FileError(path, f"expected {shape}")
    discount = _number(data["discount"], path, "discount")
    if not 0.0 <= discount <= 1.0:
        raise _FileError(path, f"discount is {discount}; expected a value in [0, 1]")
    if cfg.discount is not None and abs(discount - cfg.discount) > 1e-12:
        raise _FileError(path, f"discount is {discount}; expected {cfg.discount} as in config.json mechanism.kwargs")
    if not data["profile"]:
        raise _FileError(path, "profile is empty; expected at least one entry")
    matches: list[_Match] = []
    seen: set[tuple[str, ...]] = set()
    for index, entry in enumerate(data["profile"]):
        where = f"profile[{index}]"
        if not isinstance(entry, Mapping):
            raise _FileError(path, f"{where} is not an object; expected {shape}")
        if reputation:
            if "player" not in entry or "points" not in entry:
                raise _FileError(path, f"{where} lacks 'player'/'points'; expected the reputation per-agent format {shape}")
            players = [entry["player"]]
        else:
            if "players" not in entry or "payoffs" not in entry:
                raise _FileError(path, f"{where} lacks 'players'/'payoffs'; expected the matchup format {shape}")
            players = entry["players"]
            if not isinstance(players, list) or len(players) != n:
                raise _FileError(path, f"{where}.players must list {n} agent configs in seat order")
        seated = []
        agents = []
        for seat0, player in enumerate(players):
            try:
                agent = agent_type_string(player)
            except ValueError as exc:
                raise _FileError(path, f"{where}: {exc}") from None
            if agent not in cfg.roster:
                raise _FileError(path, f"{where} names agent {agent!r}, which is not in config.json's agents")
            pid = player.get("player_id")
            if reputation:
                if not isinstance(pid, int) or isinstance(pid, bool) or not 1 <= pid <= n:
                    raise _FileError(path, f"{where}.player.player_id is {pid!r}; expected 1..{n}")
            elif pid != seat0 + 1:
                raise _FileError(path, f"{where}.players[{seat0}].player_id is {pid!r}; expected {seat0 + 1} (seat order)")
            seated.append(f"{agent}#P{pid}")
            agents.append(agent)
        key = tuple(seated)
        if key in seen:
            raise _FileError(path, f"{where} repeats the seated agents {list(key)}; expected each once")
        seen.add(key)
        if reputation:
            points = entry["points"]
            if not isinstance(points, list) or len(points) != cfg.n_rounds:
                raise _FileError(path, f"{where}.points must list {cfg.n_rounds} per-round points")
            rounds = [[_number(v, path, f"{where}.points[{t}]")] for t, v in enumerate(points)]
            matches.append(_Match(seated[0], key, tuple(agents), rounds))
            continue
        raw = entry["payoffs"]
        if not isinstance(raw, list) or not raw:
            raise _FileError(path, f"{where}.payoffs must be a non-empty list of matches (rounds × {n} arrays)")
        for j, match in enumerate(raw):
            mwhere = f"{where}.payoffs[{j}]"
            if not isinstance(match, list) or len(match) != cfg.n_rounds:
                raise _FileError(path, f"{mwhere} must have {cfg.n_rounds} round(s) of {n} payoffs")
            rounds = []
            for t, row in enumerate(match):
                if not isinstance(row, list) or len(row) != n:
                    raise _FileError(path, f"{mwhere}[{t}] must list {n} seat payoffs")
                rounds.append([_number(v, path, f"{mwhere}[{t}][{s}]") for s, v in enumerate(row)])
            matchup_id = f"m{index:03d}" if len(raw) == 1 else f"m{index:03d}.{j}"
            matches.append(_Match(matchup_id, key, tuple(agents), rounds))
    if reputation:
        expected = {f"{a}#P{s}" for a in cfg.roster for s in range(1, n + 1)}
        got = {m.seated[0] for m in matches}
        if got != expected:
            missing = sorted(expected - got)
            raise _FileError(path, f"expected one entry per type and seat ({len(expected)}); missing {missing}")
    return discount, matches


# ----------------------------------------------------------------------------------------------
# Summary files


def _read_summaries(folder: Path, cfg: _Config, cell: dict[str, Any], rows: _Rows, flags: list[tuple[str, str]]) -> None:
    roster = set(cfg.roster)
    path = folder / "agent_average_payoff.json"
    means = _read_json(path, "{agent type: Mean} for every agent of config.json")
    _check_keys(means, roster, path, "{agent type: Mean}")
    for agent in cfg.roster:
        rows.add("released_metrics", **cell, agent=agent, metric="Mean", value=_number(means[agent], path, f"[{agent!r}]"), rule="released")
    metagame = cfg.mechanism_type not in REPUTATION_MECHANISMS
    if metagame and "evolutionary_dynamics" in cfg.methods:
        path = folder / "replicator_dynamics_fitness.json"
        shape = '{agent type: {"fitness": f, "final_population": x}}'
        rd = _read_json(path, shape + " for every agent of config.json")
        _check_keys(rd, roster, path, shape)
        total = 0.0
        for agent in cfg.roster:
            entry = rd[agent]
            if not isinstance(entry, Mapping) or "fitness" not in entry or "final_population" not in entry:
                raise _FileError(path, f"[{agent!r}] must be {{'fitness': f, 'final_population': x}}")
            fit = _number(entry["fitness"], path, f"[{agent!r}].fitness")
            pop = _number(entry["final_population"], path, f"[{agent!r}].final_population")
            if not -1e-12 <= pop <= 1 + 1e-12:
                raise _FileError(path, f"[{agent!r}].final_population is {pop}; expected a share in [0, 1]")
            total += pop
            rows.add("released_metrics", **cell, agent=agent, metric="Fitness", value=fit, rule="released")
            rows.add("released_metrics", **cell, agent=agent, metric="FinalPopulation", value=pop, rule="released")
        if abs(total - 1.0) > 1e-6:
            raise _FileError(path, f"final_population shares sum to {total}; expected 1")
    if metagame and "deviation_rating" in cfg.methods:
        path = folder / "deviation_ratings.json"
        ratings = _read_json(path, "{agent type: rating ≤ 0} for every agent of config.json")
        _check_keys(ratings, roster, path, "{agent type: rating}")
        values = []
        for agent in cfg.roster:
            r = _number(ratings[agent], path, f"[{agent!r}]")
            if r > 1e-9:
                raise _FileError(path, f"[{agent!r}] is {r}; expected a rating ≤ 0")
            values.append(r)
        ranks = rank_with_ties(values)
        for agent, r, rank in zip(cfg.roster, values, ranks, strict=True):
            rows.add("released_metrics", **cell, agent=agent, metric="DR", value=r, rule="released")
            rows.add("released_metrics", **cell, agent=agent, metric="DR_rank", value=rank, rule="released")
        run_match = _RUN_NUMBER.search(cell["run"])
        if run_match and (int(run_match.group(1)), folder.name) in KNOWN_DR_RERUN_MISMATCHES:
            flags.append(
                (
                    "dr_release_not_reproducible",
                    "the released deviation_ratings.json is not reproduced even by the authors' code "
                    "with gurobipy 13.0.3 (spec §6.4)",
                )
            )


def _check_keys(data: Any, roster: set[str], path: Path, shape: str) -> None:
    if not isinstance(data, Mapping):
        raise _FileError(path, f"expected a JSON object {shape}")
    if set(data) != roster:
        missing, extra = sorted(roster - set(data)), sorted(set(data) - roster)
        raise _FileError(path, f"keys must be exactly config.json's agent types; missing {missing}, unexpected {extra}")


# ----------------------------------------------------------------------------------------------
# Designs


def _read_designs(
    folder: Path, cfg: _Config, cell: dict[str, Any], rows: _Rows
) -> dict[str, dict[str, Any]]:
    """Mediator or contract designs keyed by seated name (token form); also emits rows."""
    game, n = cfg.game, cfg.game.n_players
    expected_names = {f"{a}#P{s}" for a in cfg.roster for s in range(1, n + 1)}
    if cfg.mechanism_type == "Mediation":
        path = folder / "mediator_design.json"
        shape = '{"<type>#P<seat>": {"mediator": [[1, "<Enum>.<MEMBER>"], …, [N, …]], "trace_id", ["response"]}}'
        kind = "mediator"
    else:
        path = folder / "contract_design.json"
        shape = '{"<type>#P<seat>": {"contract": {"<Enum>.<MEMBER>": int, …}, "trace_id", ["response"]}}'
        kind = "contract"
    data = _read_json(path, shape)
    if not isinstance(data, Mapping):
        raise _FileError(path, f"expected a JSON object {shape}")
    if set(data) != expected_names:
        missing, extra = sorted(expected_names - set(data)), sorted(set(data) - expected_names)
        raise _FileError(path, f"expected one design per seated agent; missing {missing}, unexpected {extra}")
    designs: dict[str, dict[str, Any]] = {}
    for name in sorted(data):
        agent, seat = _seated(name, cfg.roster, n, path, f"key {name!r}")
        entry = data[name]
        if not isinstance(entry, Mapping) or kind not in entry:
            raise _FileError(path, f"[{name!r}] lacks {kind!r}; expected {shape}")
        response = entry.get("response")
        if response is not None and not isinstance(response, str):
            raise _FileError(path, f"[{name!r}].response must be a string")
        design: dict[str, Any]
        if kind == "mediator":
            pairs = entry["mediator"]
            if not isinstance(pairs, list):
                raise _FileError(path, f"[{name!r}].mediator must be a list of [k, action] pairs")
            design = {}
            for pair in pairs:
                if (
                    not isinstance(pair, list)
                    or len(pair) != 2
                    or not isinstance(pair[0], int)
                    or isinstance(pair[0], bool)
                ):
                    raise _FileError(path, f"[{name!r}].mediator entry {pair!r}; expected [k, '<Enum>.<MEMBER>']")
                design[str(pair[0])] = _token(_action(game, pair[1], path, f"[{name!r}].mediator[{pair[0]}]"))
            if set(design) != {str(d) for d in range(1, n + 1)} or len(pairs) != n:
                raise _FileError(path, f"[{name!r}].mediator must map each k = 1..{n} exactly once")
            design = {str(d): design[str(d)] for d in range(1, n + 1)}
            decision_kind = "mediator_design"
        else:
            contract = entry["contract"]
            if not isinstance(contract, Mapping):
                raise _FileError(path, f"[{name!r}].contract must be an object {{'<Enum>.<MEMBER>': int}}")
            values: dict[int, Any] = {}
            for key, value in contract.items():
                values[_action(game, key, path, f"[{name!r}].contract key")] = value
                if not _is_number(value):
                    raise _FileError(path, f"[{name!r}].contract[{key!r}] is {value!r}; expected an integer")
            if set(values) != set(range(game.n_actions)):
                raise _FileError(path, f"[{name!r}].contract must give one value per action of {game.name}")
            design = {_token(i): values[i] for i in range(game.n_actions)}
            decision_kind = "contract_design"
        designs[name] = design
        encoded = json.dumps(design, sort_keys=False)
        rows.add("designs", **cell, designer=name, agent=agent, seat=seat, design_kind=kind, design=encoded, status="ok")
        rows.add(
            "decisions",
            **cell,
            decision_id=f"{cell['cell_id']}/design/{name}",
            matchup_id=None,
            round=0,
            seat=seat,
            agent=agent,
            kind=decision_kind,
            status="ok",
            parsed=encoded,
            response=response,
        )
    return designs


# ----------------------------------------------------------------------------------------------
# Records


def _records_path(folder: Path) -> tuple[Path | None, list[Path]]:
    plain, gz = folder / "records.jsonl", folder / "records.jsonl.gz"
    present = [p for p in (plain, gz) if p.is_file()]
    return (present[0] if len(present) == 1 else None), present


def _iter_records(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        handle = gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")
        with handle:
            for lineno, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    yield lineno, json.loads(line)
                except json.JSONDecodeError as exc:
                    raise _FileError(path, f"line {lineno}: invalid JSON ({exc.msg}); expected one JSON value per line") from None
    except (OSError, EOFError, UnicodeDecodeError, zlib.error) as exc:
        raise _FileError(path, f"unreadable ({exc}); expected {'gzip-compressed ' if path.suffix == '.gz' else ''}JSON lines") from None


@dataclass
class _Move:
    agent: str
    seat: int
    action: int
    points: float
    response: str | None
    mediated: bool


def _move(obj: Any, cfg: _Config, path: Path, where: str) -> _Move:
    if not isinstance(obj, Mapping) or not {"player", "action", "points"} <= set(obj):
        raise _FileError(path, f"{where} is not a move; expected {{'player', 'action', 'points', 'trace_id', ['response'], ['mediated']}}")
    agent, seat = _seated(obj["player"], cfg.roster, cfg.game.n_players, path, f"{where}.player")
    action = _action(cfg.game, obj["action"], path, f"{where}.action")
    points = _number(obj["points"], path, f"{where}.points")
    response = obj.get("response")
    if response is not None and not isinstance(response, str):
        raise _FileError(path, f"{where}.response must be a string")
    mediated = obj.get("mediated", False)
    if not isinstance(mediated, bool):
        raise _FileError(path, f"{where}.mediated is {mediated!r}; expected true/false")
    return _Move(agent, seat, action, points, response, mediated)


def _moves_in_seat_order(moves: Any, cfg: _Config, path: Path, where: str) -> list[_Move]:
    n = cfg.game.n_players
    if not isinstance(moves, list) or len(moves) != n:
        raise _FileError(path, f"{where} must be a list of {n} moves (one per seat)")
    parsed = [_move(m, cfg, path, f"{where}[{i}]") for i, m in enumerate(moves)]
    if [m.seat for m in parsed] != list(range(1, n + 1)):
        raise _FileError(path, f"{where}: seats {[m.seat for m in parsed]}; expected 1..{n} in order")
    return parsed


def _decision_rows(
    rows: _Rows,
    cell: dict[str, Any],
    cfg: _Config,
    matchup_id: str,
    key: str,
    round_index: int,
    moves: list[_Move],
) -> None:
    profile = tuple(m.action for m in moves)
    base = cfg.game.payoffs(profile)
    for m in moves:
        rows.add(
            "decisions",
            **cell,
            decision_id=f"{cell['cell_id']}/{key}/r{round_index:02d}/P{m.seat}",
            matchup_id=matchup_id,
            round=round_index,
            seat=m.seat,
            agent=m.agent,
            kind="action",
            status="ok",
            action=m.action,
            action_token=_token(m.action),
            points=m.points,
            base_points=float(base[m.seat - 1]),
            mediated=m.mediated,
            response=m.response,
        )


def _read_records(
    folder: Path,
    cfg: _Config,
    cell: dict[str, Any],
    matches: list[_Match],
    designs: dict[str, dict[str, Any]],
    rows: _Rows,
    flags: list[tuple[str, str]],
) -> str | None:
    path, present = _records_path(folder)
    if len(present) > 1:
        raise _FileError(present[0], "both records.jsonl and records.jsonl.gz exist; expected exactly one")
    if path is None:
        flags.append(("records_missing", "no records.jsonl(.gz); decisions, votes and selections are not imported"))
        return None
    if cfg.mechanism_type in REPUTATION_MECHANISMS:
        _read_reputation_records(path, cfg, cell, matches, rows)
        return path.name
    by_key: dict[tuple[str, ...], list[_Match]] = defaultdict(list)
    for match in matches:
        by_key[match.seated].append(match)
    used: dict[tuple[str, ...], int] = defaultdict(int)
    n_lines = 0
    inconsistent: list[str] = []
    for lineno, value in _iter_records(path):
        n_lines += 1
        where = f"line {lineno}"
        extra: Mapping[str, Any] | None = None
        if cfg.mechanism_type == "NoMechanism":
            rounds = [value]
        elif cfg.mechanism_type == "Repetition":
            if not isinstance(value, list) or len(value) != cfg.n_rounds:
                raise _FileError(path, f"{where} must be a list of {cfg.n_rounds} rounds of moves")
            rounds = value
        else:
            extra = value[0] if isinstance(value, list) and len(value) == 1 else value
            if not isinstance(extra, Mapping) or "moves" not in extra or "votes" not in extra:
                raise _FileError(path, f"{where} must be [{{'votes', 'selected_…_index', …, 'moves'}}]")
            rounds = [extra["moves"]]
        parsed_rounds = [_moves_in_seat_order(r, cfg, path, f"{where} round {t + 1}") for t, r in enumerate(rounds)]
        seated = tuple(f"{m.agent}#P{m.seat}" for m in parsed_rounds[0])
        for t, moves in enumerate(parsed_rounds[1:], start=2):
            if tuple(f"{m.agent}#P{m.seat}" for m in moves) != seated:
                raise _FileError(path, f"{where} round {t}: players change within a matchup")
        candidates = by_key.get(seated, [])
        if used[seated] >= len(candidates):
            raise _FileError(
                path,
                f"{where}: matchup {list(seated)} has no (further) match in matchup_payoffs.json; "
                "expected records and matchup_payoffs.json to describe the same matches",
            )
        match = candidates[used[seated]]
        used[seated] += 1
        for t, moves in enumerate(parsed_rounds):
            for m in moves:
                if abs(m.points - match.payoffs[t][m.seat - 1]) > _POINT_TOL:
                    raise _FileError(
                        path,
                        f"{where} round {t + 1} seat {m.seat}: points {m.points} differ from "
                        f"matchup_payoffs.json ({match.payoffs[t][m.seat - 1]}); expected the same match",
                    )
            _decision_rows(rows, cell, cfg, match.matchup_id, match.matchup_id, t + 1, moves)
        if extra is not None:
            _mechanism_record(path, where, extra, cfg, cell, match, parsed_rounds[0], designs, rows, inconsistent)
        elif any(abs(m.points - cfg.game.payoffs(tuple(x.action for x in moves))[m.seat - 1]) > _POINT_TOL
                 for moves in parsed_rounds for m in moves):
            inconsistent.append(f"{where}: points differ from the base payoffs of the actions")
    if n_lines != len(matches):
        raise _FileError(
            path,
            f"{n_lines} matchup line(s) but matchup_payoffs.json has {len(matches)} match(es); expected one line per match",
        )
    if inconsistent:
        flags.append(("records_inconsistent", f"{len(inconsistent)} line(s), first: {inconsistent[0]}"))
    return path.name


def _mechanism_record(
    path: Path,
    where: str,
    record: Mapping[str, Any],
    cfg: _Config,
    cell: dict[str, Any],
    match: _Match,
    moves: list[_Move],
    designs: dict[str, dict[str, Any]],
    rows: _Rows,
    inconsistent: list[str],
) -> None:
    game, n = cfg.game, cfg.game.n_players
    mediation = cfg.mechanism_type == "Mediation"
    label = "mediator" if mediation else "contract"
    prefix = "M" if mediation else "C"
    votes = record["votes"]
    if not isinstance(votes, list) or len(votes) != n:
        raise _FileError(path, f"{where}.votes must list {n} voter entries")
    voters = set()
    counts = [0] * n  # approvals per option (design index in seat order)
    for i, vote in enumerate(votes):
        vwhere = f"{where}.votes[{i}]"
        if not isinstance(vote, Mapping) or "voter_name" not in vote or not isinstance(vote.get("votes"), Mapping):
            raise _FileError(path, f"{vwhere} must be {{'voter_name', 'votes': {{'1': bool, …}}, 'trace_id'}}")
        agent, seat = _seated(vote["voter_name"], cfg.roster, n, path, f"{vwhere}.voter_name")
        if vote["voter_name"] != match.seated[seat - 1]:
            raise _FileError(path, f"{vwhere}.voter_name {vote['voter_name']!r} is not a player of this matchup")
        voters.add(seat)
        approvals: dict[int, bool] = {}
        for key, value in vote["votes"].items():
            digits = key[1:] if isinstance(key, str) and key[:1] in ("M", "C") else key
            if not isinstance(digits, str) or not digits.isdigit() or not 1 <= int(digits) <= n or not isinstance(value, bool):
                raise _FileError(path, f"{vwhere}.votes has {key!r}: {value!r}; expected keys '1'..'{n}' with true/false")
            approvals[int(digits)] = value
        if set(approvals) != set(range(1, n + 1)):
            raise _FileError(path, f"{vwhere}.votes must have exactly the keys '1'..'{n}'")
        for option in range(1, n + 1):
            counts[option - 1] += approvals[option]
            rows.add("votes", **cell, matchup_id=match.matchup_id, voter_seat=seat, agent=agent, option=option, approve=approvals[option])
        rows.add(
            "decisions",
            **cell,
            decision_id=f"{cell['cell_id']}/{match.matchup_id}/vote/P{seat}",
            matchup_id=match.matchup_id,
            round=0,
            seat=seat,
            agent=agent,
            kind=f"{label}_vote",
            status="ok",
            parsed=json.dumps({f"{prefix}{k}": approvals[k] for k in range(1, n + 1)}),
        )
    if voters != set(range(1, n + 1)):
        raise _FileError(path, f"{where}.votes must have one voter per seat 1..{n}")
    index_key, name_key = f"selected_{label}_index", f"selected_{label}_designer_name"
    index = record.get(index_key)
    if not isinstance(index, int) or isinstance(index, bool) or not 1 <= index <= n:
        raise _FileError(path, f"{where}.{index_key} is {index!r}; expected 1..{n}")
    designer = record.get(name_key)
    if designer != match.seated[index - 1]:
        raise _FileError(path, f"{where}.{name_key} is {designer!r}; expected {match.seated[index - 1]!r} (seat {index})")
    all_signed: bool | None = None
    agrees: list[bool] = []
    if not mediation:
        signatures = record.get("signatures")
        if not isinstance(signatures, Mapping) or set(signatures) != set(match.seated):
            raise _FileError(path, f"{where}.signatures must map each player of the matchup to {{'agree': bool, 'trace_id'}}")
        for name in match.seated:
            sig = signatures[name]
            if not isinstance(sig, Mapping) or not isinstance(sig.get("agree"), bool):
                raise _FileError(path, f"{where}.signatures[{name!r}] must be {{'agree': true/false, 'trace_id'}}")
            agent, seat = _seated(name, cfg.roster, n, path, f"{where}.signatures key")
            agrees.append(sig["agree"])
            rows.add(
                "decisions",
                **cell,
                decision_id=f"{cell['cell_id']}/{match.matchup_id}/sign/P{seat}",
                matchup_id=match.matchup_id,
                round=0,
                seat=seat,
                agent=agent,
                kind="sign",
                status="ok",
                parsed=json.dumps({"sign": sig["agree"]}),
            )
        all_signed = record.get("all_signed")
        if not isinstance(all_signed, bool) or all_signed != all(agrees):
            raise _FileError(path, f"{where}.all_signed is {all_signed!r}; expected {all(agrees)} (every signature agrees)")
    # Same payload as our own runs' selections (approvals per option, tied options, signatures).
    tied = [k + 1 for k, c in enumerate(counts) if c == max(counts)]
    details: dict[str, Any] = {"approvals": counts, "tied_options": tied}
    if not mediation:
        details.update(signatures=agrees, all_signed=all_signed, active=all_signed,
                       rejecting_seats=[s + 1 for s, ok in enumerate(agrees) if not ok])
    design = designs.get(designer)
    rows.add(
        "selections",
        **cell,
        matchup_id=match.matchup_id,
        design_kind=label,
        selected_index=index,
        selected_designer=designer,
        all_signed=all_signed,
        design=None if design is None else json.dumps(design),
        details=json.dumps(details),
    )
    # Consistency of the recorded outcome with the vote and the selected design (flagged, not fatal).
    if index not in tied:
        inconsistent.append(f"{where}: selected design {index} is not among the most approved {tied}")
    profile = tuple(m.action for m in moves)
    base = game.payoffs(profile)
    if mediation:
        d = sum(m.mediated for m in moves)
        if design is not None and d and any(m.mediated and _token(m.action) != design[str(d)] for m in moves):
            inconsistent.append(f"{where}: delegated moves do not play the selected mediator's action for d = {d}")
        expected = list(base)
    elif all_signed and design is not None:
        c = [float(design[_token(i)]) for i in range(game.n_actions)]
        total = sum(c[a] for a in profile)
        expected = [base[i] + c[profile[i]] - (total - c[profile[i]]) / (n - 1) for i in range(n)]
    else:
        expected = list(base)
    if any(abs(m.points - expected[m.seat - 1]) > _POINT_TOL for m in moves):
        inconsistent.append(f"{where}: points {[m.points for m in moves]} differ from the mechanism's payoffs {expected}")


def _read_reputation_records(path: Path, cfg: _Config, cell: dict[str, Any], matches: list[_Match], rows: _Rows) -> None:
    per_round = len(cfg.roster)
    total = cfg.n_rounds * per_round
    lines = list(_iter_records(path))
    if len(lines) != 1:
        raise _FileError(path, f"{len(lines)} lines; expected exactly one line holding the {total} reputation matches")
    lineno, value = lines[0]
    if not isinstance(value, list) or len(value) != total:
        raise _FileError(path, f"line {lineno} must list {total} matches ({cfg.n_rounds} rounds × {per_round})")
    history = {m.seated[0]: m for m in matches}
    counts: dict[str, int] = defaultdict(int)
    for i, raw in enumerate(value):
        round_index = i // per_round + 1
        moves = _moves_in_seat_order(raw, cfg, path, f"line {lineno} match {i}")
        for m in moves:
            name = f"{m.agent}#P{m.seat}"
            t = counts[name]
            counts[name] += 1
            if t >= cfg.n_rounds or round_index != t + 1:
                raise _FileError(path, f"match {i}: {name} plays more than once in round {round_index}")
            if abs(m.points - history[name].payoffs[t][0]) > _POINT_TOL:
                raise _FileError(
                    path,
                    f"match {i}: {name} has points {m.points} in round {round_index}; matchup_payoffs.json has "
                    f"{history[name].payoffs[t][0]}",
                )
        profile = tuple(m.action for m in moves)
        base = cfg.game.payoffs(profile)
        for m in moves:
            name = f"{m.agent}#P{m.seat}"
            rows.add(
                "decisions",
                **cell,
                decision_id=f"{cell['cell_id']}/r{round_index:02d}.m{i % per_round}/P{m.seat}",
                matchup_id=history[name].matchup_id,
                round=round_index,
                seat=m.seat,
                agent=m.agent,
                kind="action",
                status="ok",
                action=m.action,
                action_token=_token(m.action),
                points=m.points,
                base_points=float(base[m.seat - 1]),
                mediated=m.mediated,
                response=m.response,
            )


# ----------------------------------------------------------------------------------------------
# One experiment


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
    rows = _Rows()
    try:
        _import_into(Path(folder), run, rows)
    except _FileError as exc:
        raise ReferenceImportError([exc.problem]) from None
    return _frames(rows)


def _import_into(folder: Path, run: str, rows: _Rows) -> str:
    if _experiment_kind(folder.name) is None:
        raise _FileError(folder, "not an experiment folder; expected a name {mechanism}_{game}")
    cfg = _read_config(folder)
    cell_id = f"{run}/{folder.name}"
    cell = {"cell_id": cell_id, "source": "reference", "run": run, "mechanism": cfg.mechanism, "game": cfg.game.name}
    flags: list[tuple[str, str]] = []
    discount, matches = _read_matchup_payoffs(folder, cfg)
    reputation = cfg.mechanism_type in REPUTATION_MECHANISMS
    for match in matches:
        rows.add("matchups", **cell, matchup_id=match.matchup_id, agents=list(match.agents), n_rounds=cfg.n_rounds,
                 discount=discount, status="complete")
        for seat0, agent in enumerate(match.agents):
            seat = int(match.seated[seat0].rsplit("#P", 1)[1]) if reputation else seat0 + 1
            score = discounted_average([r[seat0] for r in match.payoffs], discount)
            rows.add("scores", **cell, matchup_id=match.matchup_id, seat=seat, agent=agent, score=score, status="complete")
    _read_summaries(folder, cfg, cell, rows, flags)
    designs: dict[str, dict[str, Any]] = {}
    if cfg.mechanism_type in ("Mediation", "Contracting"):
        designs = _read_designs(folder, cfg, cell, rows)
    records_file = _read_records(folder, cfg, cell, matches, designs, rows, flags)
    rows.add(
        "experiments",
        **cell,
        experiment=folder.name,
        n_players=cfg.game.n_players,
        n_rounds=cfg.n_rounds,
        discount=discount,
        agents=list(cfg.roster),
        mechanism_kwargs=json.dumps(cfg.mechanism_kwargs, sort_keys=True),
        game_kwargs=json.dumps(cfg.game_kwargs, sort_keys=True),
        records_file=records_file,
    )
    for flag, detail in flags:
        rows.add("import_flags", **cell, flag=flag, detail=detail)
    return cell_id


def _frames(rows: _Rows) -> dict[str, pl.DataFrame]:
    frames = {}
    for table in IMPORTED_TABLES:
        data = rows.tables.get(table, [])
        if data:
            frame = pl.DataFrame(data, infer_schema_length=None)
            frames[table] = conform_any(table, frame)
        else:
            frames[table] = empty_any(table)
    return frames


# ----------------------------------------------------------------------------------------------
# Whole data folder


def import_reference(
    data_dir: str | Path,
    *,
    progress: Callable[[str], None] | None = None,
) -> ReferenceData:
    """Import a run folder or a folder of run folders of the released CoopEval data.

    Every experiment folder of every run is read and validated in memory (spec §10 formats,
    all schema variants); matchup scores are the δ-weighted averages (spec §4.7) with the
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
        Frames for :data:`IMPORTED_TABLES`.

    Raises
    ------
    ReferenceImportError
        If any file is missing or malformed; the message names every offending file (at most
        one per experiment) and what was expected. Nothing is returned in that case.
    """
    import time

    runs = discover_runs(data_dir)
    rows = _Rows()
    problems: list[ImportProblem] = []
    cells: list[str] = []
    total = sum(len(exps) for _, _, exps in runs)
    done = 0
    for run, _, experiments in runs:
        for folder in experiments:
            done += 1
            start = time.perf_counter()
            local = _Rows()
            try:
                cell_id = _import_into(folder, run, local)
            except _FileError as exc:
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
        # A main-study run has all 6 mechanisms x 6 games; a folder missing from a mostly complete
        # run would silently shrink a table's averages, so it is flagged and announced. Runs with
        # fewer than half of the experiments are treated as deliberate subsets (not flagged).
        present = {f.name for f in experiments}
        if len(present & MAIN_STUDY_EXPERIMENTS) < len(MAIN_STUDY_EXPERIMENTS) // 2:
            continue
        for name in sorted(MAIN_STUDY_EXPERIMENTS - present):
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
    return ReferenceData(frames=_frames(rows), runs=[r for r, _, _ in runs], experiments=cells)
