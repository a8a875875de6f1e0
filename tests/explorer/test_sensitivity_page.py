"""The prompt sensitivity report in the explorer (issue 23 item 4): the store's sensitivity rows
(written from the report's tables) reach the page's data exactly, the page is reachable from the
landing page of a run with prompt variants and shows them as text, and a run without variants
shows no link."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl
import pytest

from coopeval.evaluation.sensitivity import prompt_sensitivity
from coopeval.evaluation.sensitivity_report import sensitivity_tables
from coopeval.evaluation.sensitivity_store import (
    SENSITIVITY_PARTS,
    SENSITIVITY_STORE_FILES,
    write_sensitivity_store_rows,
)
from coopeval.explorer import build_site
from coopeval.explorer.queries import table_names
from coopeval.explorer.sensitivity import sensitivity_reports
from tests.explorer.browser import Chromium, require_chromium
from tests.explorer.fake_store import make_store, read_data

MARKUP = '<img src=x onerror="window.PWNED=1">'
"""A model name holding markup: the page must show it as text."""
VALUES = {  # model → variant → the normalised value in contexts c1, c2
    "model-a": {"base": (1.0, 0.6), "p1": (0.8, 0.4)},
    "model-b": {"base": (0.2, 0.4), "p1": (0.9, 0.7)},
    MARKUP: {"base": (0.0, 0.2), "p1": (0.1, 0.1)},
}
MEANS = {"model-a": (0.8, 0.6), "model-b": (0.3, 0.8), MARKUP: (0.1, 0.1)}
"""Hand-computed per-variant means (base, p1)."""


def _values() -> pl.DataFrame:
    rows = [{"model": m, "prompt_variant": v, "context": f"c{k + 1}", "value": x}
            for m, by in VALUES.items() for v, xs in by.items() for k, x in enumerate(xs)]
    return pl.DataFrame(rows)


def _report(folder: Path, values: pl.DataFrame) -> dict[str, str]:
    """The report's CSV tables, as the sensitivity rule writes them."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for part, frame in sensitivity_tables({"Mean": prompt_sensitivity(values)}).items():
        paths[part] = str(folder / f"{part}.csv")
        frame.write_csv(paths[part])
    return paths


def variant_store(root: Path) -> Path:
    """The fake store plus the sensitivity rows of a CoopEval and a gossip report, loaded from
    the Parquet files the rule ``sensitivity_store_rows`` writes (as the ``store`` rule does)."""
    store = make_store(root / "coopeval.duckdb")
    gossip = _values().filter(pl.col("model") != MARKUP)
    reports = {"coopeval": _report(root / "coopeval", _values()), "gossip": _report(root / "gossip", gossip)}
    out = {table: str(root / Path(path).name) for table, path in SENSITIVITY_STORE_FILES.items()}
    write_sensitivity_store_rows(reports, out)
    con = duckdb.connect(str(store))
    try:
        for table, path in out.items():
            con.execute(f"INSERT INTO {table} SELECT * FROM read_parquet(?)", [path])
    finally:
        con.close()
    return store


def _reports(store: Path) -> list[dict]:
    con = duckdb.connect(str(store), read_only=True)
    try:
        return sensitivity_reports(con, table_names(con))
    finally:
        con.close()


def test_the_page_data_is_the_reports_values(tmp_path: Path) -> None:
    reports = _reports(variant_store(tmp_path))
    assert [r["study"] for r in reports] == ["coopeval", "gossip"]
    mean = reports[0]["metrics"][0]
    assert mean["metric"] == "Mean" and mean["variants"] == ["base", "p1"]
    got = {r["model"]: tuple(r["values"]) for r in mean["values"]}
    assert got.keys() == MEANS.keys()
    for model, expected in MEANS.items():
        assert got[model] == pytest.approx(expected, abs=1e-12)
    assert {r["n_contexts"] for r in mean["values"]} == {2}
    # orderings: a − b under each variant; holds iff the sign is the same (and not 0) under both
    pairs = {frozenset((o["a"], o["b"])): o for o in mean["orderings"]}
    assert len(pairs) == 3
    for o in pairs.values():
        expected = [MEANS[o["a"]][k] - MEANS[o["b"]][k] for k in (0, 1)]
        assert o["deltas"] == pytest.approx(expected, abs=1e-12)
    assert not pairs[frozenset(("model-a", "model-b"))]["holds"]  # +0.5 under base, -0.2 under p1
    assert pairs[frozenset(("model-a", MARKUP))]["holds"] and pairs[frozenset(("model-b", MARKUP))]["holds"]
    # variance shares: SS_model = V·C·Σ_m (ȳ_m − ȳ)² = 4 · 0.195 = 0.78 of SS_total = 1.29 (by hand)
    shares = {s["source"]: s for s in mean["shares"]}
    assert [s["source"] for s in mean["shares"]][:3] == ["model", "prompt variant", "model × prompt variant"]
    assert shares["model"]["sum_sq"] == pytest.approx(0.78) and shares["model"]["df"] == 2
    assert shares["model"]["share"] == pytest.approx(0.78 / 1.29)
    assert sum(s["share"] for s in mean["shares"]) == pytest.approx(1.0)
    # the gossip report keeps its own rows
    assert {r["model"] for r in reports[1]["metrics"][0]["values"]} == {"model-a", "model-b"}


