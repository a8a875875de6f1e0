"""Experiment config parsing: ``config.json`` → :class:`ExperimentConfig` (docs/protocol/reference-data.md#layout).

Checks the game against our definition (payoffs of docs/protocol/games.md, within :data:`POINT_TOL`), the
mechanism and game types against the folder name, and builds the roster of agent type strings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coopeval.games import Game, get_game
from coopeval.games.definitions import public_goods, travellers_dilemma
from coopeval.studies.coopeval.mechanisms.catalog import MECHANISM_INFO
from coopeval.studies.coopeval.reference.importer.errors import ReleasedFileError
from coopeval.studies.coopeval.reference.importer.fields import (
    POINT_TOL,
    agent_type_string,
    finite_number,
    is_number,
    read_json,
)
from coopeval.studies.coopeval.reference.importer.layout import (
    GAME_STEMS,
    MECHANISM_STEMS,
    experiment_kind,
    game_stem,
    reference_enum_members,
)

__all__ = ["ExperimentConfig", "game_from_config", "read_config"]


@dataclass(frozen=True)
class ExperimentConfig:
    """What the importer needs from one experiment's ``config.json``.

    Attributes
    ----------
    mechanism:
        Mechanism name written to the tables: the type name, or ``"<type>[<variant>]"`` for an
        ablation folder (keeps variants apart).
    mechanism_type:
        Mechanism type name of ``config.json`` (a value of :data:`MECHANISM_STEMS`).
    game:
        The game, checked against our definition.
    roster:
        Agent type strings in ``config.json`` order, distinct.
    n_rounds:
        Rounds per match (``num_rounds`` for Repetition/Reputation, else 1).
    discount:
        ``mechanism.kwargs.discount`` if given, else None.
    methods:
        Evaluation method types listed in ``evaluation.methods``.
    mechanism_kwargs, game_kwargs:
        The raw ``kwargs`` objects (written to the ``experiments`` table).
    """

    mechanism: str
    mechanism_type: str
    game: Game
    roster: tuple[str, ...]
    n_rounds: int
    discount: float | None
    methods: frozenset[str]
    mechanism_kwargs: dict[str, Any]
    game_kwargs: dict[str, Any]


def game_from_config(game_type: str, kwargs: Any, path: Path) -> Game:
    """Build the game of config.json and check its payoffs against our definition."""
    if not isinstance(kwargs, Mapping):
        raise ReleasedFileError(path, "game.kwargs is not an object")
    try:
        if game_type == "PublicGoods":
            unknown = set(kwargs) - {"num_players", "multiplier", "endowment"}
            if unknown:
                raise ReleasedFileError(path, f"game.kwargs has unknown keys {sorted(unknown)}; expected num_players, multiplier")
            if kwargs.get("num_players", 3) != 3:
                raise ReleasedFileError(path, f"game.kwargs.num_players is {kwargs['num_players']!r}; only 3 is supported")
            return public_goods(
                multiplier=finite_number(kwargs.get("multiplier", 1.5), path, "game.kwargs.multiplier"),
                endowment=finite_number(kwargs.get("endowment", 1.0), path, "game.kwargs.endowment"),
            )
        if game_type == "TravellersDilemma":
            known = {"min_claim": "min_claim", "num_actions": "n_claims", "claim_spacing": "spacing", "bonus": "bonus"}
            unknown = set(kwargs) - set(known)
            if unknown:
                raise ReleasedFileError(path, f"game.kwargs has unknown keys {sorted(unknown)}; expected {sorted(known)}")
            params: dict[str, Any] = {}
            for key, name in known.items():
                if key in kwargs:
                    value = finite_number(kwargs[key], path, f"game.kwargs.{key}")
                    params[name] = int(value) if float(value).is_integer() else value
            return travellers_dilemma(**params)
        game = get_game(game_type)
    except KeyError:
        raise ReleasedFileError(path, f"game.type {game_type!r} is unknown; expected one of {sorted(GAME_STEMS.values())}") from None
    matrix = kwargs.get("payoff_matrix")
    unknown = set(kwargs) - {"payoff_matrix"}
    if unknown:
        raise ReleasedFileError(path, f"game.kwargs has unknown keys {sorted(unknown)}; expected payoff_matrix")
    if matrix is not None:
        letters = {m[0]: i for i, m in enumerate(reference_enum_members(game))}
        expected_keys = {a + b for a in letters for b in letters}
        if not isinstance(matrix, Mapping) or set(matrix) != expected_keys:
            raise ReleasedFileError(path, f"game.kwargs.payoff_matrix must have exactly the keys {sorted(expected_keys)}")
        for key, payoffs in matrix.items():
            profile = (letters[key[0]], letters[key[1]])
            if (
                not isinstance(payoffs, list)
                or len(payoffs) != 2
                or not all(is_number(v) for v in payoffs)
                or any(abs(float(v) - w) > POINT_TOL for v, w in zip(payoffs, game.payoffs(profile), strict=True))
            ):
                raise ReleasedFileError(
                    path,
                    f"game.kwargs.payoff_matrix[{key!r}] is {payoffs!r}; expected {list(game.payoffs(profile))} "
                    f"(the {game.name} of docs/protocol/games.md)",
                )
    return game


def read_config(folder: Path) -> ExperimentConfig:
    """Parse and check ``folder/config.json``; raises ReleasedFileError naming the problem."""
    path = folder / "config.json"
    config = read_json(path, "the experiment config {game, mechanism, agents, evaluation, …}")
    if not isinstance(config, Mapping):
        raise ReleasedFileError(path, "expected a JSON object {game, mechanism, agents, evaluation, …}")
    for key in ("game", "mechanism", "agents"):
        if key not in config:
            raise ReleasedFileError(path, f"missing key {key!r}; expected {{game, mechanism, agents, evaluation, …}}")
    game_cfg, mech_cfg = config["game"], config["mechanism"]
    if not isinstance(game_cfg, Mapping) or not isinstance(game_cfg.get("type"), str):
        raise ReleasedFileError(path, "game must be an object {type, kwargs}")
    if not isinstance(mech_cfg, Mapping) or not isinstance(mech_cfg.get("type"), str):
        raise ReleasedFileError(path, "mechanism must be an object {type, kwargs}")
    mech_type = mech_cfg["type"]
    if mech_type not in MECHANISM_STEMS.values():
        raise ReleasedFileError(path, f"mechanism.type {mech_type!r} is unknown; expected one of {sorted(MECHANISM_STEMS.values())}")
    kind = experiment_kind(folder.name)
    assert kind is not None
    folder_mech, folder_game = kind
    if game_cfg["type"] != folder_game:
        raise ReleasedFileError(path, f"game.type {game_cfg['type']!r} does not match the folder name (expected {folder_game!r})")
    if folder_mech is not None and mech_type != folder_mech:
        raise ReleasedFileError(path, f"mechanism.type {mech_type!r} does not match the folder name (expected {folder_mech!r})")
    game = game_from_config(game_cfg["type"], game_cfg.get("kwargs", {}), path)
    agents = config["agents"]
    if not isinstance(agents, list) or len(agents) < 2:
        raise ReleasedFileError(path, "agents must be a list of at least 2 agent configs {llm {model, …}, type}")
    roster = []
    for i, agent in enumerate(agents):
        try:
            roster.append(agent_type_string(agent))
        except ValueError as exc:
            raise ReleasedFileError(path, f"agents[{i}]: {exc}") from None
    if len(set(roster)) != len(roster):
        raise ReleasedFileError(path, f"agents has duplicate type strings {roster}")
    mech_kwargs = mech_cfg.get("kwargs", {})
    if not isinstance(mech_kwargs, Mapping):
        raise ReleasedFileError(path, "mechanism.kwargs must be an object")
    n_rounds = 1
    discount = None
    if mech_type in MECHANISM_INFO and "num_rounds" in MECHANISM_INFO[mech_type].defaults():
        rounds = mech_kwargs.get("num_rounds")
        if not isinstance(rounds, int) or isinstance(rounds, bool) or rounds < 1:
            raise ReleasedFileError(path, f"mechanism.kwargs.num_rounds is {rounds!r}; expected a positive integer")
        n_rounds = rounds
        if "discount" in mech_kwargs:
            discount = finite_number(mech_kwargs["discount"], path, "mechanism.kwargs.discount")
    methods: set[str] = set()
    evaluation = config.get("evaluation", {})
    if isinstance(evaluation, Mapping):
        for method in evaluation.get("methods", []) or []:
            if isinstance(method, Mapping) and isinstance(method.get("type"), str):
                methods.add(method["type"])
    mechanism = mech_type
    if folder_mech is None:  # ablation folder: keep variants apart in the tables
        variant = folder.name[len("ablation_abl_") : -len("_" + game_stem(game.name))]
        mechanism = f"{mech_type}[{variant}]"
    return ExperimentConfig(
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
