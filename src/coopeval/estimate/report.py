"""The estimate of a config: simulated runs summed per study, group, model and decision kind,
counted, priced and bounded in time; printed as a table or JSON; checked against ``max_usd``.

Per row (study, group, model, kind): ``decisions_min`` is the fewest decisions any simulated
stance recorded (the failing stance: every decision fails, so nothing that depends on an answer
is asked), ``decisions_max`` the most (cooperative or defecting stand-ins, every answer valid);
they are equal where the protocol fixes the count. ``calls`` = ``decisions_max`` (one attempt
each), ``calls_max`` = ``decisions_max`` × the attempt limit × (``retry_failed`` + 1);
``input_tokens`` the simulated prompts of the valid stance with the most decisions;
``output_tokens`` ``calls`` × ``max_tokens`` (the agent's, else litellm's
``max_output_tokens`` for the model; ``None`` if neither is known); ``output_tokens_typical``
``calls`` × the mean completion tokens of the response cache's answers to the simulated
prompts (``None`` without any); ``usd`` the price of ``input_tokens`` + ``output_tokens`` (an
upper bound at one attempt per decision; ``None`` when unpriced); ``cache_hits`` the simulated
calls whose exact request the response cache already holds.

Wall time (as ``benchmarks/scale.py`` bounds a run): ``max(critical path × latency,
model calls × latency / cap)``, the critical path being the longest cell's dependent steps
(distinct (round, kind) of its decisions) plus one judge step.
"""

from __future__ import annotations

import contextlib
import math
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from coopeval.agents.registry import is_scripted, required_env, uses_local_llm
from coopeval.decisions.reask import MAX_ATTEMPTS
from coopeval.estimate.simulate import SAMPLE_SIZE, Samples, Simulation
from coopeval.estimate.stances import StanceRuns
from coopeval.estimate.standin import Stance
from coopeval.estimate.tokens import FactsWorker, model_facts

__all__ = ["ASSUMPTIONS", "Estimate", "budget_error", "estimate_config"]

ASSUMPTIONS = (
    "decisions_max: every answer valid (cooperating and defecting stand-ins, the larger count); "
    "decisions_min: every decision of a stood-in model fails, which skips what depends on it "
    "(e.g. a failed signature skips that match-up's contracted round)",
    f"calls = decisions_max (one attempt each); calls_max adds every re-ask up to the attempt limit ({MAX_ATTEMPTS}) "
    "and each retry_failed round",
    "input tokens: the simulated prompts of the stand-ins (a real answer's history reads like a stand-in's), counted "
    "per decision kind with each model's tokenizer (an embedded model's own; see the tokenizer column); "
    "the judge's prompts hold the stand-ins' short reasoning, so the judged model's real reasoning adds up to "
    "its output tokens to the judge's input (likewise gossip notes and evolved strategies quoted in later prompts)",
    "output tokens: max_tokens per call (upper bound); typical: the response cache's observed lengths",
    "usd: input + output tokens at one attempt per decision, from prices.yaml, else litellm's bundled map; "
    "null when a model is unpriced",
    "repeated units are simulated once and multiplied (CoopEval rounds past the lookup window, evolution "
    "generations past the second, one invasion test and one matrix, in the last simulated generation, for every "
    "generation that tests): decision counts exact, "
    "their prompts sized as the simulated one's (--every-replicate simulates everything)",
    "cache hits: simulated requests already in the response cache (exact for prompts that depend on no "
    "earlier answer, a lower bound otherwise; the judge's requests are not looked up)",
)
"""Printed with every estimate."""

VALID = (Stance.COOPERATIVE, Stance.DEFECTING)
KEYS = ["study", "group", "model", "kind"]


