"""The one recorder: a decision outcome plus a study's own columns become the shared rows.

Every study asks its questions through :class:`~coopeval.agents.maker.DecisionMaker` and
stores each decision as one row of the ``decisions`` table and each of its attempts as one row
of the ``llm_calls`` table (schemas in :mod:`coopeval.core.schemas`). The engine owns the
columns that describe the decision itself (:data:`DECISION_COLUMNS`: id, agent, kind, status,
validated answer, attempts, final reply) and the attempt columns the maker writes; a study
adds only its own context columns (where the decision sits in its game: matchup, round, seat,
sampled action, …) and may not overwrite an engine column.

Rows are plain dicts; the stage that writes them conforms them to the table schema
(:func:`coopeval.core.schemas.conform`), so absent columns become nulls.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from coopeval.agents.maker import DecisionOutcome

DECISION_COLUMNS: tuple[str, ...] = (
    "decision_id",
    "agent",
    "kind",
    "status",
    "parsed",
    "n_attempts",
    "finish_reason",
    "truncated",
    "answer_offset",
    "reasoning_truncated",
    "response",
    "error",
)
"""The ``decisions`` columns the engine fills from the outcome (a study's context may not set them)."""


@dataclass(frozen=True)
class DecisionRows:
    """The rows of one decision: ``decision`` (one ``decisions`` row) and ``calls`` (one
    ``llm_calls`` row per attempt, in attempt order)."""

    decision: dict[str, Any]
    calls: list[dict[str, Any]] = field(default_factory=list)


def _check_context(context: Mapping[str, Any], owned: set[str], table: str) -> None:
    clash = sorted(owned.intersection(context))
    if clash:
        raise ValueError(
            f"study context sets the engine's {table} column(s) {clash}: these come from the decision outcome; "
            "drop them from the context (rename a study column that means something else)"
        )


def record_decision(
    outcome: DecisionOutcome,
    agent: str,
    kind: str,
    context: Mapping[str, Any],
    decision_context: Mapping[str, Any] | None = None,
) -> DecisionRows:
    """The ``decisions`` row and the ``llm_calls`` rows of one decision.

    Parameters
    ----------
    outcome:
        The maker's result (:meth:`DecisionMaker.decide`).
    agent:
        The deciding agent's name (``decisions.agent``; the attempts carry their own).
    kind:
        The answer format's kind (``str(DecisionKind)``, ``decisions.kind``).
    context:
        The study's columns shared by both tables (e.g. ``matchup_id``, ``round``, ``seat``,
        or a study's cell columns).
    decision_context:
        The study's columns of the ``decisions`` row only (e.g. ``match_id``, ``draw``,
        ``action``, ``action_token``, ``points``).

    Returns
    -------
    DecisionRows
        ``decision``: context, then the engine's :data:`DECISION_COLUMNS` (``parsed`` as JSON
        text or None, ``n_attempts`` the number of attempts, the final reply's columns from
        :attr:`DecisionOutcome.reply_columns`), then ``decision_context``; ``calls``: context
        merged with each attempt's columns.

    Raises
    ------
    ValueError
        If ``context`` or ``decision_context`` names an engine column of the ``decisions``
        row, or ``context`` names a column of an attempt row.
    """
    extra = dict(decision_context or {})
    _check_context(context, set(DECISION_COLUMNS), "decisions")
    _check_context(extra, set(DECISION_COLUMNS), "decisions")
    calls = call_rows(outcome, context)
    decision = {
        **context,
        "decision_id": outcome.decision_id,
        "agent": agent,
        "kind": kind,
        "status": outcome.status,
        "parsed": json.dumps(outcome.parsed) if outcome.parsed is not None else None,
        "n_attempts": len(outcome.attempts),
        **outcome.reply_columns,
        "response": outcome.response,
        "error": outcome.error,
        **extra,
    }
    return DecisionRows(decision, calls)


def call_rows(outcome: DecisionOutcome, context: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ``llm_calls`` rows of one decision: ``context`` (the study's columns) merged with
    each attempt's columns, in attempt order. For calls that make no ``decisions`` row (the
    judge's); :func:`record_decision` returns them with the decision row.

    Raises
    ------
    ValueError
        If ``context`` names a column of an attempt row (``attempt``, ``model``, ``prompt``, …).
    """
    for attempt in outcome.attempts:
        _check_context(context, set(attempt), "llm_calls")
    return [{**context, **attempt} for attempt in outcome.attempts]
