"""Charts that say the right thing (issue 41), in a real headless Chromium from ``file://``.

The fake store of :mod:`tests.explorer.fake_store` gets: two evolution models of one protocol
and variant (their lines must stay apart), a gossip condition with collusive attackers beside
two models (their defections must not count as the model's), twelve gossip conditions (more
than any ten-colour palette) and trust rounds (no action to count). Each check reads the drawn
SVG (marks, their colours and descriptions) and compares it with SQL on the store; screenshots
go to ``results/explorer/screenshots/semantics_<name>.png``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from tests.explorer.browser import Chromium, built_site
from tests.explorer.fake_store import make_store, read_data
from tests.explorer.test_site_browser import SCREENSHOTS, go

CONDITIONS = [f"cond{k:02d}" for k in range(12)]
"""Gossip conditions of the colour check: more than a ten-colour palette has."""


def _store(path: Path) -> Path:
    make_store(path)
    evo = "INSERT INTO evo_generations (cell_id, source, run, protocol, model, variant, generation, mean_final, donation_fraction) VALUES (?, 'ours', 'r1', 'vh', ?, 'default', ?, ?, ?)"
    rounds = ("INSERT INTO gossip_rounds (cell_id, run, testbed, condition, model, round, first_agent, second_agent, first_kind, second_kind,"
              " first_action, status) VALUES (?, 'r1', ?, ?, ?, ?, ?, 'Kate', ?, 'honest', ?, 'ok')")  # fmt: skip
    with duckdb.connect(str(path)) as con:
        for style, attempts in (("IO", 1), ("CoT", 3)):  # one model as two agents, as the leaderboards list them
            for attempt in range(attempts):
                con.execute("INSERT INTO llm_calls (cell_id, run, study, decision_id, attempt, agent, model, kind, prompt_tokens, completion_tokens, cost_usd)"
                            " VALUES ('cellA', 'r1', 'coopeval', ?, ?, ?, 'm', 'action', 10, 2, 0.5)", [f"dM-{style}", attempt, f"m({style})"])  # fmt: skip
        for scope, delta, lo, hi, p, mde in (("Repetition/prisoners_dilemma", 1.0, 0.5, 1.5, 0.01, 0.3), ("Repetition/stag_hunt", 3.0, -1.0, 7.0, 0.4, 5.0)):
            con.execute("INSERT INTO comparisons (study, scope, metric, a, b, delta, ci_low, ci_high, p_adjusted, correction, mde, n_clusters)"
                        " VALUES ('coopeval', ?, 'Mean', 'model-x', 'model-y', ?, ?, ?, ?, 'holm', ?, 12)", [scope, delta, lo, hi, p, mde])  # fmt: skip
        for generation, final in ((1, 5.0), (2, 45.0)):  # a second evolution model beside model-e (20 → 30)
            con.execute(evo, ["cellF", "model-f", generation, final, 0.25])
        for model in ("model-g", "model-h"):
            cell = f"coll-{model}"
            for rnd in (1, 2):
                con.execute(rounds, [cell, "donation", "collusive", model, rnd, "Ann", "honest", "cooperate"])
                con.execute(rounds, [cell, "donation", "collusive", model, rnd, "Bob", "honest", "cooperate" if rnd == 1 else "defect"])
                con.execute(rounds, [cell, "donation", "collusive", model, rnd, "Eve", "attacker", "defect"])
            con.execute(rounds, [f"trust-{model}", "trust", "align", model, 1, "Ann", "honest", None])
            for k, condition in enumerate(CONDITIONS):
                con.execute("INSERT INTO gossip_run_metrics (cell_id, run, testbed, condition, model, cooperation_ratio_mean, gini) VALUES (?, 'r1', 'donation', ?, ?, ?, 0.1)",
                            [f"{condition}-{model}", condition, model, 0.05 * k + (0.01 if model == "model-h" else 0.0)])  # fmt: skip
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    return built_site(tmp_path_factory, "semantics", _store)


@pytest.fixture(scope="module")
def browser(built, tmp_path_factory):
    with Chromium(tmp_path_factory.mktemp("profile"), size=(1400, 1000)) as chromium:
        yield chromium


def _instances(site: Path, kind: str) -> list[dict[str, Any]]:
    listed = [c for c in read_data(site, "data/index.js")["charts"]["charts"] if c["kind"] == kind]
    return [{**c, "rows": read_data(site, f"data/charts/{c['file']}.js")} for c in listed]


def _figure(browser: Chromium, site: Path, page: str, kind: str, title: str | None = None) -> str:
    browser.open("about:blank")  # a fresh load, also when the previous test left the same page open
    browser.wait("location.href === 'about:blank'", "a blank page")
    go(browser, site, page)
    selector = f"figure.chart[data-kind={json.dumps(kind)}]"
    browser.wait(f"document.querySelector('{selector}[data-drawn]')", f"the chart {kind}")
    if title is None:
        return selector
    # the figure of one instance among several of a kind, marked for the selectors that follow
    mark = (f"(function () {{ var f = Array.prototype.filter.call(document.querySelectorAll('{selector}[data-drawn]'), function (f) {{"
            f" return f.querySelector('figcaption b').textContent === {json.dumps(title)}; }})[0]; if (f) f.setAttribute('data-under-test', '1'); return !!f; }})()")  # fmt: skip
    browser.wait(mark, title)
    return "figure.chart[data-under-test]"


def _symbols(browser: Chromium, figure: str) -> list[dict[str, str]]:
    """Each drawn point: its fill colour and its description (Vega's aria-label) as a dict."""
    found = browser.evaluate(
        f"Array.prototype.map.call(document.querySelectorAll({json.dumps(figure + ' .role-mark.mark-symbol [role=graphics-symbol]')}),"
        " function (e) { return [e.getAttribute('fill'), e.getAttribute('aria-label')]; })"
    )
    return [{"fill": fill, **dict(part.split(": ", 1) for part in label.split("; "))} for fill, label in found]


def test_evolution_lines_keep_each_model_apart(built, browser):
    """One line per (protocol, variant, model) of ``evo_generations``, never a line joining two
    models' points; each model's points carry its name (item 2)."""
    store, site = built
    with duckdb.connect(str(store), read_only=True) as con:
        series = con.execute("SELECT count(DISTINCT (protocol, variant, model)) FROM evo_generations").fetchone()[0]
        expected = {(m, g): v for m, g, v in con.execute("SELECT model, generation, avg(mean_final) FROM evo_generations GROUP BY ALL").fetchall()}
    assert series == 2
    figure = _figure(browser, site, "#view=board&study=evolution", "evolution_resources")
    lines = browser.evaluate(f"document.querySelectorAll({json.dumps(figure + ' .role-mark.mark-line path')}).length")
    assert lines == series
    drawn = {(p["model"], int(p["generation"])): float(p["mean_final"]) for p in _symbols(browser, figure)}
    assert drawn == pytest.approx(expected)
    browser.evaluate(f"document.querySelector({json.dumps(figure)}).scrollIntoView()")
    browser.screenshot(SCREENSHOTS / "semantics_evolution_lines.png")


def test_gossip_cooperation_keeps_attackers_apart_from_the_model(built, browser):
    """Under a collusive condition the model's line counts only the honest agents' actions and
    the attackers are a series of their own (item 3); the trust testbed's missing chart is explained."""
    store, site = built
    with duckdb.connect(str(store), read_only=True) as con:
        expected = {
            (model, kind, rnd): share
            for model, kind, rnd, share in con.execute(
                "SELECT model, CASE WHEN first_kind = 'honest' THEN 'honest' ELSE 'attackers' END, round,"
                " avg(CASE WHEN first_action = 'cooperate' THEN 1.0 ELSE 0.0 END) FROM gossip_rounds"
                " WHERE condition = 'collusive' AND testbed = 'donation' GROUP BY ALL"
            ).fetchall()
        }
    assert expected[("model-g", "honest", 2)] == pytest.approx(0.5)  # Ann cooperates, Bob defects; Eve's defection is not the model's
    assert expected[("model-g", "attackers", 2)] == 0.0
    figure = _figure(browser, site, "#view=board&study=gossip", "gossip_cooperation", "gossip: cooperation over rounds (donation)")
    drawn = {(p["model"], p["agents"], int(p["round"])): float(p["cooperation"]) for p in _symbols(browser, figure) if p["condition"] == "collusive"}
    assert drawn == pytest.approx(expected)
    lines = browser.evaluate(f"document.querySelectorAll({json.dumps(figure + ' .role-mark.mark-line path')}).length")
    with duckdb.connect(str(store), read_only=True) as con:
        series = con.execute("SELECT count(DISTINCT (condition, model, first_kind = 'honest')) FROM gossip_rounds WHERE testbed = 'donation'").fetchone()[0]
    assert lines == series
    notes = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('p.chart-note'), function (p) { return p.textContent; })")
    trust = [n for n in notes if n.startswith("trust:")]
    assert trust == ["trust: no cooperation-over-rounds chart, since its investor chooses an amount, not an action, so a round has no"
                     " cooperative action to count; its cooperation ratio per run is in the table above."]  # fmt: skip
    # every other note names a leaderboard metric of this store with no value (issue 47: no chart dropped without a word)
    assert all(n.startswith("gossip: ") and "no chart, since" in n for n in notes if not n.startswith("trust:"))
    assert not [c for c in _instances(site, "gossip_cooperation") if c["title"].endswith("(trust)")]
    browser.evaluate(f"document.querySelector({json.dumps(figure)}).scrollIntoView()")
    browser.screenshot(SCREENSHOTS / "semantics_gossip_attackers.png")


