"""A CoopEval board with mechanism variants (Public Goods at N = 3 and N = 8), in a real headless Chromium.

The fake store of :mod:`tests.explorer.fake_store` gets Public Goods cells under NoMechanism and
Repetition, each as the default cells (N = 3: Mean, Fitness, DR and DR rank) and as variant ``n8``
(N = 8: Mean only; the evaluation's ``TensorIncomplete`` note, a roster sample that is not a
cover), with their ``cells`` rows and decisions, and the run's aggregate table beside the store
(its DR: a mean rank). Checked against the store and that table: a variant's chart point opens
its own cells; ``game=all`` keeps every row; DR rank and DR rating apart; a value keeps its colour
in every chart and under a filter; each blank metric and each chart left empty says why.
Screenshots go to ``results/explorer/screenshots/variants_<name>.png``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import duckdb
import pytest

from coopeval.explorer import build_site
from tests.explorer.browser import Chromium, require_chromium
from tests.explorer.fake_store import make_store, read_data
from tests.explorer.test_site_browser import SCREENSHOTS, go

CELLS = {  # cell id → (mechanism, variant, players)
    "pg-no": ("NoMechanism", "default", 3),
    "pg-no-n8": ("NoMechanism", "n8", 8),
    "pg-re": ("Repetition", "default", 3),
    "pg-re-n8": ("Repetition", "n8", 8),
}
AGENTS = ("model-x", "model-y")
NOT_A_COVER = "payoff tensor cell [0, 1] has no observation; the cell played a sample of 300 of 4^8 rosters that does not cover every co-player multiset"

AGGREGATE_CSV = """mechanism,game,metric,agent,mean,se,rank,ci_low,ci_high,tie_group
Repetition,All,Mean,model-x,0.5,,1,0.4,0.6,a
Repetition,All,Mean,model-y,0.2,,2,0.1,0.3,b
Repetition,All,DR,model-x,1.25,,1,,,a
Repetition,All,DR,model-y,1.75,,2,,,a
"""


def _store(path: Path) -> Path:
    make_store(path)
    metric = "INSERT INTO metrics (cell_id, source, run, mechanism, game, agent, metric, value, rule) VALUES (?, 'ours', 'r1', ?, 'PublicGoods', ?, ?, ?, ?)"
    with duckdb.connect(str(path)) as con:
        for cell, (mechanism, variant, players) in CELLS.items():
            con.execute("INSERT INTO cells (cell_id, mechanism, variant, game, replicate, players) VALUES (?, ?, ?, 'public_goods', 0, ?)",
                        [cell, mechanism, variant, players])  # fmt: skip
            con.execute("INSERT INTO decisions BY NAME SELECT * EXCLUDE (mechanism, game) REPLACE (? AS cell_id, ? AS setting, 'PublicGoods' AS environment,"
                        " ? || decision_id AS decision_id) FROM decisions WHERE cell_id = 'cellA'", [cell, mechanism, f"{cell}-"])  # fmt: skip
            for a, agent in enumerate(AGENTS):
                con.execute(metric, [cell, mechanism, agent, "Mean", 1.0 + a + (0.5 if variant == "n8" else 0.0), None])
                if variant == "default":
                    con.execute(metric, [cell, mechanism, agent, "Fitness", 0.5 + 0.25 * a, None])
                    con.execute(metric, [cell, mechanism, agent, "DR", -0.5 * a, None])  # model-x the higher rating: rank 1
                    con.execute(metric, [cell, mechanism, agent, "DR_rank", 1.0 + a, None])
            con.execute(metric, [cell, mechanism, "LLM Average", "Mean", 1.5, None])
            if variant == "default":
                con.execute(metric, [cell, mechanism, "LLM Average", "Fitness", 0.6, None])
            else:
                con.execute(metric, [cell, mechanism, "LLM Average", "TensorIncomplete", 0.0, NOT_A_COVER])
    (path.parent / "tables").mkdir()
    (path.parent / "tables" / "aggregate.csv").write_text(AGGREGATE_CSV, encoding="utf-8")  # written after the store: this run's
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    require_chromium()
    root = tmp_path_factory.mktemp("variants")
    store = _store(root / "coopeval.duckdb")
    build_site(store, root / "site")
    return store, root / "site"


@pytest.fixture(scope="module")
def browser(built, tmp_path_factory):
    with Chromium(tmp_path_factory.mktemp("profile"), size=(1400, 1000)) as chromium:
        yield chromium


def _board(site: Path) -> dict[str, Any]:
    return read_data(site, "data/index.js")["leaderboards"]["coopeval"]


def _chart_rows(site: Path, kind: str) -> list[dict[str, Any]]:
    index = read_data(site, "data/index.js")
    (chart,) = [c for c in index["charts"]["charts"] if c["kind"] == kind]
    return read_data(site, f"data/charts/{chart['file']}.js")


def _open_board(browser: Chromium, site: Path, hash_: str, kinds: tuple[str, ...] = ("board:coopeval:mean",)) -> None:
    browser.open("about:blank")
    browser.wait("location.href === 'about:blank'", "a blank page")
    go(browser, site, hash_)
    for kind in kinds:
        browser.wait(f"document.querySelector('figure.chart[data-kind={json.dumps(kind)}][data-drawn]')", f"the chart {kind}")


def _fills(browser: Chromium, kind: str) -> dict[str, str]:
    """mechanism → the fill of its points in the chart ``kind`` (each mechanism one fill)."""
    labels = browser.evaluate(
        f"Array.prototype.map.call(document.querySelectorAll({json.dumps(f'figure.chart[data-kind={json.dumps(kind)}] .role-mark.mark-symbol [role=graphics-symbol]')}),"
        " function (e) { return [e.getAttribute('aria-label'), e.getAttribute('fill')]; })"
    )
    out: dict[str, set[str]] = {}
    for label, fill in labels:
        fields = dict(part.split(": ", 1) for part in label.split("; "))
        out.setdefault(fields["mechanism"], set()).add(fill)
    assert all(len(f) == 1 for f in out.values()), out
    return {m: next(iter(f)) for m, f in out.items()}


def test_a_variants_chart_point_opens_the_variants_own_cells(built, browser):
    """Every point of 'NoMechanism (n8)' links to the n8 cells alone: the link carries the
    variant, the cells page narrows by it and shows each cell's variant and N (fault 1)."""
    _, site = built
    rows = [r for r in _chart_rows(site, "board:coopeval:mean") if r["game"] == "PublicGoods" and r["agent"] == "model-x"]
    links = {r["mechanism"]: r["href"] for r in rows}
    assert "variant=n8" in links["NoMechanism (n8)"] and "variant=default" in links["NoMechanism"]
    for mechanism, expected in (("NoMechanism (n8)", ["pg-no-n8"]), ("NoMechanism", ["pg-no"])):
        go(browser, site, links[mechanism])
        browser.wait("document.querySelector('main h2') && document.querySelector('main h2').textContent.indexOf('Cells') === 0", "the cells list")
        listed = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('main table tr'), function (tr) {"
                                  " return Array.prototype.map.call(tr.children, function (td) { return td.textContent; }); })")  # fmt: skip
        head, body = listed[0], listed[1:]
        assert [r[-1] for r in body] == expected, (mechanism, body)
        variant = dict(zip(head, body[0], strict=True))["variant"]
        assert variant == ("n8 (N = 8)" if expected == ["pg-no-n8"] else "default (N = 3)")
    browser.screenshot(SCREENSHOTS / "variants_cells.png")