@dataclass
class Estimate:
    """The estimate of one config (see the module docstring). ``rows``: one dict per (study,
    group, model, kind); ``studies``: per study ``decisions_min``/``decisions_max``; ``models``:
    per model its sums, price source, tokenizer and key variables; ``totals``."""

    rows: list[dict[str, Any]]
    studies: dict[str, dict[str, int]]
    models: dict[str, dict[str, Any]]
    totals: dict[str, Any]
    latency_s: float
    cap: int
    assumptions: tuple[str, ...] = field(default=ASSUMPTIONS)
    largest: Mapping[tuple[str, str], str] = field(default_factory=dict, repr=False, compare=False)
    """The largest simulated prompt per (study, model) of the cooperative run, for
    :func:`coopeval.estimate.windows.window_warnings` (not part of the JSON)."""

    def to_json(self) -> dict[str, Any]:
        """One JSON object: ``studies``, ``models``, ``rows``, ``totals`` (with ``wall_s_bound``),
        ``latency_s``, ``cap`` and ``assumptions``."""
        return {
            "studies": self.studies,
            "models": self.models,
            "rows": self.rows,
            "totals": self.totals,
            "latency_s": self.latency_s,
            "cap": self.cap,
            "assumptions": list(self.assumptions),
        }


def _counts(sim: Simulation) -> pl.DataFrame:
    return sim.calls.filter(pl.col("attempt") == 0).group_by(KEYS).agg(
        pl.col("weight").sum().round().cast(pl.Int64).alias("decisions"),
        (pl.col("chars") * pl.col("weight")).sum().alias("chars"),
        pl.col("max_tokens").max().alias("max_tokens"),
    )


def _cache_observations(sim: Simulation, cache_dir: str | Path) -> pl.DataFrame:
    """model → (cache_hits, observed completion tokens) over the simulated requests."""
    from coopeval.cache.response_cache import DB_FILE, ResponseCache

    keyed = sim.calls.filter(pl.col("cache_key").is_not_null() & (pl.col("cache_key") != "") & (pl.col("attempt") == 0))
    if not (Path(cache_dir) / DB_FILE).is_file() or keyed.height == 0:
        return pl.DataFrame(schema={"model": pl.String(), "cache_hits": pl.Int64(), "observed": pl.Int64()})
    cache = ResponseCache(cache_dir)
    try:
        found = []
        for model, key in zip(keyed["model"], keyed["cache_key"], strict=True):
            value = cache.get(key)
            if value is not None:
                found.append({"model": model, "observed": int(value.get("completion_tokens") or 0)})
    finally:
        cache.close()
    if not found:
        return pl.DataFrame(schema={"model": pl.String(), "cache_hits": pl.Int64(), "observed": pl.Int64()})
    return pl.DataFrame(found).group_by("model").agg(pl.len().cast(pl.Int64).alias("cache_hits"), pl.col("observed").sum())


def _models(config: Mapping[str, Any]) -> list[str]:
    """The model strings the config's studies call (the judge's included)."""
    from coopeval.pipeline.studies import configured_studies

    return sorted({m for study in configured_studies(config) for m in study.models(config)})


def _needs_key_table(config: Mapping[str, Any]) -> bool:
    """Whether the config calls an API model (the judge's included) and this process has not
    read litellm's API-key table yet."""
    from coopeval.agents.litellm_client import litellm_key_table

    models = _models(config)
    return not all(is_scripted(m) or uses_local_llm(m) for m in models) and not litellm_key_table.cache_info().currsize


def _prefetch_key_table(config: Mapping[str, Any]) -> threading.Thread | None:
    """Start reading litellm's API-key table (:func:`coopeval.agents.litellm_client.litellm_key_table`:
    a child process that imports litellm, 2-5 s) beside the simulation when the config calls an
    API model; the thread to join before the table is used (it fills the table's cache)."""
    from coopeval.agents.litellm_client import litellm_key_table

    if not _needs_key_table(config):
        return None

    def read() -> None:
        with contextlib.suppress(Exception):  # a failure is raised again where the table is used
            litellm_key_table()

    thread = threading.Thread(target=read, name="litellm-key-table", daemon=True)
    thread.start()
    return thread


