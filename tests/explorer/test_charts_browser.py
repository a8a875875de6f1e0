"""Every chart of the explorer in a real headless Chromium, from ``file://`` with no network.

For each chart kind: it draws one mark per row of its data (points, or bars for the tones),
each mark's description (Vega's ``aria-label``) carries that row's numbers; its table toggle
shows exactly those rows and numbers; a click on a mark opens the row's page (a list of cells,
an episode's round or a cell), which then shows what the row is about. Screenshots of each
chart go to ``results/explorer/screenshots/chart_<kind>.png`` (``COOPEVAL_SCREENSHOTS``).
Skipped without ``/usr/bin/chromium`` unless ``COOPEVAL_REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import duckdb
import pytest

from coopeval.explorer import build_site
from tests.explorer.browser import Chromium, require_chromium
from tests.explorer.fake_store import make_store, read_data
from tests.explorer.test_site_browser import SCREENSHOTS, go

TRAJECTORY = [(step, agent, share) for step in range(5) for agent, share in (("model-x", 0.5 + 0.1 * step), ("model-y", 0.5 - 0.1 * step))]
"""A replicator trajectory of cellA: model-x's share grows 0.5 → 0.9 over steps 0–4."""

HONEST_TONES = [("cellG", 1, "praising"), ("cellG", 2, "criticism"), ("cellH", 2, "criticism")]
"""Gossip rounds of honest witnesses added to the fake store: (cell, round, tone)."""


def _store(path: Path) -> Path:
    make_store(path)
    with duckdb.connect(str(path)) as con:
        for step, agent, share in TRAJECTORY:
            con.execute("INSERT INTO trajectories (step, agent, share, cell_id, mechanism, game, run) VALUES (?, ?, ?, 'cellA', 'Repetition', 'prisoners_dilemma', 'r1')",
                        [step, agent, share])  # fmt: skip
        for cell, rnd, tone in HONEST_TONES:
            con.execute("INSERT INTO gossip_rounds (cell_id, run, testbed, condition, model, round, first_agent, second_agent, first_kind, second_kind,"
                        " first_action, second_tone, status) VALUES (?, 'r1', 'donation', 'align', 'model-g', ?, 'Kate', 'John', 'honest', 'honest',"
                        " 'defect', ?, 'ok')", [cell, rnd, tone])  # fmt: skip
    return path


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    require_chromium()
    root = tmp_path_factory.mktemp("charts")
    build_site(_store(root / "coopeval.duckdb"), root / "site")
    return root / "site"


@pytest.fixture(scope="module")
def browser(site, tmp_path_factory):
    with Chromium(tmp_path_factory.mktemp("profile")) as chromium:
        yield chromium


CHARTS = [
    ("#view=board&study=coopeval", "board:coopeval:mean", "Cells of coopeval"),
    ("#view=board&study=gossip", "board:gossip:coop", "Cells of gossip"),
    ("#view=board&study=evolution", "board:evolution:final", "Cells of evolution"),
    ("#view=cell&cell=cellA", "cooperation", "Round "),
    ("#view=cell&cell=cellA", "trajectory", "matching decision(s)"),
    ("#view=board&study=gossip", "gossip_cooperation", "Round "),
    ("#view=board&study=gossip", "gossip_tones", "Round "),
    ("#view=board&study=evolution", "evolution_resources", "Cell "),
    ("#view=board&study=evolution", "evolution_donation", "Cell "),
]
"""(page, chart kind, a text of the page its first mark opens)."""


def _instance(site: Path, page: str, kind: str) -> dict[str, Any]:
    if page.startswith("#view=cell&"):
        cell = page.rsplit("=", 1)[1]
        return next(c for c in read_data(site, f"data/cell/{cell}.js")["charts"] if c["kind"] == kind)
    listed = next(c for c in read_data(site, "data/index.js")["charts"]["charts"] if c["kind"] == kind)
    return {**listed, "rows": read_data(site, f"data/charts/{listed['file']}.js")}


def _described(label: str) -> dict[str, str]:
    """Vega's mark description ``"a: 1; b: x"`` as a dict."""
    return dict(part.split(": ", 1) for part in label.split("; "))


def _matches(row: dict[str, Any], described: dict[str, str]) -> bool:
    for key, value in row.items():
        if key == "href" or key not in described:
            continue
        shown = described[key]
        if isinstance(value, int | float) and not isinstance(value, bool):
            if not math.isclose(float(shown), value, abs_tol=5e-4):
                return False
        elif shown != ("null" if value is None else str(value)):
            return False
    return True


