"""Tables of the evolution study (docs/protocol/evolution.md#storage; issue 11 §7).

``TABLES`` maps each table to its polars schema; importing this module registers them in
:data:`coopeval.core.schemas.SCHEMAS` (so ``conform``, ``empty_frame`` and the store know them). Every row starts with :data:`BASE_COLUMNS`. The calls
themselves go to the shared ``llm_calls`` and ``decisions`` tables, with ``study`` =
``evolution``, ``mechanism`` = ``evolution/<protocol>`` and ``game`` = ``donor_game``
(:attr:`~coopeval.studies.evolution.calls.RunContext.shared_base`; why these values stay:
docs/outputs.md, the evolution paragraph).

Units: resources, amounts and scores in units; percentages 0–100; generations, games and rounds
1-based (``round`` within a game); ``pair`` is the 0-based A-agent index of docs/protocol/evolution.md#schedule.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from coopeval.core.schemas import register_tables

BASE_COLUMNS: dict[str, pl.DataType] = {
    "cell_id": pl.String(),
    "source": pl.String(),  # "ours"
    "run": pl.String(),  # replicate label, "r1" …
    "protocol": pl.String(),  # "vh" | "horibe"
    "model": pl.String(),  # agent label (model string unless labelled)
    "variant": pl.String(),  # variant name, "default" …
}

TABLES: dict[str, dict[str, pl.DataType]] = {
    # One row per donation decision, in evolution games and in invasion-test games.
    "evo_events": {
        **BASE_COLUMNS,
        "generation": pl.Int64(),
        "context": pl.String(),  # "evolution" | "invasion"
        "strategy_id": pl.String(),  # invasion: the tested strategy's agent id; else null
        "game": pl.Int64(),  # 1 | 2
        "round": pl.Int64(),  # 1..N
        "pair": pl.Int64(),
        "donor": pl.String(),  # name shown to co-players
        "donor_id": pl.String(),  # agent id ("3_5"; "free-rider" in invasion tests)
        "recipient": pl.String(),
        "recipient_id": pl.String(),
        "donor_half": pl.String(),  # "A" | "B"
        "action": pl.String(),  # donate | punish | refuse | invalid
        "raw_answer": pl.String(),  # the final attempt's text after "Answer:" (the whole reply without one)
        "stated_value": pl.Float64(),  # the number read from it (units or percent); null if failed
        "amount": pl.Float64(),  # units given or spent
        "percentage": pl.Float64(),  # amount as % of the donor's pre-decision resources
        "donor_resources_before": pl.Float64(),
        "recipient_resources_before": pl.Float64(),
        "donor_resources_after": pl.Float64(),
        "recipient_resources_after": pl.Float64(),
        "trace_shown": pl.String(),  # the rendered trace the donor saw
        "donor_reputation": pl.Float64(),  # the V&H reference's unused score after this event (0-1), logged only
        "justification": pl.String(),
        "parse_status": pl.String(),  # "ok" | the last rejection's code: invalid, ambiguous, range, truncated, …
        "attempts": pl.Int64(),
        "failed": pl.Boolean(),
        "error": pl.String(),
        "decision_id": pl.String(),
        "temperature": pl.Float64(),  # sampling temperature sent (null for bots)
    },
    # One row per agent per generation (survivors appear again with survived = true).
    "evo_strategies": {
        **BASE_COLUMNS,
        "generation": pl.Int64(),
        "agent_id": pl.String(),
        "born_generation": pl.Int64(),
        "parent_id": pl.String(),  # Horibe: the roulette parent; V&H: null
        "parent_rank": pl.Int64(),  # 1 = best of the previous generation
        "text": pl.String(),
        "justification": pl.String(),
        "word_count": pl.Int64(),
        "truncated": pl.Boolean(),  # over the word limit after one re-ask, cut to the limit
        "survived": pl.Boolean(),  # V&H: kept unchanged from the previous generation
        "status": pl.String(),  # "ok" | "failed" (no usable strategy text)
        "attempts": pl.Int64(),
        "temperature": pl.Float64(),
        "display_name": pl.String(),
        "half": pl.String(),
        "game1_resources": pl.Float64(),
        "game2_resources": pl.Float64(),
        "score": pl.Float64(),  # selection score (sum of both games, or 2 × game 2 in compat)
        "rank": pl.Int64(),  # 1 = best: score descending, ties in the order of the seeded shuffle
        "tiebreak": pl.Int64(),  # the agent's place in that seeded shuffle (0-based); truncation keeps ranks 1..N/2
        "selection_fallback": pl.Boolean(),  # Horibe: parent drawn uniformly because every fitness was 0 (Σ f = 0)
    },
    # One row per generation: the population metrics of docs/protocol/evolution.md#vh-metrics.
    "evo_generations": {
        **BASE_COLUMNS,
        "generation": pl.Int64(),
        "mean_final_game1": pl.Float64(),
        "mean_final_game2": pl.Float64(),
        "mean_final": pl.Float64(),  # mean of the two games' mean final resources
        "donation_fraction": pl.Float64(),  # Σ donated / Σ donor pre-decision resources
        "punish_frequency": pl.Float64(),  # share of encounters with a punish action
        "refuse_frequency": pl.Float64(),
        "failed_decisions": pl.Int64(),
        "n_events": pl.Int64(),
    },
    # docs/protocol/evolution.md#invasion-test: N − 1 copies of one strategy + the always-zero bot, one generation, no evolution.
    "invasion_tests": {
        **BASE_COLUMNS,
        "generation": pl.Int64(),
        "strategy_id": pl.String(),
        "bot_half": pl.String(),  # "A" | "B"
        "bot_position": pl.Int64(),  # 0-based index in the shuffled population
        "evolved_mean_score": pl.Float64(),  # mean over the copies of game 1 + game 2 finals
        "bot_score": pl.Float64(),
        "robust": pl.Boolean(),  # evolved_mean_score > bot_score
        "n_copies": pl.Int64(),
        "failed_decisions": pl.Int64(),
    },
    # docs/protocol/evolution.md#strategy-matrix: one row per probe cell and sample.
    "strategy_matrix": {
        **BASE_COLUMNS,
        "generation": pl.Int64(),
        "strategy_id": pl.String(),
        "i": pl.Int64(),  # row: x_B = 10·i %
        "j": pl.Int64(),  # column: x_A = 10·j %
        "sample": pl.Int64(),
        "percentage": pl.Float64(),  # donation as % of the donor's resources; null if failed
        "raw_answer": pl.String(),  # the final attempt's text after "Answer:"
        "parse_status": pl.String(),  # "ok" | the last rejection's code
        "attempts": pl.Int64(),
        "decision_id": pl.String(),
    },
    # docs/protocol/evolution.md#matrix-features: one row per analysed strategy.
    "matrix_features": {
        **BASE_COLUMNS,
        "generation": pl.Int64(),
        "strategy_id": pl.String(),
        "left": pl.Float64(),
        "right": pl.Float64(),
        "oes": pl.Float64(),
        "alpha": pl.Float64(),
        "beta": pl.Float64(),
        "gamma": pl.Float64(),
        "delta": pl.Float64(),
        "l1": pl.Boolean(),
        "beta_minus_alpha": pl.Float64(),
        "entropy": pl.Float64(),
        "rho_mono": pl.Float64(),
        "n_constant_rows": pl.Int64(),
        "mean_cooperation": pl.Float64(),
        "n_failed_cells": pl.Int64(),  # cells without a valid sample (features null if > 0)
    },
}

SHARED_TABLES = ("llm_calls", "decisions")

register_tables(TABLES)


def frame(table: str, rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Rows → a frame with exactly the columns and types of ``table`` (missing → null).

    Raises
    ------
    KeyError
        An unknown table (evolution or shared).
    """
    if table in TABLES:
        schema = TABLES[table]
    else:
        from coopeval.core.schemas import SCHEMAS

        schema = SCHEMAS[table]
    data = list(rows)
    if not data:
        return pl.DataFrame(schema=schema)
    return pl.DataFrame(
        {name: [row.get(name) for row in data] for name in schema}, schema=schema, strict=False
    )


@dataclass
class StepRecords:
    """Rows of one generation step, per table name."""

    tables: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def add(self, table: str, row: dict[str, Any]) -> None:
        """Append ``row`` to ``table``'s rows."""
        self.tables.setdefault(table, []).append(row)

    def sort(self) -> None:
        """Put rows in an order independent of which concurrent call finished first, so a
        rerun (or a resumed run) gives identical tables."""
        for table, rows in self.tables.items():
            key = _SORT_KEYS.get(table)
            if key is not None:
                rows.sort(key=key)


def _none_first(value: Any) -> tuple[bool, Any]:
    return (value is not None, value if value is not None else "")


_SORT_KEYS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "llm_calls": lambda r: (r["decision_id"], r["attempt"]),
    "decisions": lambda r: r["decision_id"],
    "evo_events": lambda r: (r["context"], _none_first(r["strategy_id"]), r["game"], r["round"], r["pair"]),
    "invasion_tests": lambda r: r["strategy_id"],
    "strategy_matrix": lambda r: (r["strategy_id"], r["i"], r["j"], r["sample"]),
    "matrix_features": lambda r: r["strategy_id"],
}