def test_game_all_in_the_url_keeps_every_row_and_labels_each_option_once(built, browser):
    """``&game=all`` (as the docs invite) is every game, not a game named "all" (fault 2)."""
    _, site = built
    board = _board(site)
    _open_board(browser, site, "#view=board&study=coopeval&game=all")
    summary = browser.evaluate("document.querySelector('details.board-table summary').textContent")
    assert f"({len(board['rows'])} rows;" in summary, summary
    games = {r["game"] for r in _chart_rows(site, "board:coopeval:mean")}
    panels = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('figure.chart[data-kind=\"board:coopeval:mean\"] .role-title text'),"
                              " function (t) { return t.textContent; })")  # fmt: skip
    assert games <= set(panels)
    for field in ("mechanism", "game", "agent"):
        labels = browser.evaluate(f"Array.prototype.map.call(document.querySelectorAll('form.board-filters select[name={field}] option'), function (o) {{ return o.textContent; }})")
        assert len(labels) == len(set(labels)), (field, labels)
    assert browser.evaluate("document.querySelector('form.board-filters select[name=game]').value") == "*"


def test_dr_rank_and_dr_rating_each_hold_one_quantity(built, browser):
    """The DR of the aggregate table is a mean rank: the board shows it as DR rank beside the
    per-game DR ranks (the store's DR_rank, as the per-game table), the rating apart as DR rating,
    and the note no longer calls the rank "DR raw" (fault 3)."""
    store, site = built
    board = _board(site)
    labels = [c["label"] for c in board["columns"] if c["metric"]]
    assert labels == ["Mean", "Fitness", "DR rank", "DR rating"]
    assert "DR raw" not in board["note"]
    with duckdb.connect(str(store), read_only=True) as con:
        ranks = {(m, a): v for m, a, v in con.execute("SELECT mechanism, agent, avg(value) FROM metrics WHERE metric = 'DR_rank' AND cell_id IN ('pg-no', 'pg-re') GROUP BY ALL").fetchall()}
        ratings = {(m, a): v for m, a, v in con.execute("SELECT mechanism, agent, avg(value) FROM metrics WHERE metric = 'DR' AND cell_id IN ('pg-no', 'pg-re') GROUP BY ALL").fetchall()}
    per_game = {(r["mechanism"], r["agent"]): r for r in board["rows"] if r["game"] == "PublicGoods" and r["agent"] in AGENTS}
    assert {k: per_game[k]["dr_rank"][0] for k in ranks} == ranks
    assert {k: per_game[k]["dr"][0] for k in ratings} == ratings
    over = {r["agent"]: r for r in board["rows"] if r["game"] == "social dilemmas (normalised)"}
    assert {a: r["dr_rank"][0] for a, r in over.items()} == {"model-x": 1.25, "model-y": 1.75}
    assert {r["dr"][0] for r in over.values()} == {None} and all("rank" in r["dr_why"] for r in over.values())
    rank_chart = _chart_rows(site, "board:coopeval:dr_rank")
    assert {r["game"] for r in rank_chart} >= {"PublicGoods", "social dilemmas (normalised)"}
    assert {(r["mechanism"], r["agent"]): r["value"] for r in rank_chart if r["game"] == "PublicGoods"} == ranks
    _open_board(browser, site, "#view=board&study=coopeval&game=*", ("board:coopeval:dr_rank", "board:coopeval:dr"))
    titles = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('figure.chart figcaption b'), function (b) { return b.textContent; })")
    assert "coopeval: DR rank" in titles and "coopeval: DR rating" in titles
    headers = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('table.board th'), function (th) { return th.textContent; })")
    assert "DR rank" in headers and "DR rating" in headers