COLOURED = [
    ("#view=board&study=gossip", "board:gossip:coop", "model"),
    ("#view=board&study=gossip", "gossip_cooperation", "model"),
    ("#view=board&study=coopeval", "board:coopeval:mean", "mechanism"),
    ("#view=board&study=evolution", "evolution_resources", "variant"),
]
"""(page, chart kind, the field its colour encodes)."""


@pytest.mark.parametrize(("page", "kind", "field"), COLOURED, ids=[c[1] for c in COLOURED])
def test_every_colour_names_one_value(built, browser, page, kind, field):
    """Two points of one colour belong to one value of the colour's field, and the legend lists
    each value once (item 4); the gossip board's twelve conditions are rows, its colours the models."""
    _, site = built
    figure = _figure(browser, site, page, kind)
    points = _symbols(browser, figure)
    assert points
    named: dict[str, set[str]] = {}
    for p in points:
        named.setdefault(p["fill"], set()).add(p[field])
    assert all(len(values) == 1 for values in named.values()), named
    assert len(named) == len({p[field] for p in points})
    legend = browser.evaluate(f"Array.prototype.map.call(document.querySelectorAll({json.dumps(figure + ' .role-legend-label text')}), function (t) {{ return t.textContent; }})")
    assert {p[field] for p in points} <= set(legend)
    browser.evaluate(f"document.querySelector({json.dumps(figure)}).scrollIntoView()")
    browser.screenshot(SCREENSHOTS / f"semantics_colour_{kind.replace(':', '_')}.png")


