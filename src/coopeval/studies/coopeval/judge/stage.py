"""The judge stage: label the reasoning of selected decisions and write two Parquet files.

One job judges every selected decision of the run (:mod:`coopeval.studies.coopeval.judge.selection`) with the
configured judge model, inside one ``asyncio.run`` and through the same decision loop as every
other call (:class:`coopeval.agents.maker.DecisionMaker`): cached, re-asked on invalid
answers (an unknown label is invalid, docs/protocol/design-checks.md#what-is-judged "Our contract"), and recorded as a failed
judgement after the last attempt, never defaulted. Outputs:

* ``judgements.parquet``: one row per judged decision (:data:`JUDGEMENT_SCHEMA`), stored as
  table ``judgements``;
* ``llm_calls.parquet``: one row per judge call attempt (``kind = "judge"``), appended to the
  store's ``llm_calls`` table next to the players' calls.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.agents.maker import CallStats, DecisionMaker
from coopeval.agents.progress import Progress
from coopeval.agents.protocol import Agent
from coopeval.agents.recorder import call_rows
from coopeval.agents.registry import make_agent, missing_key_error
from coopeval.cache.cell_lock import cell_lock
from coopeval.cache.response_cache import ResponseCache
from coopeval.core.errors import ConfigError
from coopeval.core.io import write_parquet_atomic
from coopeval.core.prompts import PromptLibrary
from coopeval.core.rng import seed_int_for
from coopeval.core.schemas import CELL_COLUMNS, SCHEMAS, conform, empty_frame
from coopeval.decisions.taxonomy import Taxonomy, load_taxonomy
from coopeval.games import get_game
from coopeval.studies.coopeval import STUDY_NAME
from coopeval.studies.coopeval.judge.prompt import JudgePrompt
from coopeval.studies.coopeval.judge.selection import (
    cot_agent_names,
    eligible_decisions,
    sample_decisions,
)
from coopeval.studies.coopeval.play import style_instructions

__all__ = ["JUDGEMENT_SCHEMA", "judge_decisions", "run_judge", "select_decisions"]

JUDGEMENT_SCHEMA: dict[str, pl.DataType] = SCHEMAS["judgements"]
"""Columns of ``judgements.parquet`` (store table ``judgements``)."""


def _judgement_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    if not rows:
        return pl.DataFrame(schema=JUDGEMENT_SCHEMA)
    return pl.DataFrame(rows, schema=JUDGEMENT_SCHEMA)


async def _judge_all(
    selected: pl.DataFrame, judge: Agent, maker: DecisionMaker, prompt: JudgePrompt, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    fmt = prompt.taxonomy.answer_format()
    titles: dict[str, str] = {}
    progress = Progress("judge", selected.height, maker, unit="judged", interval=5.0)

    async def one(row: Mapping[str, Any]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        game = row["game"]
        if game not in titles:
            titles[game] = get_game(game).title
        body = prompt.render(titles[game], row["response"])
        position = {"kind": "judge", "judged": row["decision_id"]}
        outcome = await maker.decide(
            judge, body, fmt, position, seed=seed_int_for(seed, "judge", row["decision_id"])
        )
        ids = {c: row[c] for c in CELL_COLUMNS}
        parsed = outcome.parsed or {}
        judgement = {
            **ids,
            "decision_id": row["decision_id"],
            "matchup_id": row.get("matchup_id"),
            "round": row.get("round"),
            "seat": row.get("seat"),
            "agent": row["agent"],
            "judge_decision_id": outcome.decision_id,
            "status": outcome.status,
            "labels": list(parsed.get("labels", [])),
            "confidence": parsed.get("confidence"),
            "reasoning": parsed.get("reasoning"),
            "n_attempts": len(outcome.attempts),
            "judge_model": judge.name,
            "error": outcome.error,
            "reasoning_truncated": row.get("reasoning_truncated"),
        }
        context = {**ids, "study": STUDY_NAME, "matchup_id": row.get("matchup_id"), "round": row.get("round"), "seat": row.get("seat")}
        calls = call_rows(outcome, context)
        progress.step()
        return judgement, calls

    results = await asyncio.gather(*(one(row) for row in selected.iter_rows(named=True)))
    judgements = [r[0] for r in results]
    calls = [c for r in results for c in r[1]]
    return judgements, calls


def judge_decisions(
    selected: pl.DataFrame,
    judge: Agent,
    maker: DecisionMaker,
    prompt: JudgePrompt,
    seed: int,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Judge every row of ``selected`` (decisions rows) and return (judgements, llm_calls).

    Runs one ``asyncio.run`` for all calls (docs/protocol/engineering.md#litellm); rows come back in the order
    of ``selected``.
    """
    if selected.height == 0:
        return _judgement_frame([]), empty_frame("llm_calls")
    judgements, calls = asyncio.run(_judge_all(selected, judge, maker, prompt, seed))
    frame = pl.DataFrame(calls, infer_schema_length=None)
    return _judgement_frame(judgements), conform("llm_calls", frame)


