"""The model-against-model page answers its question (issue 47 item 1; issue 46 R68, R69), in a real headless Chromium.

The fake store of :mod:`tests.explorer.fake_store` gets CoopEval cells of NoMechanism on four
games (Public Goods also as variants n5 and n8, Matching Pennies outside the social dilemmas),
a ReputationFirstOrder cell, a second gossip cell of one model under another matching, a second
evolution model and a variant of the first, and a ``comparisons`` table whose rows cover each
case: a Public Goods difference of one replicate whose every cluster agrees (zero-width
interval), a DR difference over 3 clusters with a bootstrap p below what 3 clusters can show,
the normalised row over the games, and one gossip and one evolution row. Checked against the
store: every link opens exactly the cells its comparison used, each row's evidence, one chart per
metric and unit with the unit on its axis, scope labels whole, the pickers per study, the
filters; a leaderboard with 23 mechanism values draws 23 colours; at 400 px nothing stands past
the page's edge. Screenshots: ``results/explorer/screenshots/pairs_*.png``.
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

STUDY_CELLS = {  # cell id → (mechanism, variant, game type, config key, players)
    "pg-no": ("NoMechanism", "default", "PublicGoods", "public_goods", 3),
    "pg-no-n5": ("NoMechanism", "n5", "PublicGoods", "public_goods", 5),
    "pg-no-n8": ("NoMechanism", "n8", "PublicGoods", "public_goods", 8),
    "pd-no": ("NoMechanism", "default", "PrisonersDilemma", "prisoners_dilemma", 2),
    "sh-no": ("NoMechanism", "default", "StagHunt", "stag_hunt", 2),
    "mp-no": ("NoMechanism", "default", "MatchingPennies", "matching_pennies", 2),
    "rep-pd": ("ReputationFirstOrder", "default", "PrisonersDilemma", "prisoners_dilemma", 2),
}
LONG_SCOPE = "ReputationFirstOrder/PrisonersDilemma"
COMPARISONS = [  # study, scope, metric, a, b, delta, ci_low, ci_high, p_adjusted, n_clusters
    ("coopeval", "NoMechanism/PublicGoods", "Mean", "model-x", "model-y", 0.5, 0.5, 0.5, 0.03125, 6),  # 2/2^6: every cluster agrees
    ("coopeval", "NoMechanism/PublicGoods", "DR", "model-x", "model-y", 1.0, 0.0, 2.0, 0.002, 3),  # a bootstrap p below 2/2^3
    ("coopeval", "NoMechanism/PrisonersDilemma", "Mean", "model-x", "model-y", -0.4, -0.6, -0.2, 0.01, 8),
    ("coopeval", "NoMechanism/All", "Mean", "model-x", "model-y", 0.2, 0.1, 0.3, 0.001, 12),
    ("coopeval", LONG_SCOPE, "Mean", "model-x", "model-y", 0.3, 0.1, 0.5, 0.02, 10),
    ("gossip", "donation/align/random", "cooperation_ratio_mean", "model-g", "model-h", 0.1, 0.05, 0.15, 0.02, 6),
    ("evolution", "vh/default", "mean_final", "model-e", "model-z", 4.0, 1.0, 7.0, 0.01, 7),
]
R69_VARIANTS = [f"n{n}" for n in (2, 4, 5, 6, 7, 8, 9, 10)]
"""Issue 46 R69: NoMechanism and Repetition each with these variants, Repetition also r2, r3, r4,
r6, r8: 21 variants, 23 mechanism values with the two defaults."""


def _store(path: Path) -> Path:
    make_store(path)
    same = ("INSERT INTO decisions BY NAME SELECT * EXCLUDE (mechanism, game) REPLACE (? AS cell_id, ? AS setting, ? AS environment,"
            " ? || decision_id AS decision_id) FROM decisions WHERE cell_id = ?")  # fmt: skip
    copy = same.replace("decision_id) FROM", "decision_id, ? AS agent) FROM")
    with duckdb.connect(str(path)) as con:
        for cell, (mechanism, variant, game, key, players) in STUDY_CELLS.items():
            con.execute("INSERT INTO cells (cell_id, mechanism, variant, game, replicate, players) VALUES (?, ?, ?, ?, 0, ?)",
                        [cell, mechanism, variant, key, players])  # fmt: skip
            con.execute(same, [cell, mechanism, game, f"{cell}-", "cellA"])
        for cell, model, matching in (("cellG", "model-g", "random"), ("cellH", "model-h", "random"), ("cellGs", "model-g", "align_sweep")):
            con.execute("INSERT INTO gossip_cells (cell_id, testbed, condition, model, replicate, matching) VALUES (?, 'donation', 'align', ?, 0, ?)",
                        [cell, model, matching])  # fmt: skip
        con.execute(copy, ["cellGs", "align", "donation", "s-", "model-g", "cellG"])
        for cell, model, variant in (("cellE", "model-e", "default"), ("cellZ", "model-z", "default"), ("cellE2", "model-e", "other")):
            con.execute("INSERT INTO evolution_cells (cell_id, protocol, model, variant, replicate) VALUES (?, 'vh', ?, ?, 0)", [cell, model, variant])
            if cell != "cellE":
                con.execute(copy, [cell, "evolution/vh", "donor_game", f"{cell}-", model, "cellE"])
        for study, scope, metric, a, b, delta, lo, hi, p, k in COMPARISONS:
            con.execute("INSERT INTO comparisons (study, scope, metric, a, b, delta, ci_low, ci_high, p_value, p_adjusted, correction, mde, n_clusters)"
                        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'holm', NULL, ?)", [study, scope, metric, a, b, delta, lo, hi, p, p, k])  # fmt: skip
        metric = "INSERT INTO metrics (cell_id, source, run, mechanism, game, agent, metric, value) VALUES (?, 'ours', 'r1', ?, 'PublicGoods', ?, 'Mean', ?)"
        variants = [("NoMechanism", "default"), ("Repetition", "default")] + [(m, v) for m in ("NoMechanism", "Repetition") for v in R69_VARIANTS]
        variants += [("Repetition", f"r{k}") for k in (2, 3, 4, 6, 8)]
        for n, (mechanism, variant) in enumerate(variants):
            cell = f"r69-{mechanism}-{variant}"
            con.execute("INSERT INTO cells (cell_id, mechanism, variant, game, replicate, players) VALUES (?, ?, ?, 'public_goods', 0, 3)", [cell, mechanism, variant])
            for agent in ("model-x", "model-y"):
                con.execute(metric, [cell, mechanism, agent, 1.0 + 0.01 * n])
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    return built_site(tmp_path_factory, "pairs", _store)


@pytest.fixture(scope="module")
def browser(built, tmp_path_factory):
    with Chromium(tmp_path_factory.mktemp("profile"), size=(1400, 1000)) as chromium:
        yield chromium


def _open(browser: Chromium, site: Path, hash_: str, charts: int = 1) -> None:
    browser.open("about:blank")
    browser.wait("location.href === 'about:blank'", "a blank page")
    go(browser, site, hash_)
    browser.wait(f"document.querySelectorAll('figure.chart[data-drawn]').length >= {charts}", f"{charts} drawn charts")


def _figures(browser: Chromium) -> list[dict[str, Any]]:
    """Each drawn chart: its title, x axis titles, y labels, and its points' fills and descriptions."""
    return browser.evaluate("""Array.prototype.map.call(document.querySelectorAll('figure.chart[data-drawn]'), function (f) {
        function texts(sel) { return Array.prototype.map.call(f.querySelectorAll(sel), function (t) { return t.textContent; }); }
        return {title: f.querySelector('figcaption b').textContent,
                axes: Array.prototype.map.call(f.querySelectorAll('.role-axis'), function (a) { return a.getAttribute('aria-label') || ''; }),
                xtitles: texts('.role-axis-title text'),
                ylabels: texts('.role-axis-label text'),
                points: Array.prototype.map.call(f.querySelectorAll('.role-mark.mark-symbol [role=graphics-symbol]'), function (e) {
                    return [e.getAttribute('fill'), e.getAttribute('aria-label')]; }),
                links: Array.prototype.map.call(f.querySelectorAll('table.chart-data a'), function (a) { return a.getAttribute('href'); })};
    })""")


