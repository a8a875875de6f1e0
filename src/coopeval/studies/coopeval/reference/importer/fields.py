"""Reading and validating released files: the JSON reader and the field validators.

Every function raises :class:`~coopeval.studies.coopeval.reference.importer.errors.ReleasedFileError`
naming the file, the offending field (``where``) and what was expected (docs/protocol/reference-data.md#layout formats).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from coopeval.games import Game
from coopeval.studies.coopeval.reference.agent_types import reference_type_string
from coopeval.studies.coopeval.reference.importer.errors import ReleasedFileError
from coopeval.studies.coopeval.reference.importer.layout import reference_enum_members

__all__ = [
    "POINT_TOL",
    "SEATED_NAME",
    "action_index",
    "action_token",
    "agent_type_string",
    "check_agent_keys",
    "finite_number",
    "is_number",
    "read_json",
    "seated_agent",
]

SEATED_NAME = re.compile(r"^(?P<agent>.+)#P(?P<seat>[1-9][0-9]*)$")
"""A seated agent name ``"<type>#P<seat>"`` (seat 1-based)."""

POINT_TOL = 1e-9
"""Absolute tolerance (points) when two files' payoffs must agree."""


def read_json(path: Path, expected: str) -> Any:
    """Parsed JSON of ``path``; ``expected`` describes its shape for the error message."""
    if not path.is_file():
        raise ReleasedFileError(path, f"missing file; expected {expected}")
    try:
        with path.open(encoding="utf-8") as handle:
            return json.load(handle)
    except json.JSONDecodeError as exc:
        raise ReleasedFileError(path, f"invalid JSON ({exc.msg} at line {exc.lineno} column {exc.colno}); expected {expected}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ReleasedFileError(path, f"unreadable ({exc}); expected {expected}") from None


def is_number(value: Any) -> bool:
    """True for a finite int or float (not a bool)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def finite_number(value: Any, path: Path, where: str) -> float:
    """``value`` as a float if it is a finite number (see :func:`is_number`)."""
    if not is_number(value):
        raise ReleasedFileError(path, f"{where} is {value!r}; expected a finite number")
    return float(value)


def agent_type_string(config: Any) -> str:
    """Type string ``"{llm.model}({CoT|IO})"`` of a reference agent config (docs/protocol/games.md#roster).

    Delegates to :func:`coopeval.studies.coopeval.reference.agent_types.reference_type_string`.

    Raises
    ------
    ValueError
        If ``llm.model`` is missing or ``type`` is not ``CoTAgent``/``IOAgent``.
    """
    if not isinstance(config, Mapping):
        raise ValueError(f"agent config {config!r} is not an object")
    return reference_type_string(config)


def seated_agent(name: Any, roster: Sequence[str], n_players: int, path: Path, where: str) -> tuple[str, int]:
    """(agent type, seat 1..``n_players``) of a seated name ``"<type>#P<seat>"`` whose type is in ``roster``."""
    match = SEATED_NAME.match(name) if isinstance(name, str) else None
    if match is None:
        raise ReleasedFileError(path, f"{where} is {name!r}; expected a seated agent name '<type>#P<seat>'")
    agent, seat = match["agent"], int(match["seat"])
    if agent not in roster:
        raise ReleasedFileError(path, f"{where} names agent {agent!r}, which is not in config.json's agents")
    if not 1 <= seat <= n_players:
        raise ReleasedFileError(path, f"{where} names seat {seat}; expected 1..{n_players}")
    return agent, seat


def action_index(game: Game, value: Any, path: Path, where: str) -> int:
    """0-based action index of an enum string ``"<Game>Action.<MEMBER>"`` of ``game``."""
    enum_class = f"{game.name}Action"
    if isinstance(value, str) and "." in value:
        cls, member = value.split(".", 1)
        if cls == enum_class and member in reference_enum_members(game):
            return reference_enum_members(game).index(member)
    members = ", ".join(f"{enum_class}.{m}" for m in reference_enum_members(game))
    raise ReleasedFileError(path, f"{where} is {value!r}; expected one of {members}")


def action_token(index: int) -> str:
    """Our action token of a 0-based action index: ``3`` → ``"A3"``."""
    return f"A{index}"


def check_agent_keys(data: Any, roster: set[str], path: Path, shape: str) -> None:
    """Check that ``data`` is an object keyed by exactly the agent types of ``roster``."""
    if not isinstance(data, Mapping):
        raise ReleasedFileError(path, f"expected a JSON object {shape}")
    if set(data) != roster:
        missing, extra = sorted(roster - set(data)), sorted(set(data) - roster)
        raise ReleasedFileError(path, f"keys must be exactly config.json's agent types; missing {missing}, unexpected {extra}")

