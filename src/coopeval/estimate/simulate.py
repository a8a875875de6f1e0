"""Play every cell of a config with recording stand-ins and keep what the estimate needs.

One simulated run per :class:`~.standin.Stance` plays each configured study's cells through
the study's own :meth:`~coopeval.studies.base.Study.play` (the prompts a run renders, history
and logs growing as they would), then the CoopEval judge's selection
(:func:`coopeval.studies.coopeval.judge.stage.select_decisions`) over the simulated decisions,
with each selected decision's judge prompt rendered. Per call attempt it keeps the study,
group (mechanism, condition or protocol), model, decision kind, decision id, prompt length in
characters and response-cache key; the prompt texts themselves only as a sample for the token
count (:mod:`.tokens`) and the longest per study and model (:mod:`.windows`). Cells that repeat
a unit of play are played shrunk and their rows weighted (:mod:`.shrink`), CoopEval rosters with one
stand-in per prompt class (:mod:`.roster`).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.agents.registry import is_scripted
from coopeval.core.prompts import PromptLibrary
from coopeval.estimate.roster import reduce_roster
from coopeval.estimate.shrink import Shrunk, shrink, validity_decides_counts
from coopeval.estimate.standin import Stance, stand_ins
from coopeval.games import get_game
from coopeval.pipeline.studies import all_cells, configured_studies, prompts_dir
from coopeval.studies.base import PlayInputs, Study

__all__ = ["GROUP_KEYS", "SAMPLE_SIZE", "PlayedCells", "Samples", "Simulation", "assemble", "borrowable", "play_cells", "simulate"]

GROUP_KEYS = ("mechanism", "condition", "protocol")
"""The cell-spec key that names a cell's group in the estimate, first present wins (CoopEval's
mechanism, gossip's condition (its ``name``), evolution's protocol); else the study name."""

SAMPLE_PER_CELL = 2
"""Prompts kept per (cell, model, kind) for the token count."""

SAMPLE_SIZE = 100
"""Prompts counted for a model's tokens per character in each (study, decision kind) it answers
(the first ones simulated): a kind's prompts have their own ratio (the default main job's store:
0.236 for the judge's, 0.245 for gossip's, 0.290 for CoopEval's actions, 0.315 in the
Traveller's Dilemma), so a row of the estimate takes its own kind's."""

Samples = dict[str, dict[tuple[str, str], list[str]]]
"""Model → (study, decision kind) → sampled message lists (JSON text) for the token count."""

CALL_COLUMNS = ("study", "group", "cell_id", "model", "kind", "decision_id", "attempt", "round", "chars", "max_tokens", "cache_key", "weight")
"""The columns of :attr:`Simulation.calls`."""


PlayedCell = tuple[pl.DataFrame, pl.DataFrame | None, int]
"""One simulated cell: its :data:`CALL_COLUMNS` rows (weighted), its decisions for the judge
(CoopEval; ``weight`` column) and its dependent steps."""


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
        Sampled prompts for the token count (:data:`Samples`).
    """

    calls: pl.DataFrame
    steps: dict[str, int]
    samples: Samples = field(default_factory=dict)
    largest: dict[tuple[str, str], str] = field(default_factory=dict)
    """(study, model) → its longest simulated prompt (JSON message list), the judge's under
    study ``coopeval``."""
    played: dict[str, PlayedCell] = field(default_factory=dict)
    """Representative cell id → what its simulation gave (rows, decisions for the judge, steps)."""


def _note_largest(largest: dict[tuple[str, str], str], study: str, frame: pl.DataFrame, stands_for: Mapping[str, list[str]]) -> None:
    """Keep, per (``study``, model), the longest prompt of ``frame`` (``model`` and ``prompt``
    columns); a played model's prompt counts for every model in ``stands_for[model]``."""
    if frame.height == 0:
        return
    longest = frame.with_columns(pl.col("prompt").str.len_chars().alias("_n")).sort("_n", descending=True).unique("model", keep="first")
    for model, prompt in longest.select("model", "prompt").iter_rows():
        for each in stands_for.get(str(model), [str(model)]):
            if len(prompt) > len(largest.get((study, each), "")):
                largest[(study, each)] = str(prompt)


def group_of(study: Study, spec: Mapping[str, Any]) -> str:
    """The group of a cell (see :data:`GROUP_KEYS`)."""
    for key in GROUP_KEYS:
        value = spec.get(key)
        if value is not None:
            return str(value.get("name", value) if isinstance(value, Mapping) else value)
    return study.name