def _fields(label: str) -> dict[str, str]:
    return dict(part.split(": ", 1) for part in label.split("; "))


def _listed_cells(browser: Chromium, site: Path, link: str) -> list[str]:
    go(browser, site, link)
    browser.wait("document.querySelector('main h2') && document.querySelector('main h2').textContent.indexOf('Cells') === 0", "the cells list")
    return browser.evaluate("Array.prototype.map.call(document.querySelectorAll('main table tr td:last-child'), function (td) { return td.textContent; })")


def _expected_cells(store: Path, study: str, scope: str, a: str, b: str) -> list[str]:
    """The cells a comparison used, by SQL on the store (the default variant only: the comparisons
    read no other; docs/comparisons.md)."""
    from coopeval.games import SOCIAL_DILEMMA_TYPES

    parts = scope.split("/")
    with duckdb.connect(str(store), read_only=True) as con:
        if study == "coopeval":
            games = list(SOCIAL_DILEMMA_TYPES) if parts[1] == "All" else [parts[1]]
            found = con.execute(
                "SELECT DISTINCT d.cell_id FROM decisions d LEFT JOIN cells c USING (cell_id) WHERE d.study = 'coopeval' AND d.mechanism = ?"
                " AND list_contains(?, d.game) AND coalesce(c.variant, 'default') = 'default' GROUP BY d.cell_id"
                " HAVING count(DISTINCT d.agent) FILTER (WHERE d.agent IN (?, ?)) = 2", [parts[0], games, a, b]).fetchall()  # fmt: skip
        elif study == "gossip":
            found = con.execute("SELECT cell_id FROM gossip_cells WHERE testbed = ? AND condition = ? AND matching = ? AND model IN (?, ?)",
                                [*parts, a, b]).fetchall()  # fmt: skip
        else:
            found = con.execute("SELECT cell_id FROM evolution_cells WHERE protocol = ? AND variant = ? AND model IN (?, ?)", [*parts, a, b]).fetchall()
    return sorted(r[0] for r in found)


