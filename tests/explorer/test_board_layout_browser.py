"""Readable boards and charts (issue 41, item 11), in a real headless Chromium from ``file://``.

The fake store of :mod:`tests.explorer.fake_store` gets CoopEval Mean rows of three more games
whose payoff ranges differ (Matching Pennies −1..1, Trust 2..11, Public Goods) under two
mechanisms and three agents, so the board has more panels than fit in one row; gossip tones of
four more conditions over 36 rounds; and a replicator trajectory of 1,001 steps that settles
early. Each check reads the drawn SVG (marks, their descriptions, axes, label boxes) and compares
it with SQL on the store; screenshots go to ``results/explorer/screenshots/board_<name>.png``.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from coopeval.explorer.aggregate import RAW_LABEL
from coopeval.explorer.charts import BOARD_STEP
from coopeval.explorer.extras import SETTLED_WITHIN
from tests.explorer.browser import Chromium, built_site
from tests.explorer.fake_store import make_store
from tests.explorer.test_site_browser import SCREENSHOTS, go

GAMES = {"MatchingPennies": (-1.0, 1.0), "TrustGame": (2.0, 11.0), "PublicGoods": (5.0, 8.0)}
"""Game → the lowest and highest Mean of its added cells (each panel's own range)."""

AGENTS = ("model-x", "model-y", "model-z")
TONE_CONDITIONS = [f"tone{k}" for k in range(4)]
ROUNDS = 36
STEPS = 1000


def share(step: int) -> float:
    """model-x's population share in cellA's trajectory: 0.5 rising to 0.9 (model-y: the rest)."""
    return 0.5 + 0.4 * (1 - 0.9**step)


def _store(path: Path) -> Path:
    make_store(path)
    with duckdb.connect(str(path)) as con:
        for game, (low, high) in GAMES.items():
            for m, mechanism in enumerate(("Repetition", "NoMechanism")):
                for a, agent in enumerate(AGENTS):
                    for run in ("r1", "r2"):
                        value = low + (high - low) * ((a + 2 * m + (run == "r2")) % 6) / 5
                        con.execute("INSERT INTO metrics (cell_id, source, run, mechanism, game, agent, metric, value) VALUES (?, 'ours', ?, ?, ?, ?, 'Mean', ?)",
                                    [f"{mechanism}-{game}-{run}", run, mechanism, game, agent, value])  # fmt: skip
        for condition in TONE_CONDITIONS:
            for rnd in range(1, ROUNDS + 1):
                con.execute("INSERT INTO gossip_rounds (cell_id, run, testbed, condition, model, round, first_agent, second_agent, first_kind, second_kind,"
                            " first_action, second_tone, status) VALUES (?, 'r1', 'donation', ?, 'model-g', ?, 'Ann', 'Bob', 'honest', 'honest', ?, ?, 'ok')",
                            [f"c-{condition}", condition, rnd, "cooperate" if rnd % 3 else "defect", "praising" if rnd % 2 else "criticism"])  # fmt: skip
            con.execute("INSERT INTO gossip_run_metrics (cell_id, run, testbed, condition, model, cooperation_ratio_mean, gini) VALUES (?, 'r1', 'donation', ?, 'model-g', 0.6, 0.1)",
                        [f"c-{condition}", condition])  # fmt: skip
        for step in range(STEPS + 1):
            for agent, value in (("model-x", share(step)), ("model-y", 1 - share(step))):
                con.execute("INSERT INTO trajectories (step, agent, share, cell_id, mechanism, game, run) VALUES (?, ?, ?, 'cellA', 'Repetition', 'prisoners_dilemma', 'r1')",
                            [step, agent, value])  # fmt: skip
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    return built_site(tmp_path_factory, "board", _store)


@pytest.fixture(scope="module")
def browser(built, tmp_path_factory):
    with Chromium(tmp_path_factory.mktemp("profile"), size=(1400, 1000)) as chromium:
        yield chromium


def _open(browser: Chromium, site: Path, page: str, kind: str, count: int = 1) -> str:
    browser.open("about:blank")
    browser.wait("location.href === 'about:blank'", "a blank page")
    go(browser, site, page)
    selector = f"figure.chart[data-kind={json.dumps(kind)}]"
    browser.wait(
        f"document.querySelectorAll('{selector}[data-drawn]').length >= {count}",
        f"the chart {kind}",
    )
    return selector


def _choose(browser: Chromium, field: str, value: str, kind: str) -> str:
    """Pick ``value`` in the board's ``field`` filter and wait for the chart ``kind`` drawn again."""
    browser.evaluate(f"(function () {{ var s = document.querySelector('form.board-filters select[name={field}]'); s.value = {json.dumps(value)};"
                     " s.dispatchEvent(new Event('change')); })()")  # fmt: skip
    selector = f"figure.chart[data-kind={json.dumps(kind)}]"
    browser.wait(
        f"document.querySelector('{selector}[data-drawn]')",
        f"the chart {kind} after {field} = {value}",
    )
    return selector


def _symbols(browser: Chromium, figure: str) -> list[dict[str, str]]:
    labels = browser.evaluate(
        f"Array.prototype.map.call(document.querySelectorAll({json.dumps(figure + ' .role-mark.mark-symbol [role=graphics-symbol]')}),"
        " function (e) { return e.getAttribute('aria-label'); })"
    )
    return [dict(part.split(": ", 1) for part in label.split("; ")) for label in labels]


def _x_axes(browser: Chromium, figure: str) -> list[dict[str, Any]]:
    """Each x axis of the figure: its description, top edge and its visible labels (text, box, transform)."""
    return browser.evaluate(
        f"Array.prototype.filter.call(document.querySelectorAll({json.dumps(figure + ' g.role-axis')}), function (g) {{"
        " return (g.getAttribute('aria-label') || '').indexOf('X-axis') === 0; }).map(function (g) {"
        " var labels = Array.prototype.filter.call(g.querySelectorAll('.role-axis-label text'), function (t) {"
        "   return t.getAttribute('opacity') !== '0' && t.textContent !== ''; });"
        " return {label: g.getAttribute('aria-label'), top: Math.round(g.getBoundingClientRect().top), ticks: g.querySelectorAll('.role-axis-tick line').length,"
        "   texts: labels.map(function (t) { return t.textContent; }), transforms: labels.map(function (t) { return t.getAttribute('transform') || ''; }),"
        "   boxes: labels.map(function (t) { var r = t.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; })}; })"
    )  # fmt: skip


def _height(browser: Chromium, figure: str) -> float:
    return browser.evaluate(
        f"document.querySelector({json.dumps(figure + ' svg')}).getBoundingClientRect().height"
    )


def _store_means(
    store: Path, mechanism: str | None = None, agent: str | None = None
) -> set[tuple[str, str, str, float]]:
    """(mechanism, game, agent, Mean) of the board's rows as SQL on the store computes them: per
    mechanism, game and agent, and per mechanism and agent over the games (the raw-points row)."""
    with duckdb.connect(str(store), read_only=True) as con:
        found = con.execute(
            f"""SELECT mechanism, coalesce(game, '{RAW_LABEL}'), agent, avg(value) FROM metrics WHERE metric = 'Mean'
                AND (? IS NULL OR mechanism = ?) AND (? IS NULL OR agent = ?)
                GROUP BY GROUPING SETS ((mechanism, game, agent), (mechanism, agent))""",
            [mechanism, mechanism, agent, agent],
        ).fetchall()
    return {(m, g, a, round(v, 3)) for m, g, a, v in found}


def _drawn(symbols: list[dict[str, str]]) -> set[tuple[str, str, str, float]]:
    return {
        (s["mechanism"], s["game"], s["agent"], round(float(s["value"].replace("\u2212", "-")), 3))
        for s in symbols
    }


def test_every_panel_has_its_own_x_scale_and_every_row_of_panels_its_labelled_axis(built, browser):
    """Leaderboard panels each on their own x scale (Matching Pennies −1..1 is not squeezed beside
    Trust 2..11), and in every faceted chart each row of panels has x labels, not only the last."""
    store, site = built
    figure = _open(browser, site, "#view=board&study=coopeval&game=*", "board:coopeval:mean")
    axes = _x_axes(browser, figure)
    panels = {g for _, g, _, _ in _store_means(store)}
    assert len(axes) == len(panels) > 3, [a["label"] for a in axes]
    assert len({a["top"] for a in axes}) > 1  # panels in several rows, each row with its axes
    assert all(a["texts"] for a in axes)
    spans = [
        tuple(
            float(v.replace("\u2212", "-"))
            for v in a["label"].split("values from ", 1)[1].split(" to ")
        )
        for a in axes
    ]
    assert any(low < 0 and high < 2 for low, high in spans), (
        spans
    )  # Matching Pennies on its own range, not Trust's
    assert any(high >= GAMES["TrustGame"][1] for _, high in spans), spans
    browser.screenshot(SCREENSHOTS / "board_independent_scales.png")

    figure = _open(browser, site, "#view=board&study=gossip", "gossip_tones")
    axes = _x_axes(browser, figure)
    conditions = {*TONE_CONDITIONS, "align"}  # align's only toned message is an attacker's: its rounds are "no toned gossip" bars (issue 47)
    panel_tops = browser.evaluate(
        f"Array.prototype.map.call(document.querySelectorAll({json.dumps(figure + ' g.role-title.cell-title, ' + figure + ' .role-header-title')}), function (t) {{ return t.textContent; }})"
    )
    assert len(axes) == len(conditions), (len(axes), panel_tops)
    assert len({a["top"] for a in axes}) == 2  # five panels in rows of three: both rows labelled
    assert all(a["texts"] for a in axes)


def test_the_board_opens_on_one_panel_at_a_readable_height(built, browser):
    """A board with more panels than fit in a row opens on one (the row over the games), so its
    chart is one panel high; its marks are the store's rows of that panel; 'all' draws every panel
    at the compact row height."""
    store, site = built
    figure = _open(browser, site, "#view=board&study=coopeval", "board:coopeval:mean")
    assert (
        browser.evaluate("document.querySelector('form.board-filters select[name=game]').value")
        == RAW_LABEL
    )
    expected = {r for r in _store_means(store) if r[1] == RAW_LABEL}
    assert _drawn(_symbols(browser, figure)) == expected
    one = _height(browser, figure)
    assert one <= len(expected) * BOARD_STEP + 200, one
    browser.screenshot(SCREENSHOTS / "board_opens_on_one_panel.png")
    figure = _choose(browser, "game", "*", "board:coopeval:mean")
    assert _drawn(_symbols(browser, figure)) == _store_means(store)
    rows_of_panels = 2  # six panels (five games and the row over the games) in rows of three
    assert _height(browser, figure) <= rows_of_panels * (one + 60), (_height(browser, figure), one)
    assert "&game=*" in browser.evaluate("location.hash")


def test_round_labels_of_36_rounds_neither_overlap_nor_turn(built, browser):
    """The tones' round axis (a band per round) labels round 1 and every fifth, level, with no two
    label boxes overlapping; every round keeps its tick."""
    _, site = built
    figure = _open(browser, site, "#view=board&study=gossip", "gossip_tones")
    for axis in _x_axes(browser, figure):
        if "36 values" not in axis["label"]:
            continue
        assert axis["texts"] == ["1", "5", "10", "15", "20", "25", "30", "35"], axis["texts"]
        assert axis["ticks"] == ROUNDS
        assert not any("rotate" in t for t in axis["transforms"]), axis["transforms"]
        boxes = axis["boxes"]
        for left, right in itertools.pairwise(boxes):
            assert left[2] <= right[0], (left, right)
    browser.evaluate(f"document.querySelector({json.dumps(figure)}).scrollIntoView()")
    browser.screenshot(SCREENSHOTS / "board_round_labels.png")


def test_the_replicator_trajectory_is_drawn_to_where_it_settles_and_says_so(built, browser):
    """cellA's trajectory runs 1,000 steps but settles early: the chart draws it up to a little past
    the step from which every share stays within the tolerance of its final value, and its title
    names that step and the drawn range."""
    _, site = built
    final = share(STEPS)
    settled = next(
        s
        for s in range(STEPS + 1)
        if all(abs(share(t) - final) <= SETTLED_WITHIN for t in range(s, STEPS + 1))
    )
    drawn_to = min(STEPS, settled + max(10, settled // 5))
    assert drawn_to < STEPS // 5
    figure = _open(browser, site, "#view=cell&cell=cellA", "trajectory")
    steps = {int(s["step"]) for s in _symbols(browser, figure)}
    assert max(steps) == drawn_to and min(steps) == 0
    assert len(steps) <= 101
    title = browser.evaluate(
        f"document.querySelector({json.dumps(figure + ' figcaption b')}).textContent"
    )
    assert (
        f"steps 0–{drawn_to} of {STEPS}" in title
        and f"from step {settled} on" in title
        and f"{SETTLED_WITHIN:g}" in title
    ), title
    browser.evaluate(f"document.querySelector({json.dumps(figure)}).scrollIntoView()")
    browser.screenshot(SCREENSHOTS / "board_trajectory.png")


def test_filters_narrow_the_charts_and_the_folded_table_to_the_stores_rows(built, browser):
    """Mechanism = Repetition (then agent = model-x) in the board's filters: the chart's marks and
    the rows of the table folded below it are the store's rows of that mechanism (and agent); the
    table stays folded until opened, and open once opened."""
    store, site = built
    figure = _open(browser, site, "#view=board&study=coopeval&game=*", "board:coopeval:mean")
    assert browser.evaluate("document.querySelector('details.board-table').open") is False
    browser.evaluate("document.querySelector('details.board-table').open = true")
    figure = _choose(browser, "mechanism", "Repetition", "board:coopeval:mean")
    expected = _store_means(store, mechanism="Repetition")
    assert _drawn(_symbols(browser, figure)) == expected
    assert browser.evaluate("document.querySelector('details.board-table').open") is True
    table = browser.evaluate(
        "Array.prototype.slice.call(document.querySelectorAll('details.board-table table.board tr'), 1).map(function (tr) {"
        " return Array.prototype.map.call(tr.cells, function (td) { return td.textContent; }); })"
    )
    assert {(r[0], r[1], r[2], round(float(r[3].split(" ")[0]), 3)) for r in table} == expected
    assert len(table) == len(expected)
    assert f"{len(expected)} of" in browser.evaluate(
        "document.querySelector('details.board-table summary').textContent"
    )
    assert "mechanism=Repetition" in browser.evaluate("location.hash")
    figure = _choose(browser, "agent", "model-x", "board:coopeval:mean")
    expected = _store_means(store, mechanism="Repetition", agent="model-x")
    assert _drawn(_symbols(browser, figure)) == expected
    assert (
        browser.evaluate("document.querySelectorAll('details.board-table table.board tr').length")
        == len(expected) + 1
    )
    browser.screenshot(SCREENSHOTS / "board_filtered.png")

    figure = _open(browser, site, "#view=board&study=gossip", "gossip_tones")
    figure = _choose(browser, "condition", "tone2", "gossip_tones")
    drawn = browser.evaluate(
        f"document.querySelectorAll({json.dumps(figure + ' .role-mark.mark-rect [role=graphics-symbol]')}).length"
    )
    with duckdb.connect(str(store), read_only=True) as con:
        (tones,) = con.execute(
            "SELECT count(DISTINCT (round, second_tone)) FROM gossip_rounds WHERE condition = 'tone2' AND second_tone IS NOT NULL"
        ).fetchone()
    assert drawn == tones
    board = _symbols(browser, "figure.chart[data-kind='board:gossip:coop']")
    assert board and {s["condition"] for s in board} == {"tone2"}
    assert (
        browser.evaluate(
            "document.querySelectorAll('figure.chart[data-kind=\"gossip_cooperation\"]').length"
        )
        == 1
    )
