"""Experimental conditions: the flags one cell plays under (issue 10 item 3; docs/protocol/gossip.md#attacks-and-ablations, #decisions).

A condition is a named set of flags; every flag is part of the cell hash. The built-in catalogue
covers ALIGN and its ablations; ``gossip.condition_defs`` in the config may add more, and
``gamma_sweep`` expands into one condition per γ of ``gossip.gamma_grid``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from coopeval.studies.gossip.testbeds import HORIZONS
from coopeval.studies.gossip.tones import SIGNAL_MODES

ATTACKERS = ("none", "max", "collusive")
ATTACKER_MESSAGES = ("scripted", "llm")


@dataclass(frozen=True)
class Condition:
    """Flags of one condition.

    Attributes
    ----------
    name:
        Condition name (also the ``condition`` column of every table).
    gossip:
        Witnesses publish an assessment (docs/protocol/gossip.md#round-loop step 2.4).
    signal:
        ``tone`` (ALIGN), ``binary`` (1/0, no stated meaning) or ``binary_convention``
        (1 = good, 0 = bad) (docs/protocol/gossip.md#ablations).
    equilibrium_knowledge:
        The backward-induction / one-shot-deviation hint (docs/protocol/gossip.md#prompts item 6).
    reflection:
        Response guidelines ask to reflect, and own justifications enter private memory (docs/protocol/gossip.md#memory).
    show_tone:
        The public log shows ``[tone] message`` (our default) or the message only (reference).
    horizon:
        ``infinite`` or ``finite``; None keeps the testbed's default.
    gamma:
        Discount factor; None keeps the testbed's default (0.99).
    attacker:
        ``none``, ``max`` (silent greedy defector, docs/protocol/gossip.md#greedy-defector) or ``collusive`` (two attackers, docs/protocol/gossip.md#collusive-attackers).
    attacker_messages:
        ``scripted`` templates or ``llm`` (the cell's model writes the message in the forced tone).
    attacker_third_party_praise:
        Attackers also praise their partner in messages about third parties (docs/protocol/gossip.md#collusive-attackers; off).
    reflection_call:
        A separate reflection call before each action of an honest agent, whose text the action
        prompt then shows (docs/protocol/gossip.md#decisions; off: the reference's single call).
    """

    name: str
    gossip: bool = True
    signal: str = "tone"
    equilibrium_knowledge: bool = True
    reflection: bool = True
    show_tone: bool = True
    horizon: str | None = None
    gamma: float | None = None
    attacker: str = "none"
    attacker_messages: str = "scripted"
    attacker_third_party_praise: bool = False
    reflection_call: bool = False

    def to_json(self) -> dict[str, Any]:
        """Plain dict (for the cell spec)."""
        return asdict(self)

    @staticmethod
    def from_json(data: Mapping[str, Any]) -> Condition:
        """Inverse of :meth:`to_json`; raises :class:`ValueError` naming a bad flag."""
        known = {f.name for f in fields(Condition)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown condition flag(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        cond = Condition(**dict(data))
        cond.check()
        return cond

    def check(self) -> None:
        """Raise :class:`ValueError` naming the flag whose value is unknown."""
        if self.signal not in SIGNAL_MODES:
            raise ValueError(f"condition {self.name!r}: signal must be one of {SIGNAL_MODES}, not {self.signal!r}")
        if self.horizon is not None and self.horizon not in HORIZONS:
            raise ValueError(f"condition {self.name!r}: horizon must be one of {HORIZONS}, not {self.horizon!r}")
        if self.attacker not in ATTACKERS:
            raise ValueError(f"condition {self.name!r}: attacker must be one of {ATTACKERS}, not {self.attacker!r}")
        if self.attacker_messages not in ATTACKER_MESSAGES:
            raise ValueError(f"condition {self.name!r}: attacker_messages must be one of {ATTACKER_MESSAGES}")
        if self.gamma is not None and not 0 < self.gamma < 1:
            raise ValueError(f"condition {self.name!r}: gamma must be in (0, 1), not {self.gamma}")


BUILTIN_CONDITIONS: dict[str, Condition] = {
    c.name: c
    for c in (
        Condition("align"),
        Condition("no_gossip", gossip=False),
        Condition("no_equilibrium", equilibrium_knowledge=False),
        Condition("no_reflection", reflection=False),
        Condition("binary_no_convention", signal="binary"),
        Condition("binary_convention", signal="binary_convention"),
        Condition("tone_hidden", show_tone=False),
        Condition("finite", horizon="finite"),
        Condition("infinite", horizon="infinite"),
        Condition("max", attacker="max"),
        Condition("max_no_gossip", gossip=False, attacker="max"),
        Condition("collusive", attacker="collusive"),
        Condition("collusive_llm_messages", attacker="collusive", attacker_messages="llm"),
        Condition("collusive_third_party", attacker="collusive", attacker_third_party_praise=True),
        Condition("reflection_call", reflection_call=True),
    )
}
"""Named conditions of the config's ``gossip.conditions`` list (plus ``gamma_sweep``)."""

GAMMA_SWEEP = "gamma_sweep"
DEFAULT_GAMMA_GRID = (0.1, 0.2, 0.5, 0.9, 0.99)


def gamma_conditions(grid: tuple[float, ...] | list[float]) -> list[Condition]:
    """One ALIGN condition per γ, named ``gamma=<γ>`` (docs/protocol/gossip.md#ablations, grid on both sides of c/b)."""
    return [replace(BUILTIN_CONDITIONS["align"], name=f"gamma={g:g}", gamma=float(g)) for g in grid]