def estimate_config(
    config: Mapping[str, Any],
    latency_s: float = 1.0,
    cap: int | None = None,
    every_replicate: bool = False,
    background: bool = False,
    facts_worker: FactsWorker | None = None,
    processes: int = 1,
    cells: Mapping[str, list[dict[str, Any]]] | None = None,
) -> Estimate:
    """Estimate the validated ``config`` (see the module docstring).

    ``latency_s`` is the assumed seconds per model call; ``cap`` the calls in flight over the
    run (default: ``COOPEVAL_PROVIDER_SLOTS`` when set, else the config's ``max_concurrency``);
    ``every_replicate`` simulates every cell in full instead of one per group of replicates and
    models (:func:`coopeval.estimate.simulate.representatives`), shrunk where it repeats a unit
    (:mod:`coopeval.estimate.shrink`). ``background``: litellm's facts of the models (its
    import, token counts, prices) are computed in a spawned child process beside the simulation
    (:class:`~coopeval.estimate.tokens.FactsWorker`), when this process has not imported litellm;
    only for a process whose main module guards its entry point (the ``coopeval`` command: a
    spawned child imports the main module again). ``facts_worker``: such a child started earlier
    by the caller (before it loaded the config), used in place of a new one; it is closed when
    the config calls no language model. ``processes`` > 1: two of the three simulated runs are
    played in a forked child beside the first (:class:`~coopeval.estimate.stances.StanceRuns`;
    the same estimate). ``cells``: the config's cells per study
    (:func:`coopeval.pipeline.studies.all_cells`, computed when not given).
    """
    from coopeval.agents.slots import SLOTS_ENV
    from coopeval.core.environment import env_value
    from coopeval.pipeline.studies import all_cells

    llms = [m for m in _models(config) if not is_scripted(m)]
    worker = facts_worker if facts_worker is not None or not background or "litellm" in sys.modules else FactsWorker()
    if worker is not None and not llms:  # bots only: no token to count
        worker.close()
        worker = None
    runs = StanceRuns(config, all_cells(config) if cells is None else cells, every_replicate, processes)  # forks before any thread starts
    if worker is not None:
        worker.warm(llms)
    keys = None if worker is not None else _prefetch_key_table(config)  # the worker reads the key table too

    def count_first(first: Simulation) -> None:  # its samples lead every model's sample (the order of ``sims``)
        if worker is not None:
            worker.count({model: [p for prompts in kinds.values() for p in prompts] for model, kinds in first.samples.items() if not is_scripted(model)})

    sims = runs.runs(count_first)
    counts = {stance: _counts(sim) for stance, sim in sims.items()}
    merged = pl.concat([c.with_columns(pl.lit(str(s)).alias("stance")) for s, c in counts.items()])
    low = merged.group_by(KEYS).agg(pl.col("decisions").min().alias("decisions_min"), pl.len().alias("_stances"))
    best = (
        merged.filter(pl.col("stance").is_in([str(s) for s in VALID]))
        .sort(["decisions", "chars"], descending=True)
        .group_by(KEYS, maintain_order=True)
        .first()
        .rename({"decisions": "decisions_max"})
    )
    table = best.join(low, on=KEYS, how="full", coalesce=True).with_columns(
        pl.col("decisions_max").fill_null(0),
        pl.when(pl.col("_stances") < len(Stance)).then(0).otherwise(pl.col("decisions_min")).alias("decisions_min"),
        pl.col("chars").fill_null(0),
    )
    main_sim = sims[Stance.COOPERATIVE]
    samples: Samples = {}
    for sim in sims.values():
        for model, kinds in sim.samples.items():
            for key, prompts in kinds.items():
                samples.setdefault(model, {}).setdefault(key, []).extend(prompts)
    attempts = MAX_ATTEMPTS * (int(config.get("retry_failed", 0)) + 1)
    if keys is not None:
        keys.join()
    observed = _cache_observations(main_sim, config["cache_dir"])
    hits = {r["model"]: r for r in observed.iter_rows(named=True)}
    rows: list[dict[str, Any]] = []
    models: dict[str, dict[str, Any]] = {}
    wanted = {model: {key: p[:SAMPLE_SIZE] for key, p in samples.get(model, {}).items()} for model in sorted(set(table["model"].to_list()))}
    facts = worker.facts(wanted) if worker is not None else model_facts(wanted)
    for model in wanted:
        price, default_out = facts[model].price, facts[model].max_output
        seen = hits.get(model)
        typical_per_call = (seen["observed"] / seen["cache_hits"]) if seen else None
        entry = models.setdefault(
            model,
            {
                "calls": 0, "calls_max": 0, "input_tokens": 0, "output_tokens": 0, "output_tokens_typical": None,
                "usd": 0.0, "usd_typical": None, "cache_hits": int(seen["cache_hits"]) if seen else 0,
                "priced": price is not None, "price_source": price.source if price else None,
                "tokenizer": facts[model].tokenizer, "routing_error": facts[model].routing,
                "key_variables": required_env(model), "scripted": is_scripted(model), "local": uses_local_llm(model),
            },
        )
        for row in table.filter(pl.col("model") == model).sort(KEYS).iter_rows(named=True):
            calls = int(row["decisions_max"])
            per_call = int(row["max_tokens"] or 0) or default_out
            out = None if per_call is None else calls * per_call
            tokens = 0 if is_scripted(model) else round(row["chars"] * facts[model].ratio(row["study"], row["kind"]))
            usd = 0.0 if price is not None and price.source == "free" else None if price is None or out is None else price.usd(tokens, out)
            typical = None if typical_per_call is None else round(calls * typical_per_call)
            rows.append({
                **{k: row[k] for k in KEYS},
                "decisions_min": int(row["decisions_min"]), "decisions_max": calls,
                "calls": calls, "calls_max": calls * attempts, "input_tokens": tokens,
                "output_tokens": out, "output_tokens_typical": typical, "usd": usd,
            })
            entry["calls"] += calls
            entry["calls_max"] += calls * attempts
            entry["input_tokens"] += tokens
            entry["output_tokens"] = None if out is None or entry["output_tokens"] is None else entry["output_tokens"] + out
            entry["usd"] = None if usd is None or entry["usd"] is None else entry["usd"] + usd
            if typical is not None:
                entry["output_tokens_typical"] = (entry["output_tokens_typical"] or 0) + typical
        if entry["output_tokens_typical"] is not None and price is not None:
            entry["usd_typical"] = price.usd(entry["input_tokens"], entry["output_tokens_typical"])
    studies = _study_ranges(sims)
    slots = env_value(SLOTS_ENV)
    cap = cap or (int(slots) if slots else int(config["max_concurrency"]))
    llm_calls = sum(m["calls"] for name, m in models.items() if not m["scripted"])
    path = max((v for k, v in main_sim.steps.items() if k != "judge"), default=0) + main_sim.steps.get("judge", 0)
    unpriced = sorted(name for name, m in models.items() if not m["priced"])
    unbounded = sorted(name for name, m in models.items() if m["priced"] and m["usd"] is None)
    totals = {
        "calls": sum(m["calls"] for m in models.values()),
        "model_calls": llm_calls,
        "calls_max": sum(m["calls_max"] for m in models.values()),
        "input_tokens": sum(m["input_tokens"] for m in models.values()),
        "output_tokens": None if any(m["output_tokens"] is None for m in models.values()) else sum(m["output_tokens"] for m in models.values()),
        "usd": None if unpriced or unbounded else sum(m["usd"] for m in models.values()),
        "complete": not unpriced and not unbounded,
        "unpriced": unpriced,
        "no_output_bound": unbounded,
        "cache_hits": sum(m["cache_hits"] for m in models.values()),
        "critical_path_calls": path,
        "wall_s_bound": max(path * latency_s, llm_calls * latency_s / cap) if llm_calls else 0.0,
        "key_variables": sorted({v for m in models.values() for v in m["key_variables"]}),
    }
    return Estimate(rows, studies, models, totals, latency_s, cap, largest=dict(main_sim.largest))


