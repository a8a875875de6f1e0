"""Small summary frames describing a run, for the report's overview page: decisions and failures
per mechanism, game and kind; calls, tokens and cost per model; judge outcomes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from coopeval.core.schemas import TRANSPORT_COLUMNS

__all__ = [
    "constraint_not_applied",
    "decision_counts",
    "failed_decisions",
    "judge_summary",
    "model_usage",
    "provider_traffic",
    "structured_validity",
]

_COUNT = pl.Int64


def _per_group(frame: pl.DataFrame, keys: Sequence[str], values: Mapping[str, Any], *aggs: pl.Expr) -> pl.DataFrame:
    """``frame`` grouped by ``keys`` (string columns) with the ``aggs`` named as ``values``
    (name → type), sorted by ``keys``; an empty frame of that schema when ``frame`` is empty."""
    schema: dict[str, Any] = {**dict.fromkeys(keys, pl.String), **values}
    if frame.height == 0:
        return pl.DataFrame(schema=schema)
    return frame.group_by(*keys).agg(*aggs).select(list(schema)).sort(*keys)


def decision_counts(decisions: pl.DataFrame) -> pl.DataFrame:
    """Per (mechanism, game, kind): ``decisions``, ``failed`` and ``attempts`` (re-asks included)."""
    return _per_group(
        decisions,
        ("mechanism", "game", "kind"),
        {"decisions": _COUNT, "failed": _COUNT, "attempts": _COUNT},
        pl.len().cast(pl.Int64).alias("decisions"),
        (pl.col("status") == "failed").sum().cast(pl.Int64).alias("failed"),
        pl.col("n_attempts").sum().cast(pl.Int64).alias("attempts"),
    )


def failed_decisions(decisions: pl.DataFrame, limit: int = 50) -> pl.DataFrame:
    """The first ``limit`` failed decisions with where they happened and the last error."""
    columns = [
        "mechanism",
        "game",
        "matchup_id",
        "round",
        "seat",
        "agent",
        "kind",
        "n_attempts",
        "error",
    ]
    failed = decisions.filter(pl.col("status") == "failed")
    return (
        failed.sort("mechanism", "game", "matchup_id", "round", "seat").select(columns).head(limit)
    )


def model_usage(llm_calls: pl.DataFrame) -> pl.DataFrame:
    """Per (model, role): call attempts, cache hits, invalid answers, answers cut off at
    ``max_tokens`` (``truncated``), tokens (reasoning tokens too) and cost.

    ``role`` is ``judge`` for judge calls and ``player`` otherwise. Frames without the
    ``truncated`` / ``reasoning_tokens`` columns (older stores) count 0 for them. ``cost_usd`` prices every
    answer used (cached ones at the price paid when they were first received); ``new_cost_usd``
    only the answers received in this run (cache misses).
    """
    schema = {
        "model": pl.String,
        "role": pl.String,
        "attempts": pl.Int64,
        "cache_hits": pl.Int64,
        "invalid": pl.Int64,
        "truncated": pl.Int64,
        "prompt_tokens": pl.Int64,
        "completion_tokens": pl.Int64,
        "reasoning_tokens": pl.Int64,
        "cost_usd": pl.Float64,
        "new_cost_usd": pl.Float64,
    }
    if llm_calls.height == 0:
        return pl.DataFrame(schema=schema)
    calls = llm_calls.with_columns(
        pl.when(pl.col("kind") == "judge")
        .then(pl.lit("judge"))
        .otherwise(pl.lit("player"))
        .alias("role"),
        pl.col("cost_usd").fill_null(0.0),
        pl.col("cache_hit").fill_null(False),
        *(
            pl.lit(default).alias(name)
            for name, default in (("truncated", False), ("reasoning_tokens", 0))
            if name not in llm_calls.columns
        ),
    )
    return (
        calls.group_by("model", "role")
        .agg(
            pl.len().cast(pl.Int64).alias("attempts"),
            pl.col("cache_hit").sum().cast(pl.Int64).alias("cache_hits"),
            (pl.col("error").fill_null("") != "").sum().cast(pl.Int64).alias("invalid"),
            pl.col("truncated").fill_null(False).sum().cast(pl.Int64).alias("truncated"),
            pl.col("prompt_tokens").fill_null(0).sum().cast(pl.Int64).alias("prompt_tokens"),
            pl.col("completion_tokens")
            .fill_null(0)
            .sum()
            .cast(pl.Int64)
            .alias("completion_tokens"),
            pl.col("reasoning_tokens").fill_null(0).sum().cast(pl.Int64).alias("reasoning_tokens"),
            pl.col("cost_usd").sum().alias("cost_usd"),
            pl.col("cost_usd").filter(~pl.col("cache_hit")).sum().alias("new_cost_usd"),
        )
        .select(list(schema))
        .sort("role", "model")
    )



def provider_traffic(llm_calls: pl.DataFrame) -> pl.DataFrame:
    """Per provider (the model string's prefix: ``openai``, ``ollama_chat``, …), over the calls
    made (cache misses): ``calls``, ``refused`` (attempts refused with HTTP 429), ``retries``
    (failed attempts of any class), ``max_in_flight`` (the most attempts in flight in one job),
    ``cap`` (the configured cap), ``lowest_limit`` (the lowest adaptive limit a call was sent
    under; :mod:`coopeval.agents.adaptive`) and ``note``, which says when the cap is above what
    the provider accepts (any refusal). Every provider that made calls has a row, scripted bots
    excepted; an in-process provider (the embedded model: no cap, one call at a time per job,
    ``in_flight`` not tracked) shows ``max_in_flight``, ``cap`` and ``lowest_limit`` as null.
    Columns absent from older stores count 0."""
    schema = {
        "provider": pl.String,
        "calls": pl.Int64,
        "refused": pl.Int64,
        "retries": pl.Int64,
        "max_in_flight": pl.Int64,
        "cap": pl.Int64,
        "lowest_limit": pl.Int64,
        "note": pl.String,
    }
    if llm_calls.height == 0 or "in_flight_cap" not in llm_calls.columns:
        return pl.DataFrame(schema=schema)
    from coopeval.agents.registry import is_scripted

    scripted = [m for m in llm_calls["model"].unique().to_list() if m is not None and is_scripted(m)]
    made = llm_calls.filter(~pl.col("cache_hit").fill_null(False) & ~pl.col("model").is_in(scripted))
    if made.height == 0:
        return pl.DataFrame(schema=schema)
    frame = (
        made.with_columns(pl.col("model").str.split("/").list.first().alias("provider"), *(pl.col(c).fill_null(0) for c in TRANSPORT_COLUMNS))
        .group_by("provider")
        .agg(
            pl.len().cast(pl.Int64).alias("calls"),
            pl.col("rate_limited").sum().cast(pl.Int64).alias("refused"),
            pl.col("transport_retries").sum().cast(pl.Int64).alias("retries"),
            _tracked("in_flight").max().cast(pl.Int64).alias("max_in_flight"),
            _tracked("in_flight_cap").max().cast(pl.Int64).alias("cap"),
            _tracked("in_flight_limit").min().cast(pl.Int64).alias("lowest_limit"),
        )
    )
    note = (
        pl.when(pl.col("refused") > 0)
        .then(
            pl.format(
                "cap {} is above what the provider accepts: {} requests refused (429); the adaptive limit came down to {}",
                "cap",
                "refused",
                "lowest_limit",
            )
        )
        .otherwise(pl.lit(""))
        .alias("note")
    )
    return frame.with_columns(note).select(list(schema)).sort("provider")


def _tracked(column: str) -> pl.Expr:
    """``column`` where the call went through an in-flight limit (cap > 0), else null."""
    return pl.when(pl.col("in_flight_cap") > 0).then(pl.col(column))


def judge_summary(judgements: pl.DataFrame) -> pl.DataFrame:
    """Per (judge model, mechanism): judged decisions, failed judgements, mean confidence."""
    return _per_group(
        judgements,
        ("judge_model", "mechanism"),
        {"judged": _COUNT, "failed": _COUNT, "mean_confidence": pl.Float64},
        pl.len().cast(pl.Int64).alias("judged"),
        (pl.col("status") == "failed").sum().cast(pl.Int64).alias("failed"),
        pl.col("confidence").filter(pl.col("status") == "ok").mean().alias("mean_confidence"),
    )


def _with_structured(llm_calls: pl.DataFrame) -> pl.DataFrame:
    """``llm_calls`` with ``structured_output`` / ``structured_field`` present (an older store
    lacks the field: ``not recorded``, never counted as not applied)."""
    defaults = {"structured_output": "none", "structured_field": "not recorded"}
    return llm_calls.with_columns(
        *(
            (pl.col(name).fill_null(default) if name in llm_calls.columns else pl.lit(default)).alias(name)
            for name, default in defaults.items()
        )
    )


def structured_validity(llm_calls: pl.DataFrame) -> pl.DataFrame:
    """Per (decision ``kind``, ``structured_output`` mode, ``structured_field``): first attempts
    (``attempt`` 0), how many were valid (empty ``error``) and the share ``valid_share``
    (docs/structured-outputs.md)."""
    first = _with_structured(llm_calls)
    if first.height:
        first = first.filter(pl.col("attempt") == 0)
    return _per_group(
        first,
        ("kind", "structured_output", "structured_field"),
        {"first_attempts": _COUNT, "valid": _COUNT, "valid_share": pl.Float64},
        pl.len().cast(pl.Int64).alias("first_attempts"),
        (pl.col("error").fill_null("") == "").sum().cast(pl.Int64).alias("valid"),
        (pl.col("error").fill_null("") == "").mean().cast(pl.Float64).alias("valid_share"),
    )


def constraint_not_applied(llm_calls: pl.DataFrame) -> int:
    """Calls whose agent asked for a constraint (``structured_output`` not ``none``) that no
    request field carried (``structured_field`` ``none``): ``auto`` that found none, or a
    free-text format under ``json_schema``."""
    if llm_calls.height == 0:
        return 0
    calls = _with_structured(llm_calls)
    return int(calls.filter((pl.col("structured_output") != "none") & (pl.col("structured_field") == "none")).height)
