"""A prompt-variant row of the model-against-model page (scope ``<mechanism>/<game>/<level>``,
issue 47 item 1, issue 46 R68 "expected") opens exactly that prompt variant's cells in a real
headless Chromium: the default-variant Public Goods cell in wording ``p1``, not the base wording's
cell nor the N = 5 cell in the same wording."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from tests.explorer.browser import Chromium, built_site
from tests.explorer.fake_store import read_data
from tests.explorer.test_pairs_browser import _figures, _listed_cells, _open
from tests.explorer.test_pairs_browser import _store as pairs_store

PROMPT_CELLS = {  # cell id → (variant, players): the manifest writes <variant>@<wording> (cells.manifest_variant)
    "pg-no-p1": ("default@p1", 3),
    "pg-no-n5-p1": ("n5@p1", 5),
}
SCOPE = "NoMechanism/PublicGoods/p1"


def _store(path: Path) -> Path:
    pairs_store(path)
    same = ("INSERT INTO decisions BY NAME SELECT * EXCLUDE (mechanism, game) REPLACE (? AS cell_id, ? AS setting, ? AS environment,"
            " ? || decision_id AS decision_id) FROM decisions WHERE cell_id = ?")  # fmt: skip
    with duckdb.connect(str(path)) as con:
        for cell, (variant, players) in PROMPT_CELLS.items():
            con.execute("INSERT INTO cells (cell_id, mechanism, variant, game, replicate, players) VALUES (?, 'NoMechanism', ?, 'public_goods', 0, ?)",
                        [cell, variant, players])  # fmt: skip
            con.execute(same, [cell, "NoMechanism", "PublicGoods", f"{cell}-", "cellA"])
        con.execute("INSERT INTO comparisons (study, scope, metric, a, b, delta, ci_low, ci_high, p_value, p_adjusted, correction, mde, n_clusters)"
                    " VALUES ('coopeval', ?, 'Mean', 'model-x', 'model-y', 0.25, 0.1, 0.4, 0.01, 0.01, 'holm', NULL, 8)", [SCOPE])  # fmt: skip
    return path


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    return built_site(tmp_path_factory, "pairs_prompt", _store)


def test_a_prompt_variant_row_opens_that_wordings_cells_only(built, tmp_path_factory):
    store, site = built
    with duckdb.connect(str(store), read_only=True) as con:  # the cells of Public Goods under NoMechanism seating both models
        (public_goods,) = con.execute("SELECT count(DISTINCT cell_id) FROM decisions WHERE mechanism = 'NoMechanism' AND game = 'PublicGoods'"
                                      " AND agent IN ('model-x', 'model-y')").fetchone()  # fmt: skip
    assert public_goods == 5  # N = 3, 5, 8 in the base wording, N = 3 and 5 in wording p1
    with Chromium(tmp_path_factory.mktemp("profile"), size=(1400, 1000)) as browser:
        _open(browser, site, "#view=pairs&study=coopeval&a=model-x&b=model-y", 3)
        table = read_data(site, "data/pairs.js")
        (row,) = [r for r in table if r["scope"] == SCOPE]
        shown = [link for figure in _figures(browser) for link in figure["links"] if link == row["href"]]
        assert shown, "the page links the prompt-variant row"
        assert "variant=default%40p1" in row["href"] or "variant=default@p1" in row["href"]
        assert row["cells"] == 1
        assert _listed_cells(browser, site, shown[0]) == ["pg-no-p1"]
        _open(browser, site, "#view=pairs&study=coopeval&a=model-x&b=model-y", 3)
        note = browser.evaluate("document.querySelector('p.pair-uncompared') ? document.querySelector('p.pair-uncompared').textContent : ''")
        assert "n5@p1" in note and "default@p1" not in note  # the compared wording is not listed as uncompared