def _read_decisions(paths: Sequence[str | Path]) -> pl.DataFrame:
    frames = [f for f in (pl.read_parquet(p) for p in paths) if f.height]
    return pl.concat(frames, how="diagonal_relaxed") if frames else empty_frame("decisions")


def _write_parquet_atomic(frame: pl.DataFrame, path: str | Path) -> None:
    write_parquet_atomic(frame, path)


def select_decisions(
    decisions: pl.DataFrame,
    judge_config: Mapping[str, Any],
    agents: Sequence[Mapping[str, Any]],
    seed: int,
    games: Sequence[str] | None = None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(eligible, selected) rows of ``decisions`` for the judge: the eligible decisions
    (:func:`~coopeval.studies.coopeval.judge.selection.eligible_decisions` of the CoT agents,
    ``min_chars``, the run's ``games`` intersected with ``include_games``) and the seeded sample
    of ``sample_size`` of them (0: all). Used by :func:`run_judge` and by ``coopeval estimate``."""
    include = judge_config.get("include_games")
    wanted = list(games) if games is not None else None
    if include is not None:
        wanted = [g for g in (wanted if wanted is not None else include) if g in include]
    eligible = eligible_decisions(
        decisions,
        cot_agent_names(agents),
        min_chars=int(judge_config.get("min_chars", 80)),
        games=wanted,
    )
    return eligible, sample_decisions(eligible, int(judge_config.get("sample_size", 0)), seed)


def run_judge(
    decision_paths: Sequence[str | Path],
    outputs: Mapping[str, str | Path],
    judge_config: Mapping[str, Any],
    agents: Sequence[Mapping[str, Any]],
    seed: int,
    cache_dir: str,
    prompts_dir: str | Path,
    games: Sequence[str] | None = None,
    max_concurrency: int = 8,
    max_usd: float = 0.0,
    retry_failed: int = 0,
    judge_agent: Agent | None = None,
) -> tuple[int, CallStats]:
    """Snakemake entry point: select, sample and judge, then write ``outputs["judgements"]`` and
    ``outputs["llm_calls"]``.

    Parameters
    ----------
    decision_paths:
        The play stage's ``decisions.parquet`` files.
    judge_config:
        The config's ``judge`` object (model, style, params, sample_size, taxonomy, min_chars,
        include_games).
    agents:
        The config's agent roster (to know which agents are CoT).
    games:
        The run's games (config keys); intersected with ``judge_config["include_games"]``.
    judge_agent:
        An agent to use instead of building one from ``judge_config`` (tests).

    Returns
    -------
    (number of judged decisions, call counters)

    Raises
    ------
    ConfigError
        The judge model's API key is not set (before any call; the variable named).
    """
    taxonomy: Taxonomy = load_taxonomy(judge_config.get("taxonomy") or None)
    prompt = JudgePrompt(taxonomy, Path(prompts_dir) / "judge" / "judge.txt")
    eligible, selected = select_decisions(_read_decisions(decision_paths), judge_config, agents, seed, games)
    print(
        f"[judge] {eligible.height} eligible decisions (CoT, action, ok, >= {judge_config.get('min_chars', 80)} chars); "
        f"judging {selected.height} with {judge_config.get('model')}",
        file=sys.stderr,
        flush=True,
    )
    stats = CallStats()
    if selected.height:
        if judge_agent is None:
            if (missing := missing_key_error([str(judge_config["model"])])) is not None:
                raise ConfigError(f"[judge] {missing}")
            judge_agent = make_agent(
                {
                    "model": judge_config["model"],
                    "style": judge_config.get("style", "IO"),
                    "params": judge_config.get("params") or {},
                }
            )
        # one executor per shard (issue 25 kind 4): a second one waits, then replays from the cache
        with cell_lock(cache_dir, f"judge-{outputs['judgements']}"):
            cache = ResponseCache(cache_dir)
            try:
                maker = DecisionMaker(
                    cache,
                    style_instructions(PromptLibrary(prompts_dir)),
                    max_concurrency=max_concurrency,
                    retry_failed=retry_failed,
                    max_usd=max_usd,
                )
                judgements, calls = judge_decisions(selected, judge_agent, maker, prompt, seed)
                stats = maker.stats
            finally:
                cache.close()
    else:
        judgements, calls = _judgement_frame([]), empty_frame("llm_calls")
    _write_parquet_atomic(judgements, outputs["judgements"])
    _write_parquet_atomic(calls, outputs["llm_calls"])
    failed = judgements.filter(pl.col("status") == "failed").height
    print(
        f"[judge] done: {judgements.height} judgements ({failed} failed), {stats.calls_made} model calls, "
        f"{stats.cache_hits} cache hits, ${stats.cost_usd:.4f}",
        file=sys.stderr,
        flush=True,
    )
    return judgements.height, stats
