"""Design-quality checks for mediator and contract designs: Nash stability (NS) and weak
dominance (WD) of the cooperative outcome.

Source: CoopEval (Tewolde et al., arXiv 2604.15267), docs/protocol/design-checks.md#ns-wd; rates and table cells in docs/protocol/tables.md
step 6. Every check is brute force over all action profiles of the base game (no closed-form
shortcuts), with an absolute tolerance of 1e−9 on payoff comparisons.

Conventions
-----------
* A *contract* attaches a number c[a] to every base action a (docs/protocol/mechanisms.md#contracting). With the profile
  a = (a_1..a_N), player i receives base_i(a) + c[a_i] − Σ_{j≠i} c[a_j]/(N − 1): the player
  whose action carries c receives c, paid in equal shares by the others (negative c: the
  player pays |c|, shared among the others).
* A *mediator* maps the number of delegating players d ∈ {1..N} to one base action played
  for every delegator (docs/protocol/mechanisms.md#mediation). The extended action space is the base actions 0..n−1 plus
  ``DELEGATE`` (index n); a profile with d ≥ 1 delegators resolves every delegator's action
  to mapping[d].
* The target ("cooperative") profile is every seat playing the game's cooperative action.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Mapping, Sequence

from coopeval.games import Game

__all__ = [
    "TOLERANCE",
    "contract_ns",
    "contract_payoffs",
    "contract_wd",
    "design_checks",
    "mediator_ns",
    "mediator_payoffs",
    "mediator_wd",
    "parse_contract",
    "parse_mediator",
]

TOLERANCE = 1e-9
"""Absolute payoff tolerance of every NS/WD comparison (docs/protocol/design-checks.md#ns-wd)."""

ContractLike = Mapping[int, float] | Mapping[str, float] | Sequence[float]
MediatorLike = Mapping[int, int] | Mapping[str, str] | Mapping[int, str] | Mapping[str, int]


Payoffs = Callable[[tuple[int, ...]], tuple[float, ...]]
"""Per-seat payoffs (points) of a profile of the (possibly extended) game."""


def _is_nash(profile: tuple[int, ...], alternatives: Callable[[int], Iterable[int]], payoffs: Payoffs, tol: float) -> bool:
    """Whether no seat gains more than ``tol`` by deviating alone from ``profile`` to one of
    ``alternatives(seat)`` (Nash stability, docs/protocol/design-checks.md#ns-wd)."""
    here = payoffs(profile)
    return not any(
        payoffs((*profile[:seat], alt, *profile[seat + 1:]))[seat] > here[seat] + tol
        for seat in range(len(profile))
        for alt in alternatives(seat)
    )


def _weakly_dominates(
    seat: int, action: int, alt: int, n_players: int, n_choices: int, payoffs: Payoffs, tol: float
) -> bool:
    """Whether ``action`` weakly dominates ``alt`` for ``seat`` (docs/protocol/design-checks.md#ns-wd): against every profile
    of the others over ``range(n_choices)`` never worse by more than ``tol``, and better by
    more than ``tol`` against at least one."""
    strictly_better = False
    for others in itertools.product(range(n_choices), repeat=n_players - 1):
        u_action = payoffs((*others[:seat], action, *others[seat:]))[seat]
        u_alt = payoffs((*others[:seat], alt, *others[seat:]))[seat]
        if u_action < u_alt - tol:
            return False
        strictly_better = strictly_better or u_action > u_alt + tol
    return strictly_better


def _action_index(game: Game, value: int | str, what: str) -> int:
    """An action index from an int or an ``A{i}`` token; raises ValueError if out of range."""
    if isinstance(value, bool):
        raise ValueError(f"{what}: boolean {value!r} is not an action")
    if isinstance(value, int):
        index = value
    elif isinstance(value, str) and value.startswith("A") and value[1:].isdigit():
        index = int(value[1:])
    else:
        raise ValueError(f"{what}: {value!r} is neither an action index nor a token A0..A{game.n_actions - 1}")
    if not 0 <= index < game.n_actions:
        raise ValueError(f"{what}: action {value!r} out of range for {game.name} ({game.n_actions} actions)")
    return index


def parse_contract(game: Game, contract: ContractLike) -> tuple[float, ...]:
    """Normalise a contract to one value per base action, in token order.

    Accepts a sequence (``[c_A0, c_A1, …]``), a mapping keyed by action index or by token
    (``{"A0": 2, "A1": 0}``).

    Raises
    ------
    ValueError
        If the key set is not exactly the game's base actions or a value is not a finite number.
    """
    if isinstance(contract, Mapping):
        values: dict[int, float] = {}
        for key, value in contract.items():
            values[_action_index(game, key, "contract key")] = value
        if set(values) != set(range(game.n_actions)):
            raise ValueError(
                f"contract keys {sorted(contract)} must be exactly the {game.n_actions} base actions of {game.name}"
            )
        ordered = [values[i] for i in range(game.n_actions)]
    else:
        ordered = list(contract)
        if len(ordered) != game.n_actions:
            raise ValueError(f"contract has {len(ordered)} values; {game.name} has {game.n_actions} actions")
    out = []
    for v in ordered:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v != v or v in (float("inf"), float("-inf")):
            raise ValueError(f"contract value {v!r} is not a finite number")
        out.append(float(v))
    return tuple(out)


def parse_mediator(game: Game, mapping: MediatorLike) -> dict[int, int]:
    """Normalise a mediator design to ``{d: action index}`` for d = 1..N.

    Keys may be ints or digit strings (``"1"``); values action indices or tokens (``"A0"``).

    Raises
    ------
    ValueError
        If the keys are not exactly 1..N or a value is not a base action.
    """
    result: dict[int, int] = {}
    for key, value in mapping.items():
        if isinstance(key, bool):
            raise ValueError(f"mediator key {key!r} is not a delegator count")
        try:
            d = int(key)
        except (TypeError, ValueError):
            raise ValueError(f"mediator key {key!r} is not a delegator count") from None
        result[d] = _action_index(game, value, f"mediator[{key}]")
    if set(result) != set(range(1, game.n_players + 1)):
        raise ValueError(f"mediator keys {sorted(result)} must be exactly 1..{game.n_players}")
    return result


# ----------------------------------------------------------------------------------------------
# Contracts


def contract_payoffs(game: Game, contract: ContractLike, profile: Sequence[int]) -> tuple[float, ...]:
    """Per-seat payoffs (points) of a base-action profile under an active contract (docs/protocol/mechanisms.md#contracting).

    u_i(a) = base_i(a) + c[a_i] − Σ_{j≠i} c[a_j]/(N − 1).

    Raises
    ------
    ValueError
        On a malformed contract (see :func:`parse_contract`).
    KeyError
        On an invalid profile.
    """
    c = parse_contract(game, contract)
    return _contract_payoffs(game, c, tuple(profile))


def _contract_payoffs(game: Game, c: Sequence[float], profile: tuple[int, ...]) -> tuple[float, ...]:
    base = game.payoffs(profile)
    n = game.n_players
    total = sum(c[a] for a in profile)
    return tuple(base[i] + c[profile[i]] - (total - c[profile[i]]) / (n - 1) for i in range(n))


def contract_ns(game: Game, contract: ContractLike, tol: float = TOLERANCE) -> bool:
    """Whether everyone cooperating is a Nash equilibrium of the game with the contract (docs/protocol/design-checks.md#ns-wd).

    True iff no player gains more than ``tol`` by deviating unilaterally from the all-
    cooperative profile to any other base action.

    Raises
    ------
    ValueError
        On a malformed contract.
    """
    c = parse_contract(game, contract)
    target = tuple(game.cooperative_profile)
    return _is_nash(
        target,
        lambda seat: [a for a in range(game.n_actions) if a != target[seat]],
        lambda profile: _contract_payoffs(game, c, profile),
        tol,
    )


def contract_wd(game: Game, contract: ContractLike, tol: float = TOLERANCE) -> bool:
    """Whether cooperating is weakly dominant for every player under the contract (docs/protocol/design-checks.md#ns-wd).

    For every player i and every alternative action b: against every profile of the others,
    u_i(coop, a_−i) ≥ u_i(b, a_−i) − tol, and for at least one profile
    u_i(coop, a_−i) > u_i(b, a_−i) + tol.

    Raises
    ------
    ValueError
        On a malformed contract.
    """
    c = parse_contract(game, contract)
    n, k = game.n_players, game.n_actions
    coop = game.cooperative_profile
    return all(
        _weakly_dominates(seat, coop[seat], alt, n, k, lambda profile: _contract_payoffs(game, c, profile), tol)
        for seat in range(n)
        for alt in range(k)
        if alt != coop[seat]
    )


# ----------------------------------------------------------------------------------------------
# Mediators


def mediator_payoffs(game: Game, mapping: MediatorLike, profile: Sequence[int]) -> tuple[float, ...]:
    """Per-seat payoffs of an extended profile (base actions 0..n−1, delegate = n) (docs/protocol/mechanisms.md#mediation).

    With d ≥ 1 delegators, every delegator's action becomes mapping[d]; payoffs are the base
    payoffs of the resolved profile.

    Raises
    ------
    ValueError
        On a malformed mapping or an action outside 0..n.
    """
    m = parse_mediator(game, mapping)
    for a in profile:
        if not 0 <= a <= game.n_actions:
            raise ValueError(f"extended action {a} outside 0..{game.n_actions} (delegate = {game.n_actions})")
    return _mediator_payoffs(game, m, tuple(profile))


def _mediator_payoffs(game: Game, m: Mapping[int, int], profile: tuple[int, ...]) -> tuple[float, ...]:
    delegate = game.n_actions
    d = sum(1 for a in profile if a == delegate)
    resolved = tuple(m[d] if a == delegate else a for a in profile)
    return game.payoffs(resolved)


def _cooperative_mediator(game: Game, mapping: MediatorLike) -> dict[int, int] | None:
    """The parsed mapping if everyone delegating plays the cooperative action, else None.

    docs/protocol/design-checks.md#ns-wd: mapping[N] must be the cooperative action (every game here has one shared
    cooperative action for all seats). Raises ValueError on a malformed mapping.
    """
    m = parse_mediator(game, mapping)
    coop = set(game.cooperative_profile)
    return m if len(coop) == 1 and m[game.n_players] in coop else None


def mediator_ns(game: Game, mapping: MediatorLike, tol: float = TOLERANCE) -> bool:
    """Whether everyone delegating is a Nash equilibrium that implements cooperation (docs/protocol/design-checks.md#ns-wd).

    False unless mapping[N] is the cooperative action. Otherwise True iff no player gains more
    than ``tol`` by deviating from "everyone delegates" to any base action (the remaining
    N − 1 delegators then play mapping[N − 1]).

    Raises
    ------
    ValueError
        On a malformed mapping.
    """
    m = _cooperative_mediator(game, mapping)
    if m is None:
        return False
    everyone = (game.n_actions,) * game.n_players  # DELEGATE is index n_actions
    return _is_nash(
        everyone, lambda seat: range(game.n_actions), lambda profile: _mediator_payoffs(game, m, profile), tol
    )


def mediator_wd(game: Game, mapping: MediatorLike, tol: float = TOLERANCE) -> bool:
    """Whether delegating is weakly dominant for every player (docs/protocol/design-checks.md#ns-wd).

    False unless mapping[N] is the cooperative action. Otherwise, for every player i and every
    base action b: against every profile of the others over base actions *and* delegation,
    u_i(delegate, ·) ≥ u_i(b, ·) − tol, and strictly better (> tol) against at least one.

    Raises
    ------
    ValueError
        On a malformed mapping (see :func:`parse_mediator`).
    """
    m = _cooperative_mediator(game, mapping)
    if m is None:
        return False
    n, delegate = game.n_players, game.n_actions
    return all(
        _weakly_dominates(seat, delegate, alt, n, delegate + 1, lambda profile: _mediator_payoffs(game, m, profile), tol)
        for seat in range(n)
        for alt in range(game.n_actions)
    )


def design_checks(game: Game, design_kind: str, design: str | Mapping[str, object]) -> dict[str, bool]:
    """NS and WD of one stored design (the ``designs`` table's ``design`` column).

    Parameters
    ----------
    game:
        The base game.
    design_kind:
        ``"mediator"`` (design ``{"1": "A0", …, "N": "A1"}``) or ``"contract"``
        (design ``{"A0": int, …}``).
    design:
        The design as a JSON string or an already decoded mapping.

    Returns
    -------
    dict[str, bool]
        ``{"NS": bool, "WD": bool}``.

    Raises
    ------
    ValueError
        On an unknown ``design_kind`` or a malformed design.
    """
    decoded = json.loads(design) if isinstance(design, str) else design
    if not isinstance(decoded, Mapping):
        raise ValueError(f"design {design!r} is not a JSON object")
    if design_kind == "mediator":
        return {"NS": mediator_ns(game, decoded), "WD": mediator_wd(game, decoded)}  # type: ignore[arg-type]
    if design_kind == "contract":
        return {"NS": contract_ns(game, decoded), "WD": contract_wd(game, decoded)}  # type: ignore[arg-type]
    raise ValueError(f"design_kind {design_kind!r}; expected 'mediator' or 'contract'")
