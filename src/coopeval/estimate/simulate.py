"""Play every cell of a config with recording stand-ins and keep what the estimate needs.

One simulated run per :class:`~.standin.Stance` plays each configured study's cells through
the study's own :meth:`~coopeval.studies.base.Study.play` (the prompts a run renders, history
and logs growing as they would), then the CoopEval judge's selection
(:func:`coopeval.studies.coopeval.judge.stage.select_decisions`) over the simulated decisions,
with each selected decision's judge prompt rendered. Per call attempt it keeps the study,
group (mechanism, condition or protocol), model, decision kind, decision id, prompt length in
characters and response-cache key; the prompt texts themselves only as a sample for the token
count (:mod:`.tokens`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.core.prompts import PromptLibrary
from coopeval.estimate.standin import Stance, stand_ins
from coopeval.games import get_game
from coopeval.pipeline.studies import all_cells, configured_studies, prompts_dir
from coopeval.studies.base import PlayInputs, Study

__all__ = ["GROUP_KEYS", "Simulation", "simulate"]

GROUP_KEYS = ("mechanism", "condition", "protocol")
"""The cell-spec key that names a cell's group in the estimate, first present wins (CoopEval's
mechanism, gossip's condition (its ``name``), evolution's protocol); else the study name."""

SAMPLE_PER_CELL = 2
"""Prompts kept per (cell, model, kind) for the token count."""

CALL_COLUMNS = ("study", "group", "cell_id", "model", "kind", "decision_id", "attempt", "round", "chars", "max_tokens", "cache_key", "weight")
"""The columns of :attr:`Simulation.calls`."""


@dataclass
class Simulation:
    """What one simulated run recorded.

    Attributes
    ----------
    calls:
        One row per call attempt (:data:`CALL_COLUMNS`); the judge's rows have study
        ``coopeval``, group ``judge`` and kind ``judge``.
    steps:
        Per cell: the number of dependent steps (distinct (round, kind) of its decisions),
        the critical path of the cell at one attempt per step.
    samples:
        Model → sampled message lists (JSON text) for the token count.
    """

    calls: pl.DataFrame
    steps: dict[str, int]
    samples: dict[str, list[str]] = field(default_factory=dict)


def group_of(study: Study, spec: Mapping[str, Any]) -> str:
    """The group of a cell (see :data:`GROUP_KEYS`)."""
    for key in GROUP_KEYS:
        value = spec.get(key)
        if value is not None:
            return str(value.get("name", value) if isinstance(value, Mapping) else value)
    return study.name


def _keep(frame: pl.DataFrame, study: str, group: str, samples: dict[str, list[str]], weight: float = 1.0) -> pl.DataFrame:
    """The :data:`CALL_COLUMNS` of an ``llm_calls`` frame (each row standing for ``weight``
    cells); its sampled prompts into ``samples``."""
    if frame.height == 0:
        return pl.DataFrame(schema={c: pl.String() for c in CALL_COLUMNS}).with_columns(
            pl.col("attempt", "round", "chars", "max_tokens").cast(pl.Int64), pl.col("weight").cast(pl.Float64)
        )
    for (model, _kind), part in frame.group_by(["model", "kind"], maintain_order=True):
        samples.setdefault(str(model), []).extend(part["prompt"].head(SAMPLE_PER_CELL).to_list())
    return frame.select(
        pl.lit(study).alias("study"),
        pl.lit(group).alias("group"),
        pl.col("cell_id").cast(pl.String),
        pl.col("model").cast(pl.String),
        pl.col("kind").cast(pl.String),
        pl.col("decision_id").cast(pl.String),
        pl.col("attempt").cast(pl.Int64),
        pl.col("round").cast(pl.Int64),
        pl.col("prompt").str.len_chars().cast(pl.Int64).alias("chars"),
        pl.col("max_tokens").cast(pl.Int64),
        pl.col("cache_key").cast(pl.String),
        pl.lit(float(weight)).alias("weight"),
    )


def _judge_calls(config: Mapping[str, Any], decisions: list[pl.DataFrame], samples: dict[str, list[str]]) -> pl.DataFrame | None:
    """The judge's calls over the simulated CoopEval ``decisions`` (a ``weight`` column: the
    cells each stands for), one attempt per judged decision, with its rendered prompt; the
    weights are scaled down to ``judge.sample_size`` when a sample is judged. None when the
    judge has nothing to do."""
    from coopeval.decisions.taxonomy import load_taxonomy
    from coopeval.studies.coopeval.judge.prompt import JudgePrompt
    from coopeval.studies.coopeval.judge.selection import judge_has_work
    from coopeval.studies.coopeval.judge.stage import select_decisions
    from coopeval.studies.coopeval.play import style_instructions

    if not decisions or not judge_has_work(config):
        return None
    judge = config["judge"]
    frames = [f for f in decisions if f.height]
    if not frames:
        return None
    everything = {**judge, "sample_size": 0}
    _, selected = select_decisions(pl.concat(frames, how="diagonal_relaxed"), everything, config["agents"], int(config["seed"]), config["games"])
    if selected.height == 0:
        return None
    weights = selected["weight"].cast(pl.Float64)
    sample = int(judge.get("sample_size") or 0)
    if 0 < sample < weights.sum():
        weights = weights * (sample / weights.sum())
    library = PromptLibrary(config["prompts_dir"])
    template = JudgePrompt(load_taxonomy(judge.get("taxonomy") or None), Path(config["prompts_dir"]) / "judge" / "judge.txt")
    style = style_instructions(library).get(str(judge.get("style", "IO")), "")
    titles = {g: get_game(g).title for g in set(selected["game"].to_list())}
    prompts = [
        json.dumps([{"role": "user", "content": f"{template.render(titles[g], r)}\n\n{style}".rstrip()}], ensure_ascii=False)
        for g, r in zip(selected["game"], selected["response"], strict=True)
    ]
    model = str(judge["model"])
    samples.setdefault(model, []).extend(prompts[:: max(1, len(prompts) // 400)][:400])
    return pl.DataFrame(
        {
            "study": "coopeval",
            "group": "judge",
            "cell_id": selected["cell_id"].cast(pl.String),
            "model": model,
            "kind": "judge",
            "decision_id": selected["decision_id"].cast(pl.String),
            "attempt": 0,
            "round": 0,
            "chars": [len(p) for p in prompts],
            "max_tokens": int((judge.get("params") or {}).get("max_tokens") or 0),
            "cache_key": None,
            "weight": weights,
        },
        schema_overrides={"cache_key": pl.String(), "attempt": pl.Int64(), "round": pl.Int64(), "max_tokens": pl.Int64()},
    )


REPLICATE_KEYS = ("replicate", "cell_id", "path")
"""The cell-spec keys in which the replicates of one cell differ (besides seeds drawn from them)."""


def representatives(cells: list[dict[str, Any]], every_replicate: bool) -> list[tuple[dict[str, Any], int]]:
    """(cell, number of cells it stands for): every cell once with ``every_replicate``, else
    the first replicate of each cell standing for all its replicates (they differ only in
    their random draws, so a protocol that fixes its decisions asks as many in each)."""
    if every_replicate:
        return [(c, 1) for c in cells]
    groups: dict[str, list[dict[str, Any]]] = {}
    for cell in cells:
        key = json.dumps({k: v for k, v in cell.items() if k not in REPLICATE_KEYS}, sort_keys=True, default=str)
        groups.setdefault(key, []).append(cell)
    return [(members[0], len(members)) for members in groups.values()]


def simulate(config: Mapping[str, Any], stance: Stance, every_replicate: bool = False) -> Simulation:
    """Play the cells of the validated ``config`` (:func:`representatives`) with
    :class:`~.standin.StandIn` agents of ``stance`` (bots as themselves), then the judge's
    selection; see the module docstring. Nothing is cached, journalled or checkpointed, and
    no model is called.
    """
    samples: dict[str, list[str]] = {}
    frames: list[pl.DataFrame] = []
    steps: dict[str, int] = {}
    judged: list[pl.DataFrame] = []
    cells = all_cells(config)
    with stand_ins(stance):
        for study in configured_studies(config):
            library = PromptLibrary(prompts_dir(study, config))
            for spec, weight in representatives(cells[study.name], every_replicate):
                inputs = PlayInputs(None, library, None, max_concurrency=64)
                tables, _stats = study.play(spec, inputs)
                frames.append(_keep(tables["llm_calls"], study.name, group_of(study, spec), samples, weight))
                decisions = tables["decisions"]
                steps[str(spec["cell_id"])] = decisions.select("round", "kind").unique().height if decisions.height else 0
                if study.name == "coopeval" and decisions.height:
                    judged.append(decisions.with_columns(pl.lit(float(weight)).alias("weight")))
    judge = _judge_calls(config, judged, samples) if "coopeval" in cells else None
    if judge is not None:
        frames.append(judge)
        steps["judge"] = 1
    calls = pl.concat([f for f in frames if f.height], how="vertical_relaxed") if any(f.height for f in frames) else _keep(pl.DataFrame(), "", "", {})
    return Simulation(calls, steps, samples)
