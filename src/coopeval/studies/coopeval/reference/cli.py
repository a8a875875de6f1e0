"""``coopeval reproduce DATA_DIR --out OUT_DIR``: regenerate the paper's tables from the released data.

Pipeline (issue 4): import (validated, all-or-nothing; :mod:`coopeval.studies.coopeval.reference.importer`) →
our evaluation of the imported scores (:func:`coopeval.studies.coopeval.tables.metrics.compute_metrics`, the same
path as our own runs) → tables (:func:`coopeval.studies.coopeval.tables.builder.build_tables`) → write
``OUT_DIR/coopeval.duckdb`` (imported tables + recomputed ``metrics`` + ``dr_comparison``) and
``per_game``, ``aggregate``, ``design_quality`` as CSV / Markdown / LaTeX. Nothing is written
unless the whole import validated; every file is written atomically.

Wiring: ``add_reproduce_parser(subparsers)`` registers the sub-command; its handler is
:func:`run_reproduce` (set as the parser's ``handler`` and ``func`` defaults). Exit codes: 0 ok,
2 invalid data or arguments (nothing written), 1 evaluation failure.

Why our exact deviation ratings can differ from the released ones (docs/protocol/evaluation.md#deviation-ratings): the reference
freezes every LP row that is tight at whatever vertex its solver (Gurobi barrier + crossover)
returned, which over-constrains later iterations when the optimal face has several vertices;
the result depends on solver and version. We use the unique strictest-CCE rule (face test) and
report it as ``DR_exact``; the table's ``DR`` ingests the released ratings where they exist.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coopeval.evaluation.dr_rules import DR_RULE_ALIASES
from coopeval.studies.coopeval.tables.defaults import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    DEFAULT_TABLE_SETTINGS,
    TableSettings,
)

if TYPE_CHECKING:  # heavy modules are imported lazily so that ``coopeval --help`` stays fast
    import polars as pl

    from coopeval.studies.coopeval.reference.importer import ReferenceData
    from coopeval.studies.coopeval.tables.frames import TableSet

__all__ = ["STORE_NAME", "ReproduceResult", "add_reproduce_parser", "dr_comparison", "reproduce", "run_reproduce"]

STORE_NAME = "coopeval.duckdb"


@dataclass
class ReproduceResult:
    """What :func:`reproduce` produced.

    Attributes
    ----------
    store:
        Path of the DuckDB file.
    files:
        Written table files (CSV, Markdown, LaTeX).
    data:
        The imported frames.
    metrics:
        Our recomputed ``metrics`` frame.
    tables:
        The built tables.
    seconds:
        Wall time per phase (``import``, ``evaluate``, ``tables``, ``write``, ``total``).
    """

    store: Path
    files: list[Path]
    data: ReferenceData
    metrics: pl.DataFrame
    tables: TableSet
    seconds: dict[str, float]


def dr_comparison(metrics: pl.DataFrame, released: pl.DataFrame) -> pl.DataFrame:
    """Released vs strictest-CCE ratings per cell and agent (``dr_comparison`` table).

    ``equal`` is |released − strictest| ≤ 1e−9. Cells without released ratings are left out.
    """
    import polars as pl

    from coopeval.studies.coopeval.reference.schemas import conform_any

    ours = metrics.filter((pl.col("rule") == "strictest") & pl.col("metric").is_in(["DR", "DR_rank"]))
    rel = released.filter(pl.col("metric").is_in(["DR", "DR_rank"]))
    if ours.is_empty() or rel.is_empty():
        return conform_any("dr_comparison", pl.DataFrame())
    keys = ["cell_id", "source", "run", "mechanism", "game", "agent"]
    wide_ours = ours.pivot(on="metric", index=keys, values="value").rename({"DR": "strictest", "DR_rank": "strictest_rank"})
    wide_rel = rel.pivot(on="metric", index=keys, values="value").rename({"DR": "released", "DR_rank": "released_rank"})
    joined = wide_rel.join(wide_ours, on=keys, how="inner").with_columns(
        ((pl.col("released") - pl.col("strictest")).abs() <= 1e-9).alias("equal")
    )
    return conform_any("dr_comparison", joined.sort(keys))


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def reproduce(
    data_dir: str | Path,
    out_dir: str | Path,
    *,
    settings: TableSettings = DEFAULT_TABLE_SETTINGS,
    progress: Callable[[str], None] | None = _stderr,
) -> ReproduceResult:
    """Import released data, evaluate it through our path, and write the store and tables.

    Parameters
    ----------
    data_dir:
        One run folder or a folder of run folders (each run is one replicate).
    out_dir:
        Output folder; receives ``coopeval.duckdb`` and ``{per_game,aggregate,
        design_quality}.{csv,md,tex}``.
    settings:
        :class:`~coopeval.studies.coopeval.tables.defaults.TableSettings`: the rule for ``DR``
        where no released ratings exist (``"strictest"`` or ``"reference-vertex"``; ``DR_exact``
        is always strictest-CCE); bootstrap resamples for the Mean/Fitness intervals (0
        disables) and seed; replicator steps and lr of both the Fitness point estimates and
        their bootstrap intervals (defaults: config schema ``evaluation.steps`` /
        ``evaluation.lr``); the tables' agent column order and labels (e.g. from
        ``config/paper.yaml`` with
        :func:`coopeval.studies.coopeval.tables.roster.roster_file_agents`; default sorted type
        strings).
    progress:
        Receives one line per experiment (import and evaluation); default: stderr.

    Returns
    -------
    ReproduceResult

    Raises
    ------
    coopeval.studies.coopeval.reference.importer.ReferenceImportError
        If any file is missing or malformed; nothing is written then.
    ValueError
        On an unknown ``settings.dr_rule``.
    """
    from coopeval.evaluation.deviation import canonical_rule
    from coopeval.studies.coopeval.reference.importer import import_reference
    from coopeval.studies.coopeval.reference.store import write_store
    from coopeval.studies.coopeval.tables.builder import build_tables
    from coopeval.studies.coopeval.tables.metrics import compute_metrics
    from coopeval.studies.coopeval.tables.render import write_tables

    settings = replace(settings, dr_rule=canonical_rule(settings.dr_rule))
    seconds: dict[str, float] = {}
    t0 = time.perf_counter()
    data = import_reference(data_dir, progress=progress)
    seconds["import"] = time.perf_counter() - t0

    t = time.perf_counter()
    metrics = compute_metrics(
        data["scores"], dr_rules=("strictest", settings.dr_rule), steps=settings.steps, lr=settings.lr, progress=progress
    )
    seconds["evaluate"] = time.perf_counter() - t

    t = time.perf_counter()
    tables = build_tables(
        metrics,
        released=data["released_metrics"],
        scores=data["scores"],
        designs=data["designs"],
        settings=settings,
        progress=progress,
    )
    seconds["tables"] = time.perf_counter() - t

    t = time.perf_counter()
    out = Path(out_dir)
    frames = dict(data.frames)
    frames["metrics"] = metrics
    frames["dr_comparison"] = dr_comparison(metrics, data["released_metrics"])
    frames["table_per_game"] = tables.per_game
    frames["table_aggregate"] = tables.aggregate
    frames["table_design_quality"] = tables.design_quality
    metadata = {
        "data_dir": str(Path(data_dir).resolve()),
        "runs": ",".join(data.runs),
        "dr_rule": settings.dr_rule,
        "bootstrap_resamples": str(settings.n_bootstrap),
        "bootstrap_seed": str(settings.seed),
    }
    store = write_store(frames, out / STORE_NAME, metadata=metadata)
    files = write_tables(tables, out)
    seconds["write"] = time.perf_counter() - t
    seconds["total"] = time.perf_counter() - t0
    if progress is not None:
        progress(f"wrote {store} and {len(files)} table files in {seconds['total']:.1f} s")
    return ReproduceResult(store=store, files=files, data=data, metrics=metrics, tables=tables, seconds=seconds)


def add_reproduce_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``reproduce`` on an argparse sub-parser set.

    The handler :func:`run_reproduce` is set as both ``handler`` and ``func`` defaults; heavy
    modules are imported only when it runs.
    """
    parser = subparsers.add_parser(
        "reproduce",
        help="regenerate the paper's tables from the authors' released data",
        description="Import released CoopEval data (a run folder or a folder of run folders), evaluate it "
        "with coopeval, and write OUT_DIR/coopeval.duckdb plus per_game/aggregate/design_quality "
        "tables as CSV, Markdown and LaTeX.",
    )
    parser.add_argument("data_dir", metavar="DATA_DIR", type=Path, help="run folder or folder of run folders")
    parser.add_argument("--out", "-o", dest="out_dir", type=Path, required=True, metavar="OUT_DIR", help="output folder")
    parser.add_argument(
        "--dr-rule",
        default="strictest",
        choices=list(DR_RULE_ALIASES),
        help="deviation-rating rule where no released ratings exist (default: strictest)",
    )
    parser.add_argument("--bootstrap", type=int, default=DEFAULT_RESAMPLES, help="bootstrap resamples (0 = off)")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED, help="bootstrap seed")
    parser.add_argument(
        "--roster",
        type=Path,
        metavar="CONFIG",
        help="config whose agents give the tables' column order and labels (e.g. config/paper.yaml)",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.set_defaults(handler=run_reproduce, func=run_reproduce)
    return parser


def run_reproduce(args: argparse.Namespace) -> int:
    """Handler of ``coopeval reproduce``.

    Returns the exit code: 0 success; 2 invalid data (missing or malformed files, each named on
    stderr; nothing written) or bad arguments; 1 when the evaluation of valid data fails.
    """
    from coopeval.evaluation.deviation import DeviationRatingError
    from coopeval.studies.coopeval.reference.importer import ReferenceImportError

    if args.bootstrap < 0:
        print("coopeval reproduce: error: --bootstrap must be >= 0", file=sys.stderr)
        return 2
    if Path(args.out_dir).exists() and not Path(args.out_dir).is_dir():
        print(f"coopeval reproduce: error: --out {args.out_dir} is a file; pass a folder (it is created if missing)", file=sys.stderr)
        return 2
    try:
        columns = None
        if args.roster is not None:
            from coopeval.studies.coopeval.tables.roster import roster_file_agents

            columns = roster_file_agents(args.roster)
        reproduce(
            args.data_dir,
            args.out_dir,
            settings=TableSettings(dr_rule=args.dr_rule, n_bootstrap=args.bootstrap, seed=args.seed, columns=columns),
            progress=None if args.quiet else _stderr,
        )
    except ReferenceImportError as exc:
        print(f"coopeval reproduce: error: {exc}", file=sys.stderr)
        return 2
    except (DeviationRatingError, ValueError) as exc:
        print(f"coopeval reproduce: error: evaluation failed: {exc}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """Stand-alone entry point (``python -m coopeval.studies.coopeval.reference.cli reproduce …``)."""
    parser = argparse.ArgumentParser(prog="coopeval")
    subparsers = parser.add_subparsers(dest="command", required=True)
    add_reproduce_parser(subparsers)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
