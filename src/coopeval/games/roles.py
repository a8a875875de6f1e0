"""The two roles of a stage game, as names a table can use.

Each stage game (:mod:`.donation`, :mod:`.trust`, :mod:`.market`) declares once what its two
agents are (``roles``, first agent first) and whether they move at the same time
(``simultaneous``). A symmetric game's agents hold the same role (the Prisoner's Dilemma's
``player``, ``player``); :func:`role_names` numbers them (``player_1``, ``player_2``) so that a
table can name a column after each agent's role. Nothing else is declared here: every name is
derived from the game class.
"""

from __future__ import annotations

from typing import ClassVar, Protocol


class TwoRoleGame(Protocol):
    """A stage game between two agents that declares their roles (first, second) and whether
    they move at the same time."""

    roles: ClassVar[tuple[str, str]]
    simultaneous: ClassVar[bool]


def role_names(game: type[TwoRoleGame]) -> tuple[str, str]:
    """The distinct names of ``game``'s two roles (first, second): its declared ``roles``, or,
    when both agents hold the same role, that role numbered ``_1`` and ``_2``.

    Examples: donation game ``("donor", "recipient")``; its Prisoner's Dilemma
    ``("player_1", "player_2")``; trust game ``("investor", "trustee")``; market
    ``("seller", "buyer")``.

    Raises
    ------
    ValueError
        A role that is not a lower-case identifier (it would not be a valid column name), naming
        the game.
    """
    first, second = game.roles
    for role in (first, second):
        if not role.isidentifier() or role != role.lower():
            raise ValueError(f"{game.__name__}.roles: {role!r} is not a lower-case identifier; name the role in snake_case")
    if first == second:
        return f"{first}_1", f"{second}_2"
    return first, second
