"""The model-against-model page's data: the store's paired comparisons, each linked to the cells behind it.

Every row of the ``comparisons`` table (docs/comparisons.md; the workflow's paired differences
Δ = a − b with their interval, p after the family's correction and minimum detectable effect)
becomes one row of ``data/pairs.js``; the page (``pairs.js``, ``#view=pairs&study=<study>&a=<agent>&b=<agent>``)
keeps the rows of the two agents picked, turned so that Δ is always the first minus the second,
and draws them with the ``pairs`` chart kind (:func:`coopeval.explorer.charts.pairs_kind`) beside
their table, one chart per study, metric and unit (CoopEval's normalised ``<mechanism>/All`` rows
apart from its raw points).

Each row carries what the page needs to read it: the metric's name and unit
(:data:`METRIC_TEXT`), which direction is better, the scope's parts the page filters by, what
the row can claim (:func:`coopeval.comparison.evidence.verdict`: a difference of one replicate
with a zero-width interval, or of too few clusters to test, is not shown significant) and the
link to exactly the cells it compared (the two agents' cells of that scope and variant).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import duckdb

from coopeval.comparison.evidence import verdict
from coopeval.explorer.queries import columns, rows

__all__ = ["METRIC_TEXT", "pair_rows", "pairs_info", "prompt_variants", "scope_href", "used_cells"]

FIELDS = ("study", "scope", "metric", "a", "b", "delta", "ci_low", "ci_high", "p_adjusted", "correction", "mde", "n_clusters")
"""The columns of ``comparisons`` the page shows (those a store has)."""

HIGHER = "higher is better: Δ > 0 means the first is ahead"
METRIC_TEXT: dict[tuple[str, str], tuple[str, str, str]] = {
    ("coopeval", "Mean"): ("Mean payoff", "points", HIGHER),
    ("coopeval", "Mean/All"): ("Mean payoff over the four social dilemmas, normalised", "normalised units, (x − NE) / (coop − NE)", HIGHER),
    ("coopeval", "Fitness"): ("replicator Fitness", "population share", HIGHER),
    ("coopeval", "DR"): ("DR rank", "rank, 1 = best", "lower is better: Δ > 0 means the first ranks worse"),
    ("coopeval", "DR/All"): ("DR rank, mean over the four social dilemmas", "rank, 1 = best", "lower is better: Δ > 0 means the first ranks worse"),
    ("gossip", "cooperation_ratio_mean"): ("cooperation ratio (mean over the run's agents)", "share of cooperative actions", HIGHER),
    ("gossip", "discounted_return_mean"): ("discounted return G (mean over the run's agents)", "payoff units", HIGHER),
    ("gossip", "gini"): ("Gini of the discounted returns", "Gini, 0 = equal", "lower is more equal: Δ > 0 means the first's returns are less equal"),
    ("gossip", "utility_gap"): ("utility gap, honest − attackers", "payoff units", HIGHER),
    ("evolution", "donation_fraction"): ("donation fraction, last generation", "share of resources donated", HIGHER),
    ("evolution", "mean_final"): ("mean final resources, last generation", "resources", HIGHER),
    ("evolution", "robustness"): ("robustness to the invasion test", "share of tests withstood", HIGHER),
}
"""(study, metric; CoopEval's ``<metric>/All`` for the normalised rows over the games) → (the
metric's name, its unit, which direction is better) as the page writes them (docs/comparisons.md)."""

SCOPE_PARTS = {"coopeval": ("mechanism", "game"), "gossip": ("testbed", "condition", "matching"), "evolution": ("protocol", "variant")}
"""Study → the parts of its scope (``/``-joined), as :mod:`coopeval.comparison` writes them."""


def _parts(study: str, scope: str) -> dict[str, str]:
    names = SCOPE_PARTS.get(study, ())
    values = scope.split("/")
    out = dict(zip(names, values, strict=False))
    if study == "coopeval" and len(values) > 2:
        out["level"] = "/".join(values[2:])  # a further design factor (a prompt variant)
    return out


def _aggregate_games() -> tuple[str, ...]:
    from coopeval.games import SOCIAL_DILEMMA_TYPES

    return tuple(SOCIAL_DILEMMA_TYPES)


def used_cells(study: str, scope: str, a: str, b: str, cells: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cells of the index (``cells``: the build's list) a comparison of ``a`` and ``b`` on
    ``scope`` used: CoopEval, the default-variant cells of the mechanism and game (``All``: the
    four social dilemmas) seating both agents (the comparisons read the default variant only,
    :mod:`coopeval.studies.coopeval.compare_store`); gossip, the two models' cells of the testbed,
    condition and matching; evolution, their cells of the protocol and variant."""
    parts = _parts(study, scope)
    pair = {a, b}
    if study == "coopeval":
        games = _aggregate_games() if parts.get("game") == "All" else (parts.get("game"),)
        wanted = prompt_variants(parts.get("level"))
        return [c for c in cells if c["study"] == "coopeval" and c["mechanism"] == parts.get("mechanism") and c["game"] in games
                and c.get("variant", "default") in wanted and pair <= set(c["agents"])]  # fmt: skip
    if study == "gossip":
        return [c for c in cells if c["study"] == "gossip" and c["game"] == parts.get("testbed") and c["mechanism"] == parts.get("condition")
                and c.get("matching", parts.get("matching")) == parts.get("matching") and _model(c) in pair]  # fmt: skip
    return [c for c in cells if c["study"] == "evolution" and c["mechanism"] == f"evolution/{parts.get('protocol')}"
            and c.get("variant", parts.get("variant")) == parts.get("variant") and _model(c) in pair]  # fmt: skip


def prompt_variants(level: str | None) -> tuple[str, ...]:
    """The cell variants of a CoopEval scope's level: none, the default variant; a prompt variant
    ``<level>`` (scope ``<mechanism>/<game>/<level>``), the default variant in that wording
    (``default@<level>``, :func:`coopeval.studies.coopeval.cells.manifest_variant`), or a level already
    written as a variant. Never the base wording's cells, nor another group size's."""
    if level is None:
        return ("default",)
    return (level,) if "@" in level else (f"default@{level}",)


def _model(cell: dict[str, Any]) -> str | None:
    if cell.get("model") is not None:
        return str(cell["model"])
    return str(cell["agents"][0]) if len(cell["agents"]) == 1 else None


def scope_href(study: str, scope: str, a: str | None = None, b: str | None = None, games: Sequence[str] | None = None,
               variants: bool = False) -> str:  # fmt: skip
    """The cells page narrowed to a comparison's cells: CoopEval ``<mechanism>/<game>`` (``All``:
    ``games``, the aggregate's games, comma-separated) of the default variant when the store's
    cells have variants, ``<mechanism>/<game>/<level>`` of that prompt variant's cells only
    (:func:`prompt_variants`), gossip ``<testbed>/<condition>/<matching>``, evolution
    ``<protocol>/<variant>``; ``a`` and ``b`` the two agents (the cells page keeps CoopEval cells
    seating both, a population study's cells of either model)."""
    from coopeval.explorer.charts import href

    parts = _parts(study, scope)
    if study == "coopeval":
        game = parts.get("game")
        if game == "All":
            game = ",".join(games or _aggregate_games())
        variant = prompt_variants(parts.get("level"))[0] if variants or parts.get("level") else None
        return href(view="cells", study=study, mechanism=parts.get("mechanism"), variant=variant, game=game, a=a, b=b)
    if study == "gossip":
        return href(view="cells", study=study, mechanism=parts.get("condition"), game=parts.get("testbed"), matching=parts.get("matching"), a=a, b=b)
    return href(view="cells", study=study, mechanism=f"evolution/{parts.get('protocol')}", variant=parts.get("variant"), a=a, b=b)


def _text(study: str, metric: str, scope: str) -> tuple[str, str, str]:
    over = study == "coopeval" and _parts(study, scope).get("game") == "All"
    found = METRIC_TEXT.get((study, f"{metric}/All" if over else metric)) or METRIC_TEXT.get((study, metric))
    return found or (metric, "the metric's units", HIGHER)


def pair_rows(con: duckdb.DuckDBPyConnection, tables: set[str], cells: Sequence[dict[str, Any]] = ()) -> list[dict[str, Any]]:
    """Every ``comparisons`` row with what the page shows beside its numbers, ordered by study,
    scope and metric; none without the table.

    Added per row: ``label`` (:data:`METRIC_TEXT`; its unit and direction are the index's, once per
    label: :func:`pairs_info`), the scope's parts (``mechanism``/``game``, ``testbed``/
    ``condition``/``matching``, ``protocol``/``variant``), ``evidence`` and ``why``
    (:func:`coopeval.comparison.evidence.verdict`, with the replicates of the cells used), ``href``
    (those cells, :func:`scope_href`) and ``cells`` (how many).
    """
    if "comparisons" not in tables:
        return []
    present = [f for f in FIELDS if f in columns(con, "comparisons")]
    if not {"study", "scope", "metric", "a", "b", "delta"} <= set(present):
        return []
    found = rows(con, f"SELECT {', '.join(present)} FROM comparisons ORDER BY study, scope, metric, a, b")
    variants = any("variant" in c for c in cells if c["study"] == "coopeval")
    for r in found:
        study, scope, a, b = str(r["study"]), str(r["scope"]), str(r["a"]), str(r["b"])
        r["label"] = _text(study, str(r["metric"]), scope)[0]  # its unit and direction: once per label, in the index (pairs_info)
        r.update(_parts(study, scope))
        used = used_cells(study, scope, a, b, cells) if cells else []
        replicates = len({c["run"] for c in used}) if used else None
        if study != "coopeval" and r.get("n_clusters") is not None:
            replicates = int(r["n_clusters"])  # a population study's cluster is one replicate
        r["evidence"], r["why"] = verdict(r, replicates)
        games = sorted({str(c["game"]) for c in used}) if used else None
        r["href"] = scope_href(study, scope, a, b, games=games, variants=variants)
        r["cells"] = len(used) if cells else None
    return found


def pairs_info(found: Sequence[dict[str, Any]], cells: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    """The index's summary of the page's rows: ``count``, ``agents`` (every agent compared),
    ``studies`` (per study its agents and ``first``, a pair the page can open on), and
    ``uncompared``: the CoopEval variants (other than the default and the prompt variants of
    ``<mechanism>/<game>/<level>`` rows) the comparisons do not cover,
    each ``<mechanism> (<variant>, N = …)``, which the page names; ``texts``: per metric label
    its unit and which direction is better (:data:`METRIC_TEXT`)."""
    studies: dict[str, dict[str, Any]] = {}
    for r in found:
        entry = studies.setdefault(str(r["study"]), {"agents": set(), "first": [str(r["a"]), str(r["b"])]})
        entry["agents"].update((str(r["a"]), str(r["b"])))
    covered = {(str(r["mechanism"]), v) for r in found if r.get("study") == "coopeval" and r.get("level") for v in prompt_variants(str(r["level"]))}
    other = sorted({(str(c["mechanism"]), str(c["variant"]), c.get("players")) for c in cells
                    if c["study"] == "coopeval" and c.get("variant") not in (None, "default")
                    and (str(c["mechanism"]), str(c["variant"])) not in covered}, key=str)  # fmt: skip
    uncompared = [f"{m} ({v}{'' if n is None else f', N = {n}'})" for m, v, n in other]
    texts = {str(r["label"]): _text(str(r["study"]), str(r["metric"]), str(r["scope"]))[1:] for r in found if "label" in r}
    return {"count": len(found), "agents": sorted({str(r[k]) for r in found for k in ("a", "b")}),
            "studies": {s: {"agents": sorted(e["agents"]), "first": e["first"]} for s, e in sorted(studies.items())},
            "uncompared": uncompared, "texts": {label: list(text) for label, text in texts.items()}}  # fmt: skip
