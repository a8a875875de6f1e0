"""The one recorder: a decision outcome plus a study's own columns become the shared rows.

Every study asks its questions through :class:`~coopeval.agents.maker.DecisionMaker` and
stores each decision as one row of the ``decisions`` table and each of its attempts as one row
of the ``llm_calls`` table (schemas in :mod:`coopeval.core.schemas`). The engine owns the
columns that describe the decision itself (:data:`DECISION_COLUMNS`: id, agent, kind, status,
validated answer, attempts, final reply) and the attempt columns the maker writes; a study
adds only its own context columns (where the decision sits in its game: matchup, round, seat,
sampled action, …) and may not overwrite an engine column. Decisions known only from a
released log (the reference importer's) get their row from :func:`released_decision`.

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


def _answer_json(parsed: Any) -> str | None:
    return json.dumps(parsed) if parsed is not None else None


def _decision_row(context: Mapping[str, Any], decision_context: Mapping[str, Any] | None, **engine: Any) -> dict[str, Any]:
    """Context, then the engine's columns, then the decision-only context (clashes refused)."""
    extra = dict(decision_context or {})
    _check_context(context, set(DECISION_COLUMNS), "decisions")
    _check_context(extra, set(DECISION_COLUMNS), "decisions")
    return {**context, **engine, **extra}


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
    decision = _decision_row(
        context,
        decision_context,
        decision_id=outcome.decision_id,
        agent=agent,
        kind=kind,
        status=outcome.status,
        parsed=_answer_json(outcome.parsed),
        n_attempts=len(outcome.attempts),
        **outcome.reply_columns,
        response=outcome.response,
        error=outcome.error,
    )
    calls = call_rows(outcome, context)
    return DecisionRows(decision, calls)


def released_decision(
    decision_id: str,
    agent: str,
    kind: str,
    context: Mapping[str, Any],
    *,
    parsed: Any = None,
    response: str | None = None,
    decision_context: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``decisions`` row of a valid decision known only from a released log (the reference
    implementation's records, :mod:`coopeval.studies.coopeval.reference.importer`), not asked
    through the maker.

    Parameters
    ----------
    decision_id, agent, kind:
        The engine's identifying columns, as in :func:`record_decision`.
    context, decision_context:
        The study's columns, as in :func:`record_decision`.
    parsed:
        The released answer (stored as JSON text), or None when the decision's answer is in
        ``decision_context`` (a move's ``action``).
    response:
        The released raw reply, or None when the log has none.

    Returns
    -------
    dict
        Context, then ``decision_id``, ``agent``, ``kind``, ``status`` (``"ok"``: a log holds
        only taken decisions), ``parsed`` and ``response``, then ``decision_context``. The
        attempt columns (``n_attempts``, ``finish_reason``, ``truncated``, ``answer_offset``,
        ``reasoning_truncated``, ``error``) are left out (null once conformed): the log records
        no attempts, so the decision has no ``llm_calls`` rows either.

    Raises
    ------
    ValueError
        If ``context`` or ``decision_context`` names an engine column of the ``decisions`` row.
    """
    return _decision_row(
        context,
        decision_context,
        decision_id=decision_id,
        agent=agent,
        kind=kind,
        status="ok",
        parsed=_answer_json(parsed),
        response=response,
    )


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
