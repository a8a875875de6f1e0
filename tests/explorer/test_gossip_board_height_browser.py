"""A gossip leaderboard with many models fits a screen per testbed (issue 47 item 3), in a real
headless Chromium: 12 models × 16 conditions in one testbed drew one panel of every model at
BOARD_STEP px per point (2,980 px tall in this test); the board now opens on one model (the model picker,
"Opened on …"), its panel at most about a screen, and picking another model draws that model's
16 conditions; "all" still draws all 192 points."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.explorer.browser import Chromium, built_site
from tests.explorer.fake_store import make_store
from tests.explorer.test_board_layout_browser import _choose, _height, _open, _symbols

MODELS = [f"model-{k:02d}" for k in range(12)]
CONDITIONS = [f"cond-{k:02d}" for k in range(16)]
SCREEN = 1000


def _store(path: Path) -> Path:
    make_store(path)
    with duckdb.connect(str(path)) as con:
        con.execute("DELETE FROM gossip_run_metrics")
        for m, model in enumerate(MODELS):
            for c, condition in enumerate(CONDITIONS):
                con.execute("INSERT INTO gossip_run_metrics (cell_id, run, testbed, condition, model, cooperation_ratio_mean, gini)"
                            " VALUES (?, 'r1', 'donation', ?, ?, ?, 0.1)", [f"g-{m}-{c}", condition, model, (m + c) % 10 / 10])  # fmt: skip
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    return built_site(tmp_path_factory, "gossip_height", _store)


def test_one_testbed_of_twelve_models_is_no_taller_than_a_screen(built, tmp_path_factory):
    _, site = built
    kind = "board:gossip:coop"
    with Chromium(tmp_path_factory.mktemp("profile"), size=(1400, 1000)) as browser:
        figure = _open(browser, site, "#view=board&study=gossip", kind)
        assert browser.evaluate("document.querySelector('form.board-filters select[name=model]').value") == MODELS[0]
        assert "model" in browser.evaluate("document.querySelector('p.board-opened') ? document.querySelector('p.board-opened').textContent : ''")
        height = _height(browser, figure)
        assert height <= SCREEN, height
        drawn = _symbols(browser, figure)
        assert len(drawn) == len(CONDITIONS) and {d["model"] for d in drawn} == {MODELS[0]}
        figure = _choose(browser, "model", MODELS[7], kind)
        drawn = _symbols(browser, figure)
        assert {d["model"] for d in drawn} == {MODELS[7]} and len(drawn) == len(CONDITIONS)
        assert _height(browser, figure) <= SCREEN
        figure = _choose(browser, "model", "*", kind)  # every model at once: the reader's choice
        assert len(_symbols(browser, figure)) == len(MODELS) * len(CONDITIONS)
        assert _height(browser, figure) > 2 * SCREEN  # what the board opened on before (issue 47: 3,218 px)
        assert "model=" in browser.evaluate("location.hash")