def test_every_link_opens_exactly_the_cells_its_comparison_used(built, browser):
    """R68: a row's link carries the variant, the games of the aggregate, the matching, the
    evolution variant and the two agents; the cells page lists exactly the cells the comparison
    used (N = 3 only, not N = 5 and 8; not Stag Hunt or Matching Pennies under All; not the other matching or
    variant), never none; the page names the variants that have no comparisons."""
    store, site = built
    for study, a, b in (("coopeval", "model-x", "model-y"), ("gossip", "model-g", "model-h"), ("evolution", "model-e", "model-z")):
        charts = 3 if study == "coopeval" else 1
        _open(browser, site, f"#view=pairs&study={study}&a={a}&b={b}", charts)
        links = {}
        table = read_data(site, "data/pairs.js")
        for figure in _figures(browser):
            for link in figure["links"]:
                (scope,) = {r["scope"] for r in table if r["href"] == link}
                links[scope] = link
        scopes = {c[1] for c in COMPARISONS if c[0] == study}
        assert set(links) == scopes
        for scope, link in sorted(links.items()):
            expected = _expected_cells(store, study, scope, a, b)
            assert expected, scope
            assert sorted(_listed_cells(browser, site, link)) == expected, (scope, link)
    assert _expected_cells(store, "coopeval", "NoMechanism/PublicGoods", "model-x", "model-y") == ["pg-no"]
    assert _expected_cells(store, "coopeval", "NoMechanism/All", "model-x", "model-y") == ["pd-no", "pg-no"]  # Stag Hunt and Matching Pennies are no social dilemmas here
    browser.screenshot(SCREENSHOTS / "pairs_cells.png")
    _open(browser, site, "#view=pairs&study=coopeval&a=model-x&b=model-y", 3)
    note = browser.evaluate("document.querySelector('p.pair-uncompared') ? document.querySelector('p.pair-uncompared').textContent : ''")
    assert "NoMechanism (n5, N = 5)" in note and "NoMechanism (n8, N = 8)" in note


def test_a_difference_is_significant_only_where_its_test_could_show_it(built, browser):
    """Honest evidence: the one-replicate difference whose every cluster agrees (p = 2/2^6 below
    0.05, zero-width interval) is drawn as stable, not filled as significant; the DR difference
    over 3 clusters (bootstrap p = 0.002, below the 2/2^3 = 0.25 that 3 clusters can show) as
    untestable; the others by their corrected p."""
    _, site = built
    _open(browser, site, "#view=pairs&study=coopeval&a=model-x&b=model-y", 3)
    evidence, fills = {}, {}
    for figure in _figures(browser):
        for fill, label in figure["points"]:
            fields = _fields(label)
            evidence[(figure["title"].split(" (")[0], fields["scope"])] = fields["evidence"]
            fills[fields["evidence"]] = fills.get(fields["evidence"], set()) | {fill}
    by_scope = {scope: e for (title, scope), e in evidence.items() if "DR" not in title}
    assert by_scope == {"NoMechanism/PublicGoods": "stable", "NoMechanism/PrisonersDilemma": "significant",
                        "NoMechanism/All": "significant", LONG_SCOPE: "significant"}  # fmt: skip
    assert [e for (title, _), e in evidence.items() if "DR" in title] == ["untestable"]
    assert fills["stable"].isdisjoint(fills["significant"]) and fills["untestable"].isdisjoint(fills["significant"])
    rows = {(r["scope"], r["metric"]): r for r in read_data(site, "data/pairs.js")}
    assert "one replicate" in rows[("NoMechanism/PublicGoods", "Mean")]["why"]
    assert "3 clusters" in rows[("NoMechanism/PublicGoods", "DR")]["why"] and "0.25" in rows[("NoMechanism/PublicGoods", "DR")]["why"]
    browser.screenshot(SCREENSHOTS / "pairs_evidence.png")


