"""Normal-form games declared as data.

A :class:`Game` is a finite N-player normal-form game whose actions are addressed by the
tokens ``A0, A1, …`` (CoopEval, arXiv 2604.15267, §2). Payoffs are held as an explicit table
from action profiles to per-seat payoffs, so every consumer (mechanisms, design-quality
checks, tests) reads the same numbers.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

Profile = tuple[int, ...]
"""An action profile: one action index per seat, seat 0 first."""

PayoffFn = Callable[[Profile], tuple[float, ...]]


def action_token(index: int) -> str:
    """Return the answer token of action ``index`` (``0 -> "A0"``)."""
    return f"A{index}"


@dataclass(frozen=True)
class Game:
    """A finite normal-form game with declared cooperative and Nash profiles.

    Attributes
    ----------
    name:
        The reference type name, e.g. ``"PrisonersDilemma"`` (used in tables and imports).
    key:
        The snake-case id used in configs and paths, e.g. ``"prisoners_dilemma"``.
    title:
        Human-readable name shown in prompts and figures.
    n_players:
        Number of seats N (2 or 3 in the paper's games; Public Goods takes any N from 2 to 10).
    actions:
        Action labels in token order; ``actions[i]`` is played by answering ``A{i}``.
    payoff_table:
        Every profile (tuple of N action indices, seat order) mapped to N payoffs (points).
    cooperative_profile, nash_profile:
        Declared profiles; normalisation constants follow from them (docs/protocol/games.md#normalisation).
    ne_value, coop_value:
        Per-player value at the NE / cooperative profile. Derived from seat 0's payoff at the
        declared profiles unless declared explicitly (Matching Pennies, whose NE is mixed).
    seat_rules:
        Per-seat payoff description used in prompts; ``seat_rules[p]`` is read by seat p.
    symmetric:
        Whether the game is symmetric under seat permutation (False only for the Trust Game
        and Matching Pennies).
    """

    name: str
    key: str
    title: str
    n_players: int
    actions: tuple[str, ...]
    payoff_table: Mapping[Profile, tuple[float, ...]]
    cooperative_profile: Profile
    nash_profile: Profile
    seat_rules: tuple[str, ...]
    symmetric: bool = True
    declared_ne_value: float | None = None
    declared_coop_value: float | None = None
    extra: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        expected = set(itertools.product(range(len(self.actions)), repeat=self.n_players))
        if set(self.payoff_table) != expected:
            raise ValueError(f"game {self.key}: payoff_table must cover all {len(expected)} profiles")
        for profile, payoffs in self.payoff_table.items():
            if len(payoffs) != self.n_players:
                raise ValueError(f"game {self.key}: profile {profile} needs {self.n_players} payoffs")
        if len(self.seat_rules) != self.n_players:
            raise ValueError(f"game {self.key}: one payoff description per seat is required")

    @property
    def n_actions(self) -> int:
        """Number of base actions."""
        return len(self.actions)

    @property
    def tokens(self) -> tuple[str, ...]:
        """Answer tokens ``("A0", "A1", …)`` in action order."""
        return tuple(action_token(i) for i in range(self.n_actions))

    def payoffs(self, profile: Profile) -> tuple[float, ...]:
        """Per-seat payoffs (points) of an action profile.

        Raises
        ------
        KeyError
            If the profile has the wrong length or an action index out of range.
        """
        return self.payoff_table[tuple(profile)]

    @property
    def cooperative_action(self) -> int:
        """The cooperative action of seat 0 (all seats share it in every game here)."""
        return self.cooperative_profile[0]

    @property
    def baseline_action(self) -> int:
        """The Nash-baseline action of seat 0 (the 'defect' move of scripted bots)."""
        return self.nash_profile[0]

    @property
    def ne_value(self) -> float:
        """Per-player payoff at the Nash baseline; maps to 0 when normalising (docs/protocol/games.md#normalisation)."""
        if self.declared_ne_value is not None:
            return self.declared_ne_value
        return self.payoffs(self.nash_profile)[0]

    @property
    def coop_value(self) -> float:
        """Per-player payoff when everyone cooperates; maps to 1 when normalising (docs/protocol/games.md#normalisation)."""
        if self.declared_coop_value is not None:
            return self.declared_coop_value
        return self.payoffs(self.cooperative_profile)[0]

    def normalise(self, value: float) -> float:
        """Map a payoff to the scale NE → 0, cooperative → 1 (docs/protocol/games.md#normalisation); may leave [0, 1]."""
        return (value - self.ne_value) / (self.coop_value - self.ne_value)

    def pure_nash_equilibria(self) -> list[Profile]:
        """All pure-strategy Nash equilibria, by brute force over profiles (tolerance 1e-12)."""
        result = []
        for profile in sorted(self.payoff_table):
            payoffs = self.payoffs(profile)
            stable = True
            for seat in range(self.n_players):
                for alt in range(self.n_actions):
                    deviated = (*profile[:seat], alt, *profile[seat + 1:])
                    if self.payoffs(deviated)[seat] > payoffs[seat] + 1e-12:
                        stable = False
                        break
                if not stable:
                    break
            if stable:
                result.append(profile)
        return result


def table_from_function(n_players: int, n_actions: int, fn: PayoffFn) -> dict[Profile, tuple[float, ...]]:
    """Tabulate ``fn`` over all ``n_actions ** n_players`` profiles."""
    return {
        profile: tuple(float(x) for x in fn(profile))
        for profile in itertools.product(range(n_actions), repeat=n_players)
    }


def symmetric_two_player_table(matrix: list[list[float]]) -> dict[Profile, tuple[float, ...]]:
    """Build a 2-player table from the row player's matrix ``matrix[me][other]``."""
    n = len(matrix)
    return {(i, j): (float(matrix[i][j]), float(matrix[j][i])) for i in range(n) for j in range(n)}