def test_a_mechanism_keeps_its_colour_in_every_chart_and_under_a_filter(built, browser):
    """One mechanism, one colour: the Mean chart (every variant) and the Fitness chart (no n8
    values) colour a mechanism alike, and so does the Mean chart filtered to Repetition (fault 4)."""
    _, site = built
    _open_board(browser, site, "#view=board&study=coopeval&game=*", ("board:coopeval:mean", "board:coopeval:fitness"))
    mean, fitness = _fills(browser, "board:coopeval:mean"), _fills(browser, "board:coopeval:fitness")
    assert set(fitness) < set(mean)
    assert {m: mean[m] for m in fitness} == fitness
    assert len(set(mean.values())) == len(mean)
    _open_board(browser, site, "#view=board&study=coopeval&mechanism=Repetition&game=*&agent=*")
    assert _fills(browser, "board:coopeval:mean") == {"Repetition": mean["Repetition"]}
    browser.screenshot(SCREENSHOTS / "variants_colours.png")


def test_each_blank_says_why_and_an_empty_chart_says_the_metric_is_undefined(built, browser):
    """The LLM Average has no DR by definition; at N = 8 (no cover) Fitness and DR are undefined,
    and under that filter the page says so, naming the charts in their order on every load (fault 5)."""
    _, site = built
    board = _board(site)
    llm = next(r for r in board["rows"] if r["agent"] == "LLM Average" and r["mechanism"] == "NoMechanism" and r["game"] == "PublicGoods")
    assert "by definition" in llm["dr_why"] and "roster" not in llm["dr_why"]
    n8 = next(r for r in board["rows"] if r["agent"] == "model-x" and r["mechanism"] == "NoMechanism (n8)" and r["game"] == "PublicGoods")
    assert "N = 8" in n8["fitness_why"] and "does not cover every co-player multiset" in n8["fitness_why"]
    assert "N = 8" in n8["dr_why"]
    texts = []
    for _ in range(3):
        _open_board(browser, site, "#view=board&study=coopeval&mechanism=NoMechanism%20(n8)&game=*&agent=*")
        browser.wait("document.querySelector('p.chart-empty') && !document.querySelector('p.chart-empty').hidden"
                     " && document.querySelector('p.chart-empty').textContent.indexOf('DR rating') >= 0", "the note on the charts not drawn")  # fmt: skip
        texts.append(browser.evaluate("document.querySelector('p.chart-empty').textContent"))
    assert len(set(texts)) == 1, texts
    text = texts[0]
    assert "undefined at N = 8" in text and "No rows under the filter" not in text
    assert text.index("coopeval: Fitness") < text.index("coopeval: DR rank") < text.index("coopeval: DR rating")
    browser.screenshot(SCREENSHOTS / "variants_undefined.png")
    assert unquote("NoMechanism%20(n8)") in browser.evaluate("document.querySelector('form.board-filters select[name=mechanism]').value")