def _study_ranges(sims: Mapping[Stance, Simulation]) -> dict[str, dict[str, int]]:
    per: dict[str, list[int]] = {}
    for sim in sims.values():
        counts = sim.calls.filter(pl.col("attempt") == 0).group_by("study", maintain_order=True).agg(pl.col("weight").sum().round().cast(pl.Int64).alias("n"))
        for study, n in counts.iter_rows():
            per.setdefault(str(study), []).append(int(n))
    return {
        study: {"decisions_min": min(ns) if len(ns) == len(sims) else 0, "decisions_max": max(ns)}
        for study, ns in per.items()
    }


def budget_error(config: Mapping[str, Any], estimate: Estimate | None = None) -> str | None:
    """Why a run of ``config`` must not start: its estimated dollar bound (``totals.usd``)
    exceeds the config's ``max_usd`` (0: no budget), or the bound is unknown (an unpriced
    model, or no ``max_tokens``) while a budget is set; ``None`` when it may start.
    ``estimate`` defaults to :func:`estimate_config` of ``config``."""
    budget = float(config.get("max_usd") or 0)
    if budget <= 0:
        return None
    estimate = estimate or estimate_config(config)
    usd = estimate.totals["usd"]
    override = "raise max_usd in the config (or --config max_usd=<dollars>; 0 disables the budget)"
    if usd is None:
        missing = ", ".join(estimate.totals["unpriced"] + estimate.totals["no_output_bound"])
        return (
            f"max_usd = {budget:g} is set but the estimate has no dollar bound (no price or no max_tokens for {missing}); "
            f"see `coopeval estimate`; set params.max_tokens or a price (src/coopeval/data/prices.yaml), or {override}"
        )
    if usd > budget:
        return (
            f"estimated cost up to ${usd:,.2f} ({estimate.totals['model_calls']:,} model calls, "
            f"{estimate.totals['input_tokens']:,} input tokens) exceeds max_usd = {budget:g}; see `coopeval estimate`; {override}"
        )
    return None