def test_the_store_rows_are_the_report_tables(tmp_path: Path) -> None:
    reports = {"coopeval": _report(tmp_path / "r", _values())}
    out = {table: str(tmp_path / f"{table}.parquet") for table in SENSITIVITY_PARTS}
    counts = write_sensitivity_store_rows(reports, out)
    expected = sensitivity_tables({"Mean": prompt_sensitivity(_values())})
    for table, part in SENSITIVITY_PARTS.items():
        stored = pl.read_parquet(out[table])
        assert stored["study"].to_list() == ["coopeval"] * expected[part].height == ["coopeval"] * counts[table]
        assert stored.drop("study").select(expected[part].columns).equals(expected[part])


def test_a_report_without_results_adds_no_rows(tmp_path: Path) -> None:
    folder = tmp_path / "r"
    folder.mkdir()
    paths = {}
    for part, frame in sensitivity_tables({}).items():  # what the rule writes when no metric is balanced
        paths[part] = str(folder / f"{part}.csv")
        frame.write_csv(paths[part])
    out = {table: str(tmp_path / f"{table}.parquet") for table in SENSITIVITY_PARTS}
    assert write_sensitivity_store_rows({"coopeval": paths}, out) == dict.fromkeys(SENSITIVITY_PARTS, 0)


def test_a_run_without_variants_has_no_report(tmp_path: Path) -> None:
    store = make_store(tmp_path / "coopeval.duckdb")
    assert _reports(store) == []
    build_site(store, tmp_path / "site")
    assert read_data(tmp_path / "site", "data/index.js")["sensitivity"] == []
    assert _reports(make_store(tmp_path / "old.duckdb", drop=list(SENSITIVITY_PARTS))) == []  # a store from before the tables


LINK = 'a[href="#view=sensitivity"]'


@pytest.fixture(scope="module")
def sites(tmp_path_factory) -> dict[str, Path]:
    require_chromium()
    root = tmp_path_factory.mktemp("sensitivity")
    build_site(variant_store(root / "variants"), root / "variants" / "site")
    plain = root / "plain"
    plain.mkdir()
    build_site(make_store(plain / "coopeval.duckdb"), plain / "site")
    return {"variants": root / "variants" / "site", "plain": plain / "site"}


def _landing(browser: Chromium, site: Path) -> None:
    browser.open((site / "index.html").as_uri())
    browser.wait("document.querySelector('main h2') && document.querySelector('main h2').textContent === 'Run overview'", "the overview")


def _rows(browser: Chromium, study: str, part: str) -> list[list[str]]:
    selector = f"section[data-study='{study}'][data-metric='Mean'] div.{part} tr"
    return browser.evaluate(
        f"Array.prototype.map.call(document.querySelectorAll({selector!r}), function (tr) {{"
        " return Array.prototype.map.call(tr.children, function (c) { return c.textContent; }); })")


def test_the_page_is_reached_from_the_landing_page_and_shows_the_report(sites, tmp_path_factory) -> None:
    with Chromium(tmp_path_factory.mktemp("profile")) as browser:
        _landing(browser, sites["plain"])
        assert browser.evaluate(f"document.querySelectorAll({LINK!r}).length") == 0  # one wording: no link
        _landing(browser, sites["variants"])
        browser.click(LINK)
        browser.wait("document.querySelector(\"section[data-study='coopeval'] div.orderings tr\")", "the sensitivity page")
        values = _rows(browser, "coopeval", "values")
        assert values[0] == ["model", "base", "p1", "contexts"]
        assert sorted(values[1:]) == sorted([[m, f"{b:.4f}", f"{p:.4f}", "2"] for m, (b, p) in MEANS.items()])
        orderings = {(r[0], r[1]): r[2:] for r in _rows(browser, "coopeval", "orderings")[1:]}
        ab = orderings.get(("model-a", "model-b")) or orderings[("model-b", "model-a")]
        assert ab[-1] == "no" and ab[-2] == "2"
        assert sorted(r[-1] for r in orderings.values()) == ["no", "yes", "yes"]
        shares = {r[0]: r[1:] for r in _rows(browser, "coopeval", "shares")[1:]}
        assert shares["model"] == ["0.780000", "2", f"{100 * 0.78 / 1.29:.1f} %"]
        assert len(_rows(browser, "gossip", "values")) == 3  # header and two models
        # the markup model name is text: no element made of it, nothing ran
        assert browser.evaluate("typeof window.PWNED") == "undefined"
        assert browser.evaluate("document.querySelectorAll('main img, main script').length") == 0