def _sample(samples: Samples, model: str, study: str, kind: str, prompts: list[str]) -> None:
    """Add ``prompts`` to the sample of (``model``, ``study``, ``kind``) up to :data:`SAMPLE_SIZE`."""
    kept = samples.setdefault(model, {}).setdefault((study, kind), [])
    kept.extend(prompts[: max(0, SAMPLE_SIZE - len(kept))])


def _keep(
    frame: pl.DataFrame, study: str, group: str, samples: Samples, weight: pl.Expr | None = None, stands_for: Mapping[str, list[str]] | None = None
) -> pl.DataFrame:
    """The :data:`CALL_COLUMNS` of an ``llm_calls`` frame (``weight`` an expression over its rows,
    default 1: :mod:`.shrink`); its sampled prompts into ``samples``, a played model's for every
    model in ``stands_for[model]`` (a single-model cell's members)."""
    if frame.height == 0:
        return pl.DataFrame(schema={c: pl.String() for c in CALL_COLUMNS}).with_columns(
            pl.col("attempt", "round", "chars", "max_tokens").cast(pl.Int64), pl.col("weight").cast(pl.Float64)
        )
    heads = frame.group_by(["model", "kind"], maintain_order=True).head(SAMPLE_PER_CELL)  # in the groups' order
    for model, kind, prompt in zip(heads["model"].cast(pl.String).to_list(), heads["kind"].cast(pl.String).to_list(), heads["prompt"].to_list(), strict=True):
        for each in (stands_for or {}).get(model, [model]):
            _sample(samples, each, study, kind, [prompt])
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
        (pl.lit(1.0) if weight is None else weight).cast(pl.Float64).alias("weight"),
    )