@pytest.mark.parametrize(("page", "kind", "lands"), CHARTS, ids=[c[1] for c in CHARTS])
def test_chart_draws_its_rows_shows_them_as_a_table_and_links_to_their_episodes(site, browser, page, kind, lands):
    instance = _instance(site, page, kind)
    fields = read_data(site, "data/index.js")["charts"]["kinds"][kind]["fields"]
    rows = instance["rows"]
    assert rows
    go(browser, site, page)
    browser.evaluate(  # the page's Content-Security-Policy must let the charts draw without a violation (no eval, no inline style)
        "window.CSP || (window.CSP = [], document.addEventListener('securitypolicyviolation', function (e) { CSP.push(e.violatedDirective + ' ' + e.blockedURI); }))"
    )
    figure = f"figure.chart[data-kind={json.dumps(kind)}]"
    browser.wait(f"document.querySelector('{figure}[data-drawn]')", f"the chart {kind}")
    assert browser.evaluate(f"document.querySelector('{figure}').getAttribute('data-drawn')") == "yes"
    assert browser.evaluate("window.CSP") == []
    scripts = browser.evaluate("Array.prototype.map.call(document.scripts, function (s) { return s.src; })")
    assert all(s.startswith(site.resolve().as_uri() + "/") for s in scripts), scripts  # the chart scripts come from the site itself
    assert {s.rsplit("/", 1)[1] for s in scripts} >= {"vega.min.js", "vega-lite.min.js", "vega-embed.min.js", "vega-interpreter.js"}
    marks = f"{figure} .role-mark.mark-symbol [role=graphics-symbol], {figure} .role-mark.mark-rect [role=graphics-symbol]"
    labels = browser.evaluate(f"Array.prototype.map.call(document.querySelectorAll({json.dumps(marks)}), function (e) {{ return e.getAttribute('aria-label'); }})")
    assert len(labels) == len(rows)  # one point (or bar) per row
    described = [_described(label) for label in labels]
    for row in rows:  # every row's numbers are on one of the marks
        assert any(_matches(row, d) for d in described), (row, described)
    # the table: hidden until toggled, then the same rows with the same numbers
    assert browser.evaluate(f"document.querySelector('{figure} table.chart-data').hidden") is True
    browser.click(f"{figure} button.toggle")
    assert browser.evaluate(f"document.querySelector('{figure} table.chart-data').hidden") is False
    assert browser.evaluate(f"document.querySelector('{figure} button.toggle').getAttribute('aria-expanded')") == "true"
    table = browser.evaluate(
        f"Array.prototype.map.call(document.querySelectorAll('{figure} table.chart-data tr'), function (tr) {{"
        " return Array.prototype.map.call(tr.children, function (c) { var a = c.querySelector('a'); return a ? a.getAttribute('href') : c.textContent; }); })"
    )
    assert table[0] == [label for _, label in fields] + ["episodes"]
    assert len(table) == len(rows) + 1
    for row, shown in zip(rows, table[1:], strict=True):
        for (key, _), text in zip(fields, shown, strict=False):
            value = row.get(key)
            if isinstance(value, float):
                assert float(text) == pytest.approx(value, abs=5e-4), (key, text, value)
            else:
                assert text == ("" if value is None else str(value)), (key, text, value)
        assert shown[-1] == row["href"]
    browser.evaluate(f"document.querySelector('{figure}').scrollIntoView()")
    browser.screenshot(SCREENSHOTS / f"chart_{kind.replace(':', '_')}.png")
    # a click on the first mark opens that row's page
    first = next(row for row in rows if _matches(row, described[0]))
    browser.evaluate(
        f"(function () {{ var e = document.querySelector({json.dumps(marks)}); var r = e.getBoundingClientRect();"
        " e.dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2 })); })()"
    )
    at = read_data(site, "data/index.js")["charts"]["kinds"][kind].get("at", [])
    here = [r for r in rows if at and all(r[f] == first[f] for f in at)]
    if len({r["href"] for r in here}) > 1:  # coinciding marks (issue 41 item 5): a list of each one's page
        browser.wait(f"!document.querySelector('{figure} .chart-picks').hidden", "the list of coinciding marks")
        links = browser.evaluate(f"Array.prototype.map.call(document.querySelectorAll('{figure} .chart-picks a'), function (a) {{ return a.getAttribute('href'); }})")
        assert links == [r["href"] for r in here]
        browser.click(f"{figure} .chart-picks a[href={json.dumps(first['href'])}]")
    browser.wait(f"location.hash === {json.dumps(first['href'])}", f"the page of {first}")
    browser.wait(f"document.getElementById('main').innerText.indexOf({json.dumps(lands)}) >= 0", f"{lands!r} on the page a mark of {kind} opens")
