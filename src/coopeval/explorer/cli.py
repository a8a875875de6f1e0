"""``coopeval explore STORE --out DIR [--no-raw-replies]``: build the explorer of any store."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from coopeval.explorer.privacy import PRIVACY_NOTE

HELP = "build the explorer: a static site of every episode of a store (opens from file://)"
DESCRIPTION = (
    "Build a static site from a coopeval store (docs/explorer.md): run overview, leaderboards, every decision with its"
    " prompt, attempts and replies, side-by-side episodes, a search over the replies and exports. Open DIR/index.html"
    " in a browser; no server or network is needed. " + PRIVACY_NOTE
)


def add_explore_parser(subparsers: Any) -> None:
    """Register ``coopeval explore``."""
    parser = subparsers.add_parser("explore", help=HELP, description=DESCRIPTION)
    parser.add_argument("store", metavar="STORE", help="DuckDB store, e.g. results/coopeval.duckdb")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder (its data/ is replaced)")
    parser.add_argument(
        "--no-raw-replies",
        action="store_true",
        help="leave the models' raw replies and reasoning out (parsed answers stay), e.g. for a site to publish",
    )
    parser.set_defaults(handler=run_explore)


def run_explore(args: argparse.Namespace) -> int:
    """Build the site; 0 on success, 2 when the store or the output folder is unusable."""
    from coopeval.explorer.build import build_site  # DuckDB: imported only when a site is built
    from coopeval.explorer.extras import REBUILD

    try:
        report = build_site(args.store, args.out, raw_replies=not args.no_raw_replies)
    except (FileNotFoundError, FileExistsError) as exc:
        print(f"coopeval explore: error: {exc}", file=sys.stderr)
        return 2
    print(
        f"{report.out}/index.html: {report.cells} cells, {report.decisions} decisions, {report.files} files,"
        f" {report.bytes / 1e6:.1f} MB, largest {report.largest[0]} ({report.largest[1] / 1e6:.2f} MB), {report.seconds:.1f} s"
    )
    for study, tables in report.missing.items():
        print(f"study {study}: the store lacks {', '.join(tables)}; its pages show what the other tables hold")
    for study, tables in report.unreadable.items():
        print(f"study {study}: cannot read {'; '.join(tables)}: {REBUILD}; its pages show what the other tables hold")
    if report.stale_tables:
        print(f"coopeval explore: the leaderboard leaves the result tables out: {report.stale_tables}", file=sys.stderr)
    if report.shared_ids:
        print(f"{len(report.shared_ids)} decision id(s) occur in more than one cell (a store written before ids were unique),"
              f" e.g. {', '.join(report.shared_ids[:3])}; their #decision= links open the first cell's decision")  # fmt: skip
    print(PRIVACY_NOTE if not args.no_raw_replies else "Raw replies left out (--no-raw-replies); prompts are shown.")
    return 0