def test_normalised_and_raw_rows_are_apart_with_units_names_and_whole_scope_labels(built, browser):
    """The normalised row over the games has its own chart, each chart names its unit on the x
    axis, DR rank says which direction is better, gossip's metric has a readable name, and a long
    scope label is drawn whole."""
    _, site = built
    _open(browser, site, "#view=pairs&study=coopeval&a=model-x&b=model-y", 3)
    figures = _figures(browser)
    scopes = {f["title"]: {_fields(label)["scope"] for _, label in f["points"]} for f in figures}
    normalised = [t for t, s in scopes.items() if "NoMechanism/All" in s]
    assert len(normalised) == 1 and scopes[normalised[0]] == {"NoMechanism/All"}
    assert any("normalised" in t for f in figures if f["title"] == normalised[0] for t in f["xtitles"])
    raw = [f for f in figures if "NoMechanism/PrisonersDilemma" in scopes[f["title"]]]
    assert len(raw) == 1 and any("points" in t for t in raw[0]["xtitles"]) and LONG_SCOPE in raw[0]["ylabels"]
    directions = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('p.pair-direction'), function (p) { return p.textContent; })")
    assert any("DR rank" in d and "Δ > 0 means the first ranks worse" in d for d in directions), directions
    _open(browser, site, "#view=pairs&study=gossip&a=model-g&b=model-h")
    (gossip,) = _figures(browser)
    assert "cooperation ratio" in gossip["title"] and "cooperation_ratio_mean" not in gossip["title"]
    browser.screenshot(SCREENSHOTS / "pairs_units.png")


def test_pickers_list_one_studys_agents_open_on_a_compared_pair_and_filters_narrow(built, browser):
    """The agent pickers list the chosen study's agents; the bare page opens on a pair that has
    comparisons; the metric and mechanism filters keep exactly their rows."""
    _, site = built
    _open(browser, site, "#view=pairs")
    options = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('#pair-a option'), function (o) { return o.value; })")
    a, b = browser.evaluate("[document.getElementById('pair-a').value, document.getElementById('pair-b').value]")
    study = browser.evaluate("document.getElementById('pair-study').value")
    assert any(c[0] == study and {c[3], c[4]} == {a, b} for c in COMPARISONS), (study, a, b)
    assert set(options) == {x for c in COMPARISONS if c[0] == study for x in (c[3], c[4])}
    _open(browser, site, "#view=pairs&study=coopeval&a=model-x&b=model-y&metric=DR%20rank", 1)
    drawn = [_fields(label)["scope"] for f in _figures(browser) for _, label in f["points"]]
    assert drawn == ["NoMechanism/PublicGoods"]
    _open(browser, site, "#view=pairs&study=coopeval&a=model-x&b=model-y&mechanism=ReputationFirstOrder", 1)
    drawn = [_fields(label)["scope"] for f in _figures(browser) for _, label in f["points"]]
    assert drawn == [LONG_SCOPE]
    assert browser.evaluate("document.getElementById('pair-mechanism').value") == "ReputationFirstOrder"


