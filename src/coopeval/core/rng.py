"""Per-decision random streams (docs/protocol/engineering.md#randomness; docs/protocol/answers.md#sampling).

Every random draw comes from ``numpy.random.SeedSequence(global_seed, spawn_key=…)`` whose
spawn key is derived from the draw's *position* (game, mechanism, replicate, seated agents,
round, seat, purpose), never from the cell hash or the roster: adding an agent leaves the draws
of existing matchups unchanged, and changing the number of LLM calls never shifts any stream.
"""

from __future__ import annotations

import hashlib

import numpy as np

PositionPart = str | int


def _to_int(part: PositionPart) -> int:
    if isinstance(part, bool):
        raise TypeError("booleans are not valid position parts")
    if isinstance(part, int):
        if part < 0:
            raise ValueError(f"position parts must be non-negative, got {part}")
        return part
    return int.from_bytes(hashlib.sha256(str(part).encode("utf-8")).digest()[:4], "big")


def rng_for(global_seed: int, *position: PositionPart) -> np.random.Generator:
    """A generator for one named stream.

    Parameters
    ----------
    global_seed:
        The config's ``seed`` (non-negative int).
    position:
        Strings (hashed to 32-bit ints) and non-negative ints identifying the stream, e.g.
        ``("prisoners_dilemma", "Repetition", 1, "agentA|agentB", 3, 0, "action")``.
    """
    seq = np.random.SeedSequence(global_seed, spawn_key=tuple(_to_int(p) for p in position))
    return np.random.default_rng(seq)


def seed_int_for(global_seed: int, *position: PositionPart) -> int:
    """A 31-bit integer seed for providers that accept one (best effort only)."""
    seq = np.random.SeedSequence(global_seed, spawn_key=tuple(_to_int(p) for p in position))
    return int(seq.generate_state(1, dtype=np.uint32)[0] >> 1)


def sample_action(distribution: dict[str, int], tokens: tuple[str, ...], draw: float) -> int:
    """Sample an action index from integer percents with the uniform ``draw`` in [0, 1).

    The action is the first index whose cumulative percent exceeds ``100 * draw``.

    Raises
    ------
    ValueError
        If the percents do not sum to 100 or ``draw`` is outside [0, 1).
    """
    if not 0.0 <= draw < 1.0:
        raise ValueError(f"draw must be in [0, 1), got {draw}")
    weights = [distribution[t] for t in tokens]
    if sum(weights) != 100:
        raise ValueError(f"percents must sum to 100, got {sum(weights)}")
    cumulative = 0
    for index, weight in enumerate(weights):
        cumulative += weight
        if 100.0 * draw < cumulative:
            return index
    raise AssertionError("unreachable: cumulative sum reached 100")
