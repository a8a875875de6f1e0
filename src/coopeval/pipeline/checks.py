"""Final checks on the store (docs/protocol/answers.md#re-asks failure policy)."""

from __future__ import annotations

from pathlib import Path

from coopeval.core.duckdb_settings import open_duckdb


class FailedDecisionsError(RuntimeError):
    """More decisions failed than ``max_failed_decisions`` allows; the message names them."""


def check_failed_decisions(store: str | Path, report: str | Path, max_failed: int) -> int:
    """Write a report of failed decisions; raise if there are more than ``max_failed``.

    Returns the number of failed decisions. The report lists cell, mechanism, game, matchup,
    round, seat, agent, kind, attempts and the last validation error of each.

    Raises
    ------
    FailedDecisionsError
        Naming the failed decisions (first 20) and the config key to change.
    """
    con = open_duckdb(store, read_only=True, purpose="failure check")
    try:
        rows = con.execute(
            "SELECT cell_id, mechanism, game, matchup_id, round, seat, agent, kind, n_attempts, error "
            "FROM decisions WHERE status = 'failed' ORDER BY mechanism, game, matchup_id, round, seat"
        ).fetchall()
    finally:
        con.close()
    lines = [f"{len(rows)} failed decisions (max_failed_decisions = {max_failed})"]
    lines += ["\t".join(str(v) for v in row) for row in rows]
    Path(report).parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(lines) + "\n"
    if len(rows) > max_failed:
        shown = "\n  ".join(
            f"{r[1]}/{r[2]} matchup {r[3]} round {r[4]} seat {r[5]} ({r[6]}, {r[7]}): {r[9]}" for r in rows[:20]
        )
        raise FailedDecisionsError(
            f"{len(rows)} decisions failed after all re-asks, more than max_failed_decisions = {max_failed}:\n  {shown}\n"
            "Their attempts are in the store (tables decisions, llm_calls). Raise max_failed_decisions to accept them, "
            "or set retry_failed: 1 to ask exactly those decisions again."
        )
    Path(report).write_text(text)
    return len(rows)