def test_overview_keeps_a_models_io_and_cot_agents_apart_and_names_the_commit(built, browser):
    """The landing page lists calls per agent as the leaderboards name it, a model's IO and CoT
    agents in two rows with the store's counts, and the provenance names the commit (item 10)."""
    store, site = built
    with duckdb.connect(str(store), read_only=True) as con:
        expected = [[agent, model, str(decisions), str(attempts)] for agent, model, decisions, attempts in con.execute(
            "SELECT agent, model, count(DISTINCT (cell_id, decision_id)), count(*) FROM llm_calls WHERE model = 'm' GROUP BY ALL ORDER BY agent").fetchall()]  # fmt: skip
        (commit,) = con.execute("SELECT value FROM provenance WHERE key = 'commit'").fetchone()
    assert expected == [["m(CoT)", "m", "1", "3"], ["m(IO)", "m", "1", "1"]]
    browser.open("about:blank")
    browser.wait("location.href === 'about:blank'", "a blank page")
    go(browser, site, "")
    browser.wait("document.querySelector('main h2') && document.querySelector('main h2').textContent === 'Run overview'", "the overview")
    tables = browser.evaluate(
        "Array.prototype.map.call(document.querySelectorAll('main table'), function (t) { return Array.prototype.map.call(t.querySelectorAll('tr'),"
        " function (tr) { return Array.prototype.map.call(tr.children, function (c) { return c.textContent; }); }); })"
    )
    (agents,) = [t for t in tables if t[0][:3] == ["study", "agent", "model"]]
    assert [r[1:5] for r in agents[1:] if r[2] == "m"] == expected
    (provenance,) = [t for t in tables if t[0] == ["key", "value"]]
    assert ["commit", commit] in provenance and len(commit.removesuffix("+dirty")) == 40
    browser.screenshot(SCREENSHOTS / "semantics_overview_agents.png")


