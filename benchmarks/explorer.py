"""Benchmark of the explorer (docs/explorer.md#measurements): build time, peak RSS, sizes; page loads.

    PYTHONPATH=src python benchmarks/explorer.py results/coopeval.duckdb [--out DIR] [--browser] [--copies N] [--profile FILE]

The build runs in a child process (its peak RSS is the child's ``ru_maxrss``). With
``--browser`` the built site is opened from ``file://`` in headless Chromium (no network): the
time until the landing page shows the overview, until the largest episode's round table is
drawn, until a deep-linked decision shows and until a run-wide search for a rare word of the
replies has read every episode holding it, and until every chart of each study's leaderboard
page and of one CoopEval cell is drawn (``charts``: seconds, drawn, failed); screenshots of the
landing page, a CoopEval round, a gossip timeline, a lineage tree and those charts go to ``--screenshots`` (default
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
import cProfile, json, pstats, sys
from coopeval.explorer import build_site
profile = cProfile.Profile() if sys.argv[3] else None
if profile:
    profile.enable()
r = build_site(sys.argv[1], sys.argv[2])
if profile:
    profile.disable()
    profile.dump_stats(sys.argv[3])
    pstats.Stats(profile, stream=sys.stderr).sort_stats("cumulative").print_stats(25)
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


def build(store: Path, out: Path, profile: Path | None = None) -> dict[str, Any]:
    """Build the site in a child process; its report plus wall time and peak RSS (MB). With
    ``profile`` the build runs under cProfile: stats to that file, the top 25 to stderr."""
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", BUILD, str(store), str(out), str(profile or "")], capture_output=True, text=True)
    if result.returncode:
        raise SystemExit(f"build failed:\n{result.stderr[-3000:]}")
    if profile:
        print(result.stderr, file=sys.stderr)
    wall = time.perf_counter() - started
    figures = json.loads(result.stdout.strip().splitlines()[-1])
    figures["build_s"] = round(wall, 2)
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1)
    return figures


def _payload(site: Path, relative: str) -> Any:
    from coopeval.explorer.scripts import read_payload

    return read_payload((site / relative).read_text(encoding="ascii"))[1]


def _hash(**params: object) -> str:
    from urllib.parse import quote

    return "#" + "&".join(quote(k, safe="") + "=" + quote(str(v), safe="-_.!~*'()") for k, v in params.items())


def _rare_word(site: Path, index: dict[str, Any]) -> str | None:
    """A word of the run's replies held by the fewest episodes (the search the benchmark times)."""
    search = index.get("search")
    if not search:
        return None
    best: tuple[int, str] | None = None
    for b in range(0, search["buckets"], max(1, search["buckets"] // 16)):
        for word, episodes in _payload(site, f"data/words/{b}.js").items():
            if best is None or (len(episodes), word) < best:
                best = (len(episodes), word)
    return best[1] if best else None


def browse(site: Path, shots: Path, largest: str) -> dict[str, Any]:
    """Page-load times (s) in headless Chromium and the four screenshots; ``largest`` is the
    largest data file (the episode whose page is timed)."""
    from tests.explorer.browser import Chromium

    index = _payload(site, "data/index.js")
    largest_key = Path(largest).name.split(".")[0]  # data/ep/<key>.<part>.js
    biggest, episode = next(
        (c, e) for c in index["cells"] for e in _payload(site, f"data/cell/{c['file']}.js")["episodes"] if e["key"] == largest_key
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
        word = _rare_word(site, index)
        if word:
            go(_hash(view="search", q=word))
            done = "document.getElementById('search-progress') && document.getElementById('search-progress').className === 'done'"
            out["search_s"] = round(browser.wait(done, "the end of a search"), 2)
            out["search"] = {"word": word, "hits": browser.evaluate("document.querySelectorAll('table.search tr').length - 1")}
            browser.screenshot(shots / "search.png")
        if "coopeval" in first:
            cell = _payload(site, f"data/cell/{first['coopeval']['file']}.js")
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
        out["charts"] = charts(browser, go, first, shots)
    out["screenshots"] = sorted(str(p) for p in shots.glob("*.png"))
    return out


DRAWN = (
    "document.querySelectorAll('figure.chart').length > 0 && document.querySelectorAll('figure.chart:not([data-drawn])').length === 0"
    " && document.querySelectorAll('.chart-holder:empty').length === 0"
)
"""Every chart of the page loaded and drawn (or failed: ``data-drawn`` is then ``error``)."""


def charts(browser: Any, go: Any, first: dict[str, Any], shots: Path) -> dict[str, Any]:
    """Seconds until every chart of each study's leaderboard page (and of one CoopEval cell) is
    drawn, how many were drawn and how many failed; one screenshot of a chart of each page."""
    out: dict[str, Any] = {}
    pages = [(f"board_{s}", _hash(view="board", study=s), f"chart_board_{s}.png") for s in ("coopeval", "gossip", "evolution") if s in first]
    if "coopeval" in first:
        pages.append(("coopeval_cell", _hash(view="cell", cell=first["coopeval"]["cell_id"]), "chart_coopeval_cell.png"))
    for name, hash_, shot in pages:
        go(hash_)
        seconds = browser.wait(DRAWN, f"the charts of {name}")
        drawn = browser.evaluate("document.querySelectorAll('figure.chart[data-drawn=yes]').length")
        failed = browser.evaluate("document.querySelectorAll('figure.chart[data-drawn=error]').length")
        out[name] = {"s": round(seconds, 2), "drawn": drawn, "failed": failed}
        last = "gossip_cooperation" if name == "board_gossip" else ("evolution_resources" if name == "board_evolution" else "")
        target = f"figure.chart[data-kind={last}]" if last else "figure.chart"
        browser.evaluate(f"document.querySelector('{target}').scrollIntoView()")
        browser.screenshot(shots / shot)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("store", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="site folder (default: a temporary folder)")
    parser.add_argument("--browser", action="store_true", help="also time page loads in headless Chromium and take screenshots")
    parser.add_argument("--screenshots", type=Path, default=REPO / "results" / "explorer" / "screenshots")
    parser.add_argument("--copies", type=int, default=1, help="build from a store with every cell copied this many times (scale-up)")
    parser.add_argument("--profile", type=Path, default=None, help="run the build under cProfile, stats to this file (times are then longer)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="explorer-site-"))
    store = args.store
    if args.copies > 1:
        store = scaled_copy(args.store, args.copies, Path(tempfile.mkdtemp(prefix="explorer-store-")) / "coopeval.duckdb")
    figures = build(store, out, args.profile)
    figures["copies"] = args.copies
    figures["site"] = str(out)
    if args.browser:
        episodes = sorted((f.stat().st_size, f) for f in (out / "data" / "ep").glob("*.js"))  # the largest episode part, not a cell file
        figures.update(browse(out, args.screenshots, str(episodes[-1][1].relative_to(out))))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
