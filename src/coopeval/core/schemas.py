"""Record schemas of the Parquet files every stage writes and of the DuckDB store's tables.

One schema per table, shared by our own runs and by the import of the authors' released data
(``source`` = ``"ours"`` or ``"reference"``), so the same evaluation and table code serves both.
Identifiers: ``mechanism`` is the reference's type name (``NoMechanism``, ``Repetition``,
``ReputationFirstOrder``, ``Reputation``, ``Mediation``, ``Contracting``); ``game`` the game's
type name (``PrisonersDilemma`` …); ``agent`` the agent type string ``model(style)``; seats are
1-based; ``run`` names the replicate (``"r1"`` for ours, the run folder name for imports).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

CELL_COLUMNS: dict[str, pl.DataType] = {
    "cell_id": pl.String(),  # content hash of the cell spec (ours) or "<run>/<experiment>" (reference)
    "source": pl.String(),  # "ours" | "reference"
    "run": pl.String(),
    "mechanism": pl.String(),
    "game": pl.String(),
}

TRANSPORT_COLUMNS: tuple[str, ...] = ("rate_limited", "transport_retries", "in_flight", "in_flight_limit", "in_flight_cap")
"""``llm_calls`` columns describing how a call's transport went (429s, retries, calls in flight;
:mod:`coopeval.agents.adaptive`): they depend on timing, like ``latency_s``, so comparisons of
two runs leave them out."""

SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    # One row per played matchup (for reputation: one row per seated agent's 15-round history).
    "matchups": {
        **CELL_COLUMNS,
        "matchup_id": pl.String(),
        "agents": pl.List(pl.String()),  # seat order
        "n_rounds": pl.Int64(),
        "discount": pl.Float64(),
        "status": pl.String(),  # "complete" | "failed"
    },
    # One row per (matchup, seat): the δ-weighted score (docs/protocol/tournament.md#delta-weighted-score).
    "scores": {
        **CELL_COLUMNS,
        "matchup_id": pl.String(),
        "seat": pl.Int64(),
        "agent": pl.String(),
        "score": pl.Float64(),
        "status": pl.String(),
    },
    # One row per decision (action, design, vote, sign).
    "decisions": {
        **CELL_COLUMNS,
        "study": pl.String(),  # the study that made the decision: "coopeval", "gossip", …
        "decision_id": pl.String(),
        "matchup_id": pl.String(),
        "match_id": pl.String(),  # who played whom this round (reputation: "r<round>m<i>"); else = matchup_id
        "round": pl.Int64(),  # 1-based; 0 for decisions outside rounds (designs)
        "seat": pl.Int64(),
        "agent": pl.String(),
        "kind": pl.String(),  # DecisionKind value
        "status": pl.String(),  # "ok" | "failed"
        "parsed": pl.String(),  # JSON of the validated answer (distribution, design, vote, …)
        "draw": pl.Float64(),  # the uniform draw in [0, 1) used to sample the action
        "action": pl.Int64(),  # sampled base-action index (after mediation resolution)
        "action_token": pl.String(),
        "points": pl.Float64(),  # points received this round (post-contract)
        "base_points": pl.Float64(),  # base-game points of the resolved profile
        "mediated": pl.Boolean(),
        "n_attempts": pl.Int64(),
        "response": pl.String(),  # raw text of the final attempt
        "error": pl.String(),  # validation error of the final attempt, if failed
        "finish_reason": pl.String(),  # provider's finish reason of the final attempt ("stop", "length", …)
        "truncated": pl.Boolean(),  # the final attempt was cut off at max_tokens
        "answer_offset": pl.Int64(),  # character offset of the JSON object used in response (null: text format / failed)
        "reasoning_truncated": pl.Boolean(),  # the CoT reasoning filled the embedded model's cap (issue 13, 12(b))
    },
    # One row per call attempt (LLM or bot).
    "llm_calls": {
        **CELL_COLUMNS,
        "study": pl.String(),  # the study that made the call: "coopeval", "gossip", …
        "decision_id": pl.String(),
        "matchup_id": pl.String(),
        "round": pl.Int64(),
        "seat": pl.Int64(),
        "attempt": pl.Int64(),  # 0-based
        "agent": pl.String(),
        "model": pl.String(),
        "kind": pl.String(),
        "cache_key": pl.String(),
        "cache_hit": pl.Boolean(),
        "prompt": pl.String(),  # JSON of the message list
        "response": pl.String(),
        "error": pl.String(),  # validator error, empty if valid
        "prompt_tokens": pl.Int64(),
        "cached_prompt_tokens": pl.Int64(),  # of prompt_tokens, read from the provider's prompt cache (not evaluated)
        "completion_tokens": pl.Int64(),
        "latency_s": pl.Float64(),
        "cost_usd": pl.Float64(),  # reasoning tokens billed outside completion_tokens included
        "model_resolved": pl.String(),
        "finish_reason": pl.String(),  # provider's: "stop", "length", … ("" if none given)
        "truncated": pl.Boolean(),  # cut off at max_tokens (finish_reason "length")
        "max_tokens": pl.Int64(),  # completion budget sent with the call (0 = none)
        "reasoning_tokens": pl.Int64(),  # provider-reported reasoning tokens (inside or outside completion)
        "reasoning": pl.String(),  # provider's separate reasoning text; never used as the answer
        "structured_output": pl.String(),  # none | json_schema | grammar (the embedded model: grammar) | auto (found none)
        "structured_field": pl.String(),  # request field of the constraint: response_format | grammar | structured_outputs.grammar | guided_grammar | none
        # transport of a call made (0 for cache hits, bots, the embedded model): coopeval.agents.adaptive
        "rate_limited": pl.Int64(),  # attempts refused with HTTP 429 before this answer
        "transport_retries": pl.Int64(),  # failed attempts of any class before this answer
        "in_flight": pl.Int64(),  # most of its provider's attempts in flight in the job when one was sent
        "in_flight_limit": pl.Int64(),  # the adaptive limit then
        "in_flight_cap": pl.Int64(),  # the configured cap (the job's max_concurrency)
    },
    # Mediator and contract designs (one per seated agent per cell).
    "designs": {
        **CELL_COLUMNS,
        "designer": pl.String(),  # seated name "<agent>#P<seat>"
        "agent": pl.String(),
        "seat": pl.Int64(),
        "design_kind": pl.String(),  # "mediator" | "contract"
        "design": pl.String(),  # JSON: {"1": "A0", …} or {"A0": int, …}
        "status": pl.String(),
    },
    # Approval votes, signatures and the selected design per matchup.
    "votes": {
        **CELL_COLUMNS,
        "matchup_id": pl.String(),
        "voter_seat": pl.Int64(),
        "agent": pl.String(),
        "option": pl.Int64(),  # 1-based design index in seat order
        "approve": pl.Boolean(),
    },
    # Per Mediation/Contracting matchup: the design chosen by approval vote and (Contracting)
    # the signatures and whether the contract is active.
    "selections": {
        **CELL_COLUMNS,
        "matchup_id": pl.String(),
        "design_kind": pl.String(),  # "mediator" | "contract"
        "selected_index": pl.Int64(),  # 1-based design index in seat order
        "selected_designer": pl.String(),  # seated name "<agent>#P<seat>"
        "all_signed": pl.Boolean(),  # Contracting only; null for Mediation
        "design": pl.String(),  # JSON of the selected design
        "details": pl.String(),  # JSON: approvals per option, tied options, signatures, rejecting seats
    },
    # NS / WD of every valid submitted design against the base game (docs/protocol/design-checks.md#ns-wd).
    "design_quality": {
        **CELL_COLUMNS,
        "designer": pl.String(),
        "agent": pl.String(),
        "seat": pl.Int64(),
        "design_kind": pl.String(),
        "design": pl.String(),
        "ns": pl.Boolean(),
        "wd": pl.Boolean(),
    },
    # Evaluation results, long format.
    "metrics": {
        **CELL_COLUMNS,
        "agent": pl.String(),  # agent type, or "LLM Average"
        "metric": pl.String(),  # Mean | Fitness | FinalPopulation | PopulationFitness | DR | DR_rank
        "value": pl.Float64(),
        "rule": pl.String(),  # e.g. "strictest" / "reference-vertex" / "released" for DR; "" otherwise
    },
    # Replicator trajectory of a cell: one row per step and agent.
    "trajectories": {
        "step": pl.Int64(),
        "agent": pl.String(),
        "share": pl.Float64(),
        "cell_id": pl.String(),
        "mechanism": pl.String(),
        "game": pl.String(),
        "run": pl.String(),
    },
    # One row per judged action decision (docs/protocol/design-checks.md#judge).
        "judgements": {
        **CELL_COLUMNS,
        "decision_id": pl.String(),  # the judged action decision
        "matchup_id": pl.String(),
        "round": pl.Int64(),
        "seat": pl.Int64(),
        "agent": pl.String(),  # the judged agent
        "judge_decision_id": pl.String(),  # decision_id of the judge's rows in llm_calls
        "status": pl.String(),  # "ok" | "failed"
        "labels": pl.List(pl.String()),  # canonical labels in taxonomy order; empty if failed
        "confidence": pl.Float64(),
        "reasoning": pl.String(),
        "n_attempts": pl.Int64(),
        "judge_model": pl.String(),  # the judge agent's name, e.g. local/smollm2-135m(IO)
        "error": pl.String(),  # validation error of the last attempt, if failed
        "reasoning_truncated": pl.Boolean(),  # the judged text's CoT reasoning filled the embedded model's cap (marked, not skipped)
    },
    # NS/WD pooled per (source, mechanism, game, agent) (docs/protocol/design-checks.md#ns-wd, docs/protocol/tables.md step 6).
        "design_quality_summary": {
        "source": pl.String(),
        "mechanism": pl.String(),
        "game": pl.String(),
        "agent": pl.String(),
        "design_kind": pl.String(),
        "n_runs": pl.Int64(),
        "n_designs": pl.Int64(),  # valid designs evaluated (pooled over runs and seats)
        "n_failed": pl.Int64(),  # design decisions that failed (no design to evaluate)
        "ns_count": pl.Int64(),
        "wd_count": pl.Int64(),
        "ns_rate": pl.Float64(),
        "wd_rate": pl.Float64(),
        "ns_se": pl.Float64(),  # binomial s.e. √(p(1 − p)/n)
        "wd_se": pl.Float64(),
    },
}


def register_tables(tables: dict[str, dict[str, pl.DataType]]) -> None:
    """Add a study's record tables to :data:`SCHEMAS` (the one registry the store reads).

    Raises
    ------
    ValueError
        If a name is already registered with a different schema.
    """
    for name, schema in tables.items():
        if name in SCHEMAS and SCHEMAS[name] != schema:
            raise ValueError(f"table {name!r} is already registered with another schema")
        SCHEMAS[name] = dict(schema)


@dataclass(frozen=True)
class StoreView:
    """A store view: the rows of ``table`` whose ``where[0]`` column equals ``where[1]``, with
    its columns renamed (``columns``: view column → table column, in the view's order)."""

    table: str
    columns: Mapping[str, str]
    where: tuple[str, str]

    def sql(self, name: str) -> str:
        """The DuckDB ``CREATE VIEW`` statement of this view under ``name``."""
        select = ", ".join(f'"{source}" AS "{target}"' for target, source in self.columns.items())
        column, value = self.where
        literal = value.replace("'", "''")
        return f'CREATE VIEW "{name}" AS SELECT {select} FROM "{self.table}" WHERE "{column}" = \'{literal}\''


VIEWS: dict[str, StoreView] = {}
"""Store view name → its definition; the store creates every view after its tables."""


def register_views(views: Mapping[str, StoreView]) -> None:
    """Add a study's store views (after its tables, :func:`register_tables`).

    Raises
    ------
    ValueError
        An unregistered table, a column the table lacks, or a name already registered with
        another definition.
    """
    for name, view in views.items():
        schema = SCHEMAS.get(view.table)
        if schema is None:
            raise ValueError(f"view {name!r}: table {view.table!r} is not registered; register it with register_tables first")
        missing = [c for c in (*view.columns.values(), view.where[0]) if c not in schema]
        if missing:
            raise ValueError(f"view {name!r}: table {view.table!r} has no column(s) {', '.join(missing)}")
        if name in VIEWS and VIEWS[name] != view:
            raise ValueError(f"view {name!r} is already registered with another definition")
        VIEWS[name] = view


def empty_frame(table: str) -> pl.DataFrame:
    """An empty DataFrame with the schema of ``table``.

    Raises
    ------
    KeyError
        If ``table`` is not one of :data:`SCHEMAS`.
    """
    return pl.DataFrame(schema=SCHEMAS[table])


def conform(table: str, frame: pl.DataFrame) -> pl.DataFrame:
    """Select and cast ``frame`` to the schema of ``table`` (missing columns become nulls).

    Raises
    ------
    KeyError
        If ``table`` is unknown.
    """
    schema = SCHEMAS[table]
    if frame.height == 0:
        return empty_frame(table)
    columns = [
        (pl.col(name) if name in frame.columns else pl.lit(None)).cast(dtype).alias(name)
        for name, dtype in schema.items()
    ]
    return frame.select(columns)