def _num(value: Any, money: bool = False) -> str:
    if value is None:
        return "—"
    if money:
        return f"${value:,.2f}"
    if isinstance(value, float) and not math.isfinite(value):
        return "∞"
    return f"{value:,}"


def render_table(estimate: Estimate, console: Any) -> None:
    """Print ``estimate`` with rich: per-row table, per-model table, totals and assumptions."""
    from rich.table import Table

    rows = Table(title="coopeval estimate: per study, group, model and decision kind")
    for name in ("study", "group", "model", "kind", "decisions", "calls (max)", "input tok", "output tok (bound)", "usd (bound)"):
        rows.add_column(name, justify="right" if name[0] in "dciou" and name not in ("study",) else "left")
    for r in estimate.rows:
        d = str(r["decisions_max"]) if r["decisions_min"] == r["decisions_max"] else f"{r['decisions_min']}–{r['decisions_max']}"
        rows.add_row(r["study"], r["group"], r["model"], r["kind"], d, f"{r['calls']:,} ({r['calls_max']:,})",
                     _num(r["input_tokens"]), _num(r["output_tokens"]), _num(r["usd"], True))
    console.print(rows)
    models = Table(title="per model")
    for name in ("model", "calls", "input tok", "output tok (bound)", "output tok (typical)", "usd (bound)", "usd (typical)", "cache hits", "price", "tokenizer"):
        models.add_column(name)
    for model, m in estimate.models.items():
        models.add_row(model, f"{m['calls']:,}", _num(m["input_tokens"]), _num(m["output_tokens"]), _num(m["output_tokens_typical"]),
                       _num(m["usd"], True) if m["priced"] else "unpriced", _num(m["usd_typical"], True), f"{m['cache_hits']:,}",
                       m["price_source"] or "unpriced", m["tokenizer"])
    console.print(models)
    t = estimate.totals
    for study, r in estimate.studies.items():
        console.print(f"{study}: decisions {r['decisions_min']:,}–{r['decisions_max']:,}")
    usd = _num(t["usd"], True) if t["complete"] else (
        f"incomplete (unpriced: {', '.join(t['unpriced']) or 'none'}; no max_tokens bound: {', '.join(t['no_output_bound']) or 'none'})"
    )
    console.print(
        f"total: {t['calls']:,} calls ({t['model_calls']:,} to models, at most {t['calls_max']:,} with every re-ask), "
        f"{t['input_tokens']:,} input tokens, output ≤ {_num(t['output_tokens'])} tokens, {usd}; "
        f"{t['cache_hits']:,} cache hits; wall ≥ {t['wall_s_bound'] / 3600:,.2f} h "
        f"(critical path {t['critical_path_calls']} calls, latency {estimate.latency_s:g} s, cap {estimate.cap})"
    )
    if t["key_variables"]:
        console.print("API keys a run will need: " + ", ".join(t["key_variables"]))
    console.print("assumptions:\n  - " + "\n  - ".join(estimate.assumptions))

