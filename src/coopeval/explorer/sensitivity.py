"""The prompt sensitivity page's data (docs/paraphrases.md#the-sensitivity-report), read from the
store's ``sensitivity_*`` tables (:mod:`coopeval.evaluation.sensitivity_store`).

A run with more than one prompt variant has rows there (one report per study that varies the
wording: CoopEval's normalised Mean and Fitness, gossip's cooperation ratio and discounted
return); a run without variants has none, and the landing page then shows no link to the page.
"""

from __future__ import annotations

from typing import Any

import duckdb

from coopeval.core.prompts import BASE_VARIANT
from coopeval.evaluation.sensitivity import SOURCES
from coopeval.evaluation.sensitivity_store import SENSITIVITY_SCHEMAS
from coopeval.explorer.queries import rows

__all__ = ["sensitivity_reports"]


def _variant_order(variant: str) -> tuple[bool, str]:
    return (variant != BASE_VARIANT, variant)


def _source_order(share: dict[str, Any]) -> tuple[int, str]:
    source = str(share["source"])
    return (SOURCES.index(source) if source in SOURCES else len(SOURCES), source)


def sensitivity_reports(con: duckdb.DuckDBPyConnection, tables: set[str]) -> list[dict[str, Any]]:
    """One entry per study with sensitivity rows: ``{"study", "metrics": [...]}``, each metric
    ``{"metric", "variants", "values", "shares", "orderings"}``:

    - ``variants``: the prompt variants, the base wording first, then by name;
    - ``values``: per model ``{"model", "values", "n_contexts"}``, ``values`` aligned with
      ``variants`` (None where the model has no value under that variant);
    - ``shares``: per source of variation ``{"source", "sum_sq", "df", "share"}``, in the
      report's order (model, prompt variant, interaction, context, residual);
    - ``orderings``: per pair ``{"a", "b", "deltas", "n_contexts", "holds"}``, ``deltas``
      (a − b) aligned with ``variants``.

    An empty list when the store lacks the tables or they are empty (a run without variants).
    """
    if not set(SENSITIVITY_SCHEMAS) <= tables:
        return []
    values = rows(con, "SELECT * FROM sensitivity_values ORDER BY study, metric, model, prompt_variant")
    if not values:
        return []
    shares = rows(con, "SELECT * FROM sensitivity_shares")
    orderings = rows(con, "SELECT * FROM sensitivity_orderings ORDER BY study, metric, a, b, prompt_variant")
    reports: dict[str, dict[str, dict[str, Any]]] = {}
    for r in values:
        metric = reports.setdefault(r["study"], {}).setdefault(r["metric"], {"metric": r["metric"], "variants": set(), "by_model": {}})
        metric["variants"].add(r["prompt_variant"])
        metric["by_model"].setdefault(r["model"], {})[r["prompt_variant"]] = (r["value"], r["n_contexts"])
    out = []
    for study, metrics in reports.items():
        entries = []
        for name, m in metrics.items():
            variants = sorted(m["variants"], key=_variant_order)
            entry = {
                "metric": name,
                "variants": variants,
                "values": [{"model": model, "values": [by_variant.get(v, (None, None))[0] for v in variants],
                            "n_contexts": max(n for _, n in by_variant.values())} for model, by_variant in m["by_model"].items()],
                "shares": sorted(({k: s[k] for k in ("source", "sum_sq", "df", "share")} for s in shares
                                  if s["study"] == study and s["metric"] == name), key=_source_order),
                "orderings": _orderings([o for o in orderings if o["study"] == study and o["metric"] == name], variants),
            }
            entries.append(entry)
        out.append({"study": study, "metrics": entries})
    return out


def _orderings(found: list[dict[str, Any]], variants: list[str]) -> list[dict[str, Any]]:
    pairs: dict[tuple[str, str], dict[str, Any]] = {}
    for o in found:
        pair = pairs.setdefault((o["a"], o["b"]), {"a": o["a"], "b": o["b"], "deltas": {}, "n_contexts": o["n_contexts"], "holds": o["holds"]})
        pair["deltas"][o["prompt_variant"]] = o["delta"]
    return [{**p, "deltas": [p["deltas"].get(v) for v in variants]} for p in pairs.values()]