def test_twenty_three_mechanism_values_get_twenty_three_colours(built, browser):
    """R69: 21 variants and 2 defaults of one legend: 23 fills on the Mean chart and 23 legend
    colours, each value one colour, also under ``mechanism=Repetition (r8)``."""
    _, site = built
    board = read_data(site, "data/index.js")["leaderboards"]["coopeval"]
    values = sorted({r["mechanism"] for r in board["rows"] if r["game"] == "PublicGoods"})
    assert len(values) >= 23
    go(browser, site, "#view=board&study=coopeval&game=PublicGoods&agent=*&mechanism=*")
    selector = 'figure.chart[data-kind="board:coopeval:mean"]'
    browser.wait(f"document.querySelector('{selector}[data-drawn]')", "the Mean chart")
    marks = browser.evaluate(f"Array.prototype.map.call(document.querySelectorAll({json.dumps(selector + ' .role-mark.mark-symbol [role=graphics-symbol]')}),"
                             " function (e) { return [e.getAttribute('aria-label'), e.getAttribute('fill')]; })")  # fmt: skip
    fill: dict[str, set[str]] = {}
    for label, colour in marks:
        fill.setdefault(_fields(label)["mechanism"], set()).add(colour)
    assert set(values) <= set(fill) and all(len(c) == 1 for c in fill.values())
    assert len({next(iter(c)) for c in fill.values()}) == len(fill)
    legend = browser.evaluate(f"Array.prototype.map.call(document.querySelectorAll({json.dumps(selector + ' .role-legend-symbol path')}),"
                              " function (e) { return e.getAttribute('fill') || e.getAttribute('stroke'); })")  # fmt: skip
    assert len(legend) == len(fill) and len(set(legend)) == len(legend)
    browser.screenshot(SCREENSHOTS / "pairs_r69_colours.png")
    go(browser, site, "#view=board&study=coopeval&game=PublicGoods&agent=*&mechanism=Repetition%20(r8)")
    browser.wait(f"document.querySelector('{selector}[data-drawn]')", "the filtered Mean chart")
    kept = browser.evaluate(f"Array.prototype.map.call(document.querySelectorAll({json.dumps(selector + ' .role-mark.mark-symbol [role=graphics-symbol]')}),"
                            " function (e) { return e.getAttribute('fill'); })")  # fmt: skip
    assert set(kept) == fill["Repetition (r8)"]


def test_a_phone_screen_has_nothing_past_the_right_edge(built, tmp_path_factory):
    """At 400 px wide (a phone) the page has a viewport tag and no chart, legend or table stands
    past the page's right edge: a wide one scrolls inside its own box."""
    _, site = built
    with Chromium(tmp_path_factory.mktemp("phone"), size=(400, 800)) as phone:
        for page, charts in (("#view=board&study=coopeval", 1), ("#view=pairs&study=coopeval&a=model-x&b=model-y", 3), ("#view=cells&study=coopeval", 0)):
            phone.open((site / "index.html").as_uri() + page)
            phone.wait("document.querySelector('main h2')", "the page")
            if charts:
                phone.wait(f"document.querySelectorAll('figure.chart[data-drawn]').length >= {charts}", "the charts")
            assert phone.evaluate("!!document.querySelector('meta[name=viewport]')")
            width = phone.evaluate("document.documentElement.clientWidth")
            past = phone.evaluate("""(function (w) { var out = [];
                document.querySelectorAll('main figure, main table, main svg, main form, main p, main .vis').forEach(function (e) {
                  var box = e.closest('.vis, table') && e.closest('.vis, table') !== e ? e.closest('.vis, table').getBoundingClientRect() : e.getBoundingClientRect();
                  if (box.right > w + 1) out.push(e.tagName + '.' + e.className);
                }); return out; })(document.documentElement.clientWidth)""")
            assert phone.evaluate("document.documentElement.scrollWidth") <= width + 1 and not past, (page, past[:5])
        phone.screenshot(SCREENSHOTS / "pairs_phone.png")


def test_numbers_are_written_one_way(built, browser):
    """No "-0.000": a value that rounds to zero is "0.000"; a metric and both ends of its interval
    have three decimals alike ("[2.000, 2.500]", not "[2, 2.500]"); the board's cells use it."""
    _, site = built
    _open(browser, site, "#view=board&study=coopeval&game=PublicGoods&agent=*&mechanism=*")
    got = browser.evaluate("[CE.fmt(-0.0000001), CE.num(-0.0000001), CE.num(2), CE.num(2.5), CE.num(Infinity)]")
    assert got == ["0.000", "0.000", "2.000", "2.500", "Infinity"]
    browser.click("details.board-table summary")
    cells = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('table.board td.num'), function (td) { return td.textContent; })")
    assert "1.000" in cells and not any(c.startswith("-0.000") for c in cells)


def test_a_decision_shows_its_co_players_action_of_that_round(built, browser):
    """The decision page of seat 1's round-2 decision in cellA names seat 2's decision of that
    round, its action and points, as stored."""
    store, site = built
    with duckdb.connect(str(store), read_only=True) as con:
        (other,) = con.execute("SELECT decision_id, agent, action_token, points FROM decisions WHERE cell_id = 'cellA' AND round = 2 AND seat = 2").fetchall()
    go(browser, site, "#decision=dA-r2-s1")
    browser.wait("document.querySelector('p.co-players')", "the co-players line")
    text = browser.evaluate("document.querySelector('p.co-players').textContent")
    assert f"seat 2 {other[1]}" in text and f"→ {other[2]}" in text and f"points {other[3]:g}" in text
    assert browser.evaluate("document.querySelector('p.co-players a').getAttribute('href')") == f"#decision={other[0]}"