def test_a_click_where_marks_coincide_lists_each_marks_page(built, browser):
    """Under the collusive condition model-g's and model-h's honest agents cooperate alike, so
    their points coincide: a click there lists both rows' pages instead of opening one of
    them, and each link opens its own row's page (item 5)."""
    _, site = built
    (chart,) = [c for c in _instances(site, "gossip_cooperation") if c["title"].endswith("(donation)")]
    here = [r for r in chart["rows"] if (r["condition"], r["agents"], r["round"]) == ("collusive", "honest", 1)]
    assert {r["model"] for r in here} == {"model-g", "model-h"} and len({r["cooperation"] for r in here}) == 1
    assert len({r["href"] for r in here}) == 2
    figure = _figure(browser, site, "#view=board&study=gossip", "gossip_cooperation", "gossip: cooperation over rounds (donation)")
    marks = json.dumps(figure + " .role-mark.mark-symbol [role=graphics-symbol]")
    clicked = browser.evaluate(
        f"(function () {{ var all = document.querySelectorAll({marks}); for (var i = 0; i < all.length; i++) {{"
        " var l = all[i].getAttribute('aria-label'); if (l.indexOf('condition: collusive') >= 0 && l.indexOf('agents: honest') >= 0 && l.indexOf('round: 1;') >= 0) {"
        " all[i].scrollIntoView(); var r = all[i].getBoundingClientRect();"
        " all[i].dispatchEvent(new MouseEvent('click', { bubbles: true, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2 })); return l; } } return null; })()"
    )
    assert clicked is not None
    browser.wait(f"!document.querySelector('{figure} .chart-picks').hidden", "the list of coinciding marks")
    links = browser.evaluate(f"Array.prototype.map.call(document.querySelectorAll('{figure} .chart-picks a'), function (a) {{ return [a.getAttribute('href'), a.textContent]; }})")
    assert [h for h, _ in links] == [r["href"] for r in here]
    assert [("model " + r["model"]) in text for r, (_, text) in zip(here, links, strict=True)] == [True, True]
    browser.screenshot(SCREENSHOTS / "semantics_coinciding_marks.png")
    browser.click(f"{figure} .chart-picks a[href={json.dumps(here[1]['href'])}]")
    browser.wait(f"location.hash === {json.dumps(here[1]['href'])}", "the second row's page")


