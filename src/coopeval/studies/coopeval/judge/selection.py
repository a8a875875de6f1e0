"""What the judge labels (docs/protocol/design-checks.md#what-is-judged "What is judged").

Only **action** decisions are judged, and only their final, successfully parsed response: failed
decisions, designs, votes and signatures never are. Under Mediation and Contracting this is the
last decision point of a matchup (the action, after design, vote and signature). Further
filters: CoT agents only (IO answers carry no reasoning), responses of at least ``min_chars``
characters after trimming (80 in the paper), and the configured games.

Answers whose CoT reasoning filled the embedded model's cap (``reasoning_truncated``, issue 13,
12(b)) are **marked, not skipped**: they stay eligible (skipping them would leave the default
run's judge almost nothing, since SmolLM2 usually writes up to the cap) and their judgement row
carries ``reasoning_truncated = true``, so an analysis can drop them with
``WHERE NOT reasoning_truncated``. The grammar ends such reasoning with a sentence terminator,
but its last sentence may be incomplete.

:func:`sample_decisions` then draws a seeded sample: each eligible decision gets a uniform key
from its own named stream ``("judge", "sample", decision_id)`` and the ``sample_size`` smallest
keys are judged. The sample is therefore deterministic, independent of row order, and nearly
stable when decisions are added (a new decision only enters if its key is small enough), so
cached judgements keep being reused.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import polars as pl

from coopeval.agents.registry import agent_name, agent_style
from coopeval.core.rng import rng_for
from coopeval.games import get_game

__all__ = ["DEFAULT_MIN_CHARS", "cot_agent_names", "eligible_decisions", "judge_has_work", "sample_decisions"]

DEFAULT_MIN_CHARS = 80


def cot_agent_names(agents: Iterable[Mapping[str, Any]]) -> list[str]:
    """Display names (``label-or-model(CoT)``) of the config's CoT language-model agents."""
    return [agent_name(a) for a in agents if agent_style(a) == "CoT"]


def judge_has_work(config: Mapping[str, Any]) -> bool:
    """Whether the config's roster has a CoT language-model agent for the judge to label."""
    return bool(cot_agent_names(config["agents"]))


def eligible_decisions(
    decisions: pl.DataFrame,
    cot_agents: Sequence[str],
    min_chars: int = DEFAULT_MIN_CHARS,
    games: Sequence[str] | None = None,
) -> pl.DataFrame:
    """The decisions the judge may label, sorted by (cell_id, decision_id).

    Parameters
    ----------
    decisions:
        Rows of the ``decisions`` table (columns kind, status, agent, response, game, …).
    cot_agents:
        Names of the CoT agents (:func:`cot_agent_names`); other agents are never judged.
    min_chars:
        Minimum length of the trimmed response.
    games:
        Game type names (``PrisonersDilemma``) or config keys (``prisoners_dilemma``) to keep;
        None keeps every game.
    """
    if decisions.height == 0:
        return decisions
    keep = (
        (pl.col("kind") == "action")
        & (pl.col("status") == "ok")
        & pl.col("agent").is_in(list(cot_agents))
        & (pl.col("response").fill_null("").str.strip_chars().str.len_chars() >= min_chars)
    )
    if games is not None:
        names = [get_game(g).name for g in games]
        keep = keep & pl.col("game").is_in(names)
    return decisions.filter(keep).sort(["cell_id", "decision_id"])


def sample_decisions(eligible: pl.DataFrame, sample_size: int, seed: int) -> pl.DataFrame:
    """A seeded sample of ``sample_size`` rows (0, or more than available: all rows).

    Each row's sampling key is a uniform draw of stream ``(seed; "judge", "sample",
    decision_id)``; ties (the same decision id in two cells) are broken by cell id. The result
    keeps the input's (cell_id, decision_id) order.
    """
    if sample_size <= 0 or eligible.height <= sample_size:
        return eligible
    keys = [float(rng_for(seed, "judge", "sample", d).random()) for d in eligible["decision_id"]]
    ranked = eligible.with_columns(pl.Series("_key", keys, dtype=pl.Float64)).sort(
        ["_key", "cell_id", "decision_id"]
    )
    return ranked.head(sample_size).drop("_key").sort(["cell_id", "decision_id"])