def _judge_calls(
    config: Mapping[str, Any], decisions: list[pl.DataFrame], samples: Samples, largest: dict[tuple[str, str], str]
) -> pl.DataFrame | None:
    """The judge's calls over the simulated CoopEval ``decisions`` (a ``weight`` column: the
    cells each stands for), one attempt per judged decision, with its rendered prompt; the
    weights are scaled down to ``judge.sample_size`` when a sample is judged; its longest prompt
    goes into ``largest``. None when the judge has nothing to do."""
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
    rendered: dict[tuple[str, str], str] = {}  # stand-ins give few distinct answers: render each (game, answer) once

    def render(game: str, response: str) -> str:
        if (game, response) not in rendered:
            content = f"{template.render(titles[game], response)}\n\n{style}".rstrip()
            rendered[(game, response)] = json.dumps([{"role": "user", "content": content}], ensure_ascii=False)
        return rendered[(game, response)]

    prompts = [render(g, r) for g, r in zip(selected["game"], selected["response"], strict=True)]
    model = str(judge["model"])
    _sample(samples, model, "coopeval", "judge", prompts[:: max(1, len(prompts) // SAMPLE_SIZE)])
    longest = max(rendered.values(), key=len)
    if len(longest) > len(largest.get(("coopeval", model), "")):
        largest[("coopeval", model)] = longest
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

MODEL_KEYS = ("model", "model_label")
"""The cell-spec keys naming the one model of a single-model cell (gossip, evolution)."""


def _single_model(study: Study, cell: Mapping[str, Any]) -> str | None:
    """The model of a cell that calls exactly one language model, named by its ``model`` entry."""
    models = study.cell_models(cell)
    if len(models) == 1 and not is_scripted(models[0]) and isinstance(cell.get("model"), Mapping):
        return models[0]
    return None


def representatives(study: Study, cells: list[dict[str, Any]], every_replicate: bool) -> list[tuple[dict[str, Any], list[dict[str, Any]]]]:
    """(cell played, the cells it stands for): every cell for itself with ``every_replicate``;
    else one cell for all the replicates of a cell (they differ only in their random draws, so a
    protocol that fixes its decisions asks as many in each) and, in single-model cells (gossip,
    evolution), for the same cell of every other model played in the same style (stand-ins
    answer alike whatever model they stand in for)."""
    if every_replicate:
        return [(c, [c]) for c in cells]
    groups: dict[str, list[dict[str, Any]]] = {}
    for cell in cells:
        single = _single_model(study, cell)
        drop = set(REPLICATE_KEYS) | (set(MODEL_KEYS) if single else set())
        kept = {k: v for k, v in cell.items() if k not in drop}
        if single:
            kept["style"] = cell["model"].get("style", "IO")
        groups.setdefault(json.dumps(kept, sort_keys=True, default=str), []).append(cell)
    return [(members[0], members) for members in groups.values()]


def _budget(entry: Mapping[str, Any]) -> int:
    params = entry.get("params") or {}
    return int(params.get("max_tokens") or params.get("max_completion_tokens") or 0)


def _spread(study: Study, frame: pl.DataFrame, played: Mapping[str, Any], members: list[dict[str, Any]]) -> pl.DataFrame:
    """The rows of the cell ``played`` standing for ``members``: weighted by their number, and in
    a single-model cell once per member model (its model string and ``max_tokens``; no cache
    key where the model or its budget differs from the played one)."""
    single = _single_model(study, played)
    if single is None or frame.height == 0:
        return frame.with_columns(pl.col("weight") * float(len(members)))
    counts: dict[tuple[str, int], int] = {}
    for member in members:
        key = (str(member["model"]["model"]), _budget(member["model"]))
        counts[key] = counts.get(key, 0) + 1
    same = (single, _budget(played["model"]))
    members_of = pl.DataFrame(  # one join, not a filter per member model
        {
            "model": [single] * len(counts),
            "_model": [model for model, _ in counts],
            "_budget": [budget for _, budget in counts],
            "_n": [float(n) for n in counts.values()],
            "_same": [key == same for key in counts],
        },
        schema={"model": pl.String(), "_model": pl.String(), "_budget": pl.Int64(), "_n": pl.Float64(), "_same": pl.Boolean()},
    )
    spread = frame.join(members_of, on="model", how="inner", maintain_order="right_left").select(
        pl.col("study", "group", "cell_id"),
        pl.col("_model").alias("model"),
        pl.col("kind", "decision_id", "attempt", "round", "chars"),
        pl.col("_budget").alias("max_tokens"),
        pl.when(pl.col("_same")).then(pl.col("cache_key")).otherwise(None).alias("cache_key"),
        (pl.col("weight") * pl.col("_n")).alias("weight"),
    )
    return pl.concat([frame.filter(pl.col("model") != single).with_columns(pl.col("weight") * float(len(members))), spread])


def _play(
    study: Study,
    spec: Mapping[str, Any],
    members: list[dict[str, Any]],
    library: PromptLibrary,
    every_replicate: bool,
    samples: Samples,
    largest: dict[tuple[str, str], str],
) -> PlayedCell:
    """Play the representative ``spec`` of ``members`` (with a reduced roster,
    :mod:`.roster`, and shrunk, :mod:`.shrink`, unless ``every_replicate``)."""
    roster = None if every_replicate else reduce_roster(study.name, spec)
    played = dict(spec) if roster is None else roster.spec
    shrunk = Shrunk(played, pl.lit(1.0)) if every_replicate else shrink(study.name, played)
    tables, _stats = study.play(shrunk.spec, PlayInputs(None, library, None, max_concurrency=64))
    calls, weight, decision_weight = tables["llm_calls"], shrunk.weight, shrunk.weight * float(len(members))
    if roster is not None and calls.height:
        calls, weight = roster.expand_calls(calls), weight * pl.col("roster_weight")
        decision_weight = decision_weight * roster.decision_weight()
    single = _single_model(study, spec)
    stands_for = {single: sorted({str(m["model"]["model"]) for m in members})} if single else {}
    kept = _keep(calls, study.name, group_of(study, spec), samples, weight, stands_for)
    _note_largest(largest, study.name, calls, stands_for)
    decisions = tables["decisions"]
    steps = decisions.select("round", "kind").unique().height + shrunk.extra_steps if decisions.height else 0
    judged = None
    if study.name == "coopeval" and decisions.height:
        judged = decisions.with_columns(decision_weight.alias("weight"))
    return _spread(study, kept, spec, members), judged, steps


@dataclass
class PlayedCells:
    """One stance's cells as played, before the judge (:func:`play_cells`): ``cells`` maps each
    representative cell id, in play order, to what its simulation gave, or to None for a cell
    left to borrow from another stance (:func:`assemble`); ``samples`` and ``largest`` as in
    :class:`Simulation`; ``judge``: whether the judge is simulated."""

    cells: dict[str, PlayedCell | None]
    samples: Samples
    largest: dict[tuple[str, str], str]
    judge: bool


def borrowable(config: Mapping[str, Any], cells: Mapping[str, list[dict[str, Any]]], every_replicate: bool = False) -> set[str]:
    """The representative cells (:func:`representatives`) of ``cells`` whose decision counts
    depend only on the answers' validity (:func:`~.shrink.validity_decides_counts`): a valid
    stance other than the cooperative one may take them from the cooperative simulation."""
    return {
        str(spec["cell_id"])
        for study in configured_studies(config)
        if study.name in cells
        for spec, _members in representatives(study, cells[study.name], every_replicate)
        if validity_decides_counts(study.name, spec)
    }


def play_cells(
    config: Mapping[str, Any],
    stance: Stance,
    every_replicate: bool = False,
    studies: Collection[str] | None = None,
    cells: Mapping[str, list[dict[str, Any]]] | None = None,
    borrowed: Collection[str] = (),
) -> PlayedCells:
    """Play the representative cells of the validated ``config`` (those of ``studies``, default
    all) with :class:`~.standin.StandIn` agents of ``stance``, except the cell ids in
    ``borrowed`` (left None); see :func:`simulate`."""
    samples: Samples = {}
    largest: dict[tuple[str, str], str] = {}
    played: dict[str, PlayedCell | None] = {}
    cells = all_cells(config) if cells is None else cells
    wanted = set(cells) if studies is None else set(studies)
    with stand_ins(stance):
        for study in configured_studies(config):
            if study.name not in wanted:
                continue
            library = PromptLibrary(prompts_dir(study, config))
            for spec, members in representatives(study, cells[study.name], every_replicate):
                cell = str(spec["cell_id"])
                played[cell] = None if cell in borrowed else _play(study, spec, members, library, every_replicate, samples, largest)
    return PlayedCells(played, samples, largest, "coopeval" in cells and "coopeval" in wanted)


def assemble(config: Mapping[str, Any], played: PlayedCells, borrow: Simulation | None = None) -> Simulation:
    """The :class:`Simulation` of ``played``: each cell left to borrow taken from ``borrow``,
    then the judge's calls over the CoopEval cells' decisions (:func:`_judge_calls`).

    Raises
    ------
    ValueError
        A cell left to borrow that ``borrow`` did not play.
    """
    samples, largest = played.samples, played.largest
    frames: list[pl.DataFrame] = []
    steps: dict[str, int] = {}
    judged: list[pl.DataFrame] = []
    cells: dict[str, PlayedCell] = {}
    for cell, own in played.cells.items():
        if own is None:
            if borrow is None or cell not in borrow.played:
                raise ValueError(f"cell {cell} was left to borrow from a simulation that did not play it")
            own = borrow.played[cell]
        cells[cell] = own
        frame, judged_part, steps[cell] = cells[cell]
        frames.append(frame)
        if judged_part is not None:
            judged.append(judged_part)
    judge = _judge_calls(config, judged, samples, largest) if played.judge else None
    if judge is not None:
        frames.append(judge)
        steps["judge"] = 1
    calls = pl.concat([f for f in frames if f.height], how="vertical_relaxed") if any(f.height for f in frames) else _keep(pl.DataFrame(), "", "", {})
    return Simulation(calls, steps, samples, largest, cells)


def simulate(
    config: Mapping[str, Any],
    stance: Stance,
    every_replicate: bool = False,
    studies: Collection[str] | None = None,
    borrow: Simulation | None = None,
    cells: Mapping[str, list[dict[str, Any]]] | None = None,
) -> Simulation:
    """Play the cells of the validated ``config`` (:func:`representatives`) with
    :class:`~.standin.StandIn` agents of ``stance`` (bots as themselves), then the judge's
    selection; see the module docstring. ``studies`` limits it to those configured studies
    (default: all; the judge only with ``coopeval``); ``every_replicate`` plays every cell in
    full (no representatives, nothing shrunk). A cell whose decision counts depend only on the
    answers' validity (:func:`borrowable`) is taken from ``borrow`` (the simulation of another
    valid stance) instead of played. Nothing is cached, journalled or checkpointed, and no
    model is called. ``cells``: the config's cells per study
    (:func:`coopeval.pipeline.studies.all_cells`, computed when not given).
    """
    cells = all_cells(config) if cells is None else cells
    lent = borrowable(config, cells, every_replicate) & set(borrow.played) if borrow is not None else set()
    return assemble(config, play_cells(config, stance, every_replicate, studies, cells, lent), borrow)
