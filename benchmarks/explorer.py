"""Benchmark of the explorer (docs/explorer.md#measurements): build time, peak RSS, sizes; page loads.

    PYTHONPATH=src python benchmarks/explorer.py results/coopeval.duckdb [--out DIR] [--browser] [--copies N]

The build runs in a child process (its peak RSS is the child's ``ru_maxrss``). With
``--browser`` the built site is opened from ``file://`` in headless Chromium (no network): the
time until the landing page shows the overview, until the largest episode's round table is
drawn and until a deep-linked decision shows; screenshots of the landing page, a CoopEval round,
a gossip timeline and a lineage tree go to ``--screenshots`` (default
``results/explorer/screenshots``). ``--copies N`` builds from a copy of the store with every
cell repeated N times (ids suffixed), a scale-up of the same episodes. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

BUILD = """
import json, sys
from coopeval.explorer import build_site
r = build_site(sys.argv[1], sys.argv[2])
print(json.dumps({"cells": r.cells, "decisions": r.decisions, "files": r.files, "bytes": r.bytes,
                  "largest": list(r.largest), "missing": r.missing, "build_s_inside": r.seconds}))
"""


def scaled_copy(store: Path, copies: int, out: Path) -> Path:
    """A store holding ``copies`` copies of every cell of ``store`` (cell and decision ids
    suffixed ``-<k>``): the same episodes, ``copies`` times as many, for a build at scale."""
    import duckdb

    con = duckdb.connect(str(out))
    try:
        quoted = str(store).replace("'", "''")
        con.execute(f"ATTACH '{quoted}' AS src (READ_ONLY)")
        tables = [r[0] for r in con.execute("SELECT table_name FROM information_schema.tables WHERE table_catalog = 'src'").fetchall()]
        for table in tables:
            names = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns WHERE table_catalog = 'src' AND table_name = ?", [table]).fetchall()}
            ids = [c for c in ("cell_id", "decision_id", "judge_decision_id") if c in names]
            if "cell_id" not in names:
                con.execute(f"CREATE TABLE {table} AS SELECT * FROM src.{table}")
                continue
            replace = ", ".join(f"{c} || '-' || copy_k AS {c}" for c in ids)
            con.execute(f"CREATE TABLE {table} AS SELECT * EXCLUDE (copy_k) REPLACE ({replace}) FROM src.{table}, range({copies}) AS r(copy_k)")
    finally:
        con.close()
    return out


def build(store: Path, out: Path) -> dict[str, Any]:
    """Build the site in a child process; its report plus wall time and peak RSS (MB)."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", BUILD, str(store), str(out)], capture_output=True, text=True)
    if result.returncode:
        raise SystemExit(f"build failed:\n{result.stderr[-3000:]}")
    wall = time.perf_counter() - started
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    figures["build_s"] = round(wall, 2)
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    return figures


def _payload(site: Path, relative: str) -> Any:
    text = (site / relative).read_text(encoding="ascii")
    return json.loads(text[len("CE.register(") : -3].partition(",")[2])


def _hash(**params: object) -> str:
    from urllib.parse import quote

    return "#" + "&".join(quote(k, safe="") + "=" + quote(str(v), safe="-_.!~*'()") for k, v in params.items())


def browse(site: Path, shots: Path, largest: str) -> dict[str, Any]:
    """Page-load times (s) in headless Chromium and the four screenshots; ``largest`` is the
    largest data file (the episode whose page is timed)."""
    from tests.explorer.browser import Chromium

    index = _payload(site, "data/index.js")
    largest_key = Path(largest).name.split(".")[0]  # data/ep/<key>.<part>.js
    biggest, episode = next(
        (c, e) for c in index["cells"] for e in _payload(site, f"data/cell/{c['cell_id']}.js")["episodes"] if e["key"] == largest_key
    )
    first: dict[str, Any] = {}
    for cell in index["cells"]:
        first.setdefault(cell["study"], cell)
    for cell in index["cells"]:  # prefer a Repetition cell and a gossip cell with the most kinds of agents
        if cell["study"] == "coopeval" and cell["mechanism"] == "Repetition" and first["coopeval"]["mechanism"] != "Repetition":
            first["coopeval"] = cell
        if cell["study"] == "gossip" and len(cell["agents"]) > len(first["gossip"]["agents"]):
            first["gossip"] = cell
    url = (site / "index.html").resolve().as_uri()
    out: dict[str, Any] = {}
    with Chromium(Path(tempfile.mkdtemp(prefix="explorer-profile-"))) as browser:

        def go(hash_: str) -> None:  # empty the page first: no wait may match the previous page
            browser.evaluate("document.getElementById('main') && (document.getElementById('main').textContent = '')")
            browser.open(url + hash_)

        browser.open(url)
        out["landing_s"] = round(browser.wait("document.querySelector('main h2')", "the overview"), 2)
        browser.screenshot(shots / "landing.png")
        go(_hash(view="ep", cell=biggest["cell_id"], m=episode["matchup"]))
        out["largest_episode_s"] = round(browser.wait("document.querySelector('table.rounds')", "the episode"), 2)
        out["largest_episode"] = {"cell": biggest["cell_id"], "matchup": episode["matchup"], "decisions": episode["decisions"], "parts": episode["parts"]}
        decision = _payload(site, f"data/ep/{episode['key']}.0.js")["decisions"][-1]["decision_id"]
        go(_hash(decision=decision))
        out["deep_link_s"] = round(browser.wait("document.querySelector('.decision')", "the decision"), 2)
        if "coopeval" in first:
            cell = _payload(site, f"data/cell/{first['coopeval']['cell_id']}.js")
            ep = cell["episodes"][-1]
            go(_hash(view="ep", cell=cell["cell_id"], m=ep["matchup"], round=ep["rounds"][0]))
            browser.wait("document.querySelector('.decision')", "a CoopEval round")
            browser.screenshot(shots / "coopeval_round.png")
        if "gossip" in first:
            go(_hash(view="cell", cell=first["gossip"]["cell_id"]))
            browser.wait("document.querySelector('table.timeline')", "a gossip timeline")
            browser.evaluate("document.querySelector('table.timeline').previousElementSibling.previousElementSibling.scrollIntoView()")
            browser.screenshot(shots / "gossip_timeline.png")
        if "evolution" in first:
            go(_hash(view="cell", cell=first["evolution"]["cell_id"]))
            browser.wait("document.querySelector('ul.lineage')", "a lineage tree")
            browser.evaluate("document.querySelector('ul.lineage').previousElementSibling.scrollIntoView()")
            browser.screenshot(shots / "lineage.png")
    out["screenshots"] = sorted(str(p) for p in shots.glob("*.png"))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="site folder (default: a temporary folder)")
    parser.add_argument("--browser", action="store_true", help="also time page loads in headless Chromium and take screenshots")
    parser.add_argument("--screenshots", type=Path, default=REPO / "results" / "explorer" / "screenshots")
    parser.add_argument("--copies", type=int, default=1, help="build from a store with every cell copied this many times (scale-up)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="explorer-site-"))
    store = args.store
    if args.copies > 1:
        store = scaled_copy(args.store, args.copies, Path(tempfile.mkdtemp(prefix="explorer-store-")) / "coopeval.duckdb")
    figures = build(store, out)
    figures["copies"] = args.copies
    figures["site"] = str(out)
    if args.browser:
        figures.update(browse(out, args.screenshots, figures["largest"][0]))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