def test_a_board_leads_with_its_charts_each_panel_with_its_own_x_axis(built, browser):
    """The leaderboard page shows its charts first and folds the table below them; every panel of
    a leaderboard chart has its own x scale and labelled axis, so a game's range is not squeezed
    by another's (item 11)."""
    _, site = built
    figure = _figure(browser, site, "#view=board&study=coopeval", "board:coopeval:mean")
    (chart,) = _instances(site, "board:coopeval:mean")
    panels = sorted({r["game"] for r in chart["rows"]})
    assert len(panels) == 3
    order = browser.evaluate(
        f"document.querySelector({json.dumps(figure)}).compareDocumentPosition(document.querySelector('details.board-table')) & Node.DOCUMENT_POSITION_FOLLOWING"
    )
    assert order  # the table comes after the chart
    assert browser.evaluate("document.querySelector('details.board-table').open") is False
    assert browser.evaluate("!!document.querySelector('details.board-table table.board')")
    axes = browser.evaluate(
        f"Array.prototype.map.call(document.querySelectorAll({json.dumps(figure + ' g.role-axis')}), function (g) {{ return g.getAttribute('aria-label') || ''; }})"
    )
    x_axes = [a for a in axes if a.startswith("X-axis")]
    assert len(x_axes) == len(panels), axes
    ranges = {a.split("values from ", 1)[1] for a in x_axes}
    assert len(ranges) > 1  # independent scales: the panels' value ranges differ
    browser.screenshot(SCREENSHOTS / "semantics_board_layout.png")


def test_model_against_model_shows_the_paired_differences_turned_to_the_pair_picked(built, browser):
    """#view=pairs&a=model-y&b=model-x draws the store's comparisons of the two with Δ = first −
    second (the store holds x − y, so every Δ and interval is turned), p and MDE in the table, and
    a click opens the cells behind a row (item 12)."""
    store, site = built
    with duckdb.connect(str(store), read_only=True) as con:
        expected = {scope: (-delta, -hi, -lo, p, mde) for scope, delta, lo, hi, p, mde in con.execute(
            "SELECT scope, delta, ci_low, ci_high, p_adjusted, mde FROM comparisons WHERE a = 'model-x' AND b = 'model-y'").fetchall()}  # fmt: skip
    assert len(expected) == 2
    figure = _figure(browser, site, "#view=pairs&a=model-y&b=model-x", "pairs")
    def num(text: str) -> float:  # d3-format writes the minus sign as U+2212
        return float(text.replace("\u2212", "-"))

    drawn = {p["scope"]: (num(p["delta"]), num(p["ci_low"]), num(p["ci_high"]), num(p["p_adjusted"]), num(p["mde"])) for p in _symbols(browser, figure)}
    assert drawn.keys() == expected.keys()
    for scope, values in expected.items():
        assert drawn[scope] == pytest.approx(values)
    assert {p["scope"]: p["evidence"] for p in _symbols(browser, figure)} == {"Repetition/prisoners_dilemma": "significant",
                                                                              "Repetition/stag_hunt": "not significant"}
    assert browser.evaluate("document.getElementById('pair-a').value") == "model-y"
    browser.evaluate(f"document.querySelector({json.dumps(figure)}).scrollIntoView()")
    browser.screenshot(SCREENSHOTS / "semantics_model_against_model.png")
    links = browser.evaluate(f"Array.prototype.map.call(document.querySelectorAll({json.dumps(figure + ' table.chart-data a')}), function (a) {{ return a.getAttribute('href'); }})")
    assert links == ["#view=cells&study=coopeval&mechanism=Repetition&game=prisoners_dilemma&a=model-x&b=model-y",
                     "#view=cells&study=coopeval&mechanism=Repetition&game=stag_hunt&a=model-x&b=model-y"]
    browser.click(f"{figure} table.chart-data a")
    browser.wait("location.hash === '#view=cells&study=coopeval&mechanism=Repetition&game=prisoners_dilemma&a=model-x&b=model-y'", "the cells of the first row")
    browser.wait("document.getElementById('main').innerText.indexOf('cellA') >= 0", "cellA in the list")
