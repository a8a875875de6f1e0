"""The records of the design → vote protocol (CoopEval, arXiv 2604.15267, §3.3–3.4; docs/protocol/mechanisms.md#mediation, #contracting): a seated agent's design decision, the selection of one matchup's approval vote and
the uniform tie-break among the most-approved options. Used by
:mod:`coopeval.studies.coopeval.mechanisms.design_vote`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from coopeval.agents.maker import DecisionOutcome
from coopeval.agents.protocol import Agent

__all__ = ["Design", "SeatedDesign", "Selection", "seated_name", "select_winner"]

Design = dict[str, Any]
"""A validated design: ``{"1": "A1", …}`` (mediator) or ``{"A0": int, …}`` (contract)."""


def seated_name(agent: Agent, seat: int) -> str:
    """The seated-agent name ``<agent>#P<seat>`` for a 0-based ``seat`` (docs/protocol/games.md#roster)."""
    return f"{agent.name}#P{seat + 1}"


@dataclass(frozen=True)
class SeatedDesign:
    """The design decision of one seated agent (0-based ``seat``)."""

    agent: Agent
    seat: int
    outcome: DecisionOutcome

    @property
    def designer(self) -> str:
        return seated_name(self.agent, self.seat)

    @property
    def design(self) -> Design | None:
        """The validated design, or None if the decision failed."""
        return dict(self.outcome.parsed) if self.outcome.ok and self.outcome.parsed is not None else None


@dataclass
class Selection:
    """The outcome of one matchup's approval vote (docs/protocol/mechanisms.md#mediation steps 3–4).

    ``approvals[i]`` counts the voters approving option i + 1; ``tied`` lists the 1-based
    options with the maximum count; ``index`` is the selected 1-based option. Contracting
    adds ``signatures`` (per seat) and ``active`` once everyone has answered.
    """

    design_kind: str
    index: int
    designer: str
    design: Design
    approvals: list[int]
    tied: list[int]
    signatures: list[bool] | None = None
    active: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """The ``parsed`` payload of the ``selection`` decision row."""
        out: dict[str, Any] = {
            "design_kind": self.design_kind,
            "selected_index": self.index,
            "selected_designer": self.designer,
            "design": self.design,
            "approvals": self.approvals,
            "tied_options": self.tied,
        }
        if self.signatures is not None:
            out["signatures"] = self.signatures
            out["all_signed"] = all(self.signatures)
            out["active"] = bool(self.active)
            out["rejecting_seats"] = [s + 1 for s, ok in enumerate(self.signatures) if not ok]
        return {**out, **self.extra}


def select_winner(approvals: Sequence[int], draw: Callable[[int], int]) -> tuple[int, list[int]]:
    """The 1-based winner among the most-approved options and the tied options.

    ``draw(k)`` returns a uniform index in ``range(k)``; it is called exactly once, also when a
    single option leads, so the stream use does not depend on the votes.
    """
    best = max(approvals)
    tied = [i + 1 for i, count in enumerate(approvals) if count == best]
    return tied[draw(len(tied))], tied
