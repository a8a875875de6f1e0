"""The explorer's chart data (coopeval.explorer.charts) against hand-computed values, and the
chart scripts the site ships against their pinned versions and hashes."""

from __future__ import annotations

import hashlib
import importlib.resources
import json

import duckdb

from coopeval.explorer.charts import cooperation_rows, href
from coopeval.explorer.extras import TRAJECTORY, WHERE


def test_cooperation_is_the_weight_on_the_cooperative_token_per_agent_and_round():
    # Prisoner's Dilemma: A0 cooperates. x: (30/100 + 1) / 2 in round 1 over two match-ups; y: 80/100
    episodes = [
        ("x|y", [
            {"kind": "action", "status": "ok", "round": 1, "agent": "x", "parsed": json.dumps({"A0": 30, "A1": 70})},
            {"kind": "action", "status": "ok", "round": 1, "agent": "y", "parsed": json.dumps({"A0": 0.8, "A1": 0.2})},
            {"kind": "action", "status": "failed", "round": 2, "agent": "y", "parsed": None},
            {"kind": "design", "status": "ok", "round": 0, "agent": "x", "parsed": json.dumps({"A0": 1})},
        ]),
        ("x|z", [{"kind": "action", "status": "ok", "round": 1, "agent": "x", "parsed": json.dumps({"A0": 1, "A1": 0})}]),
    ]  # fmt: skip
    found = cooperation_rows("c1", "PrisonersDilemma", episodes)
    assert [(r["agent"], r["round"], r["n"]) for r in found] == [("x", 1, 2), ("y", 1, 1)]
    assert abs(found[0]["cooperation"] - 0.65) < 1e-12 and abs(found[1]["cooperation"] - 0.8) < 1e-12
    assert found[0]["href"] == "#view=ep&cell=c1&m=x%7Cy&round=1"
    assert cooperation_rows("c1", "no_such_game", episodes) == []


def test_a_trajectory_is_drawn_to_a_little_past_where_it_settles_at_most_101_steps():
    con = duckdb.connect()
    con.execute("CREATE TABLE trajectories AS SELECT s AS step, 'a' AS agent, s / 1000.0 AS share, 'c1' AS cell_id FROM range(0, 1001) t(s)"
                " UNION ALL SELECT s, 'a', 0.5, 'c2' FROM range(0, 7) t(s)"
                " UNION ALL SELECT s, 'a', least(s, 50) / 100.0, 'c3' FROM range(0, 1001) t(s)"
                " UNION ALL SELECT s, 'b', 1 - least(s, 50) / 100.0, 'c3' FROM range(0, 1001) t(s)")  # fmt: skip
    found = con.execute(TRAJECTORY.sql(WHERE), [["c1", "c2", "c3"]]).fetchall()
    drawn = {cell: sorted({r[1] for r in found if r[0] == cell}) for cell in ("c1", "c2", "c3")}
    bounds = {r[0]: r[4:] for r in found}  # settled, drawn_to, last
    assert drawn["c1"] == list(range(0, 1001, 10))  # never settles before the last step: every 10th of 1000
    assert bounds["c1"] == (1000, 1000, 1000)
    assert drawn["c2"] == list(range(7)) and bounds["c2"] == (0, 6, 6)  # constant: settled at once, all 7 steps
    assert bounds["c3"] == (50, 60, 1000)  # both shares final from step 50: drawn to 50 + max(10, 50 // 5)
    assert drawn["c3"] == list(range(61))


def test_href_is_the_pages_hash():
    assert href(view="cells", study="gossip", mechanism="evolution/vh", game=None) == "#view=cells&study=gossip&mechanism=evolution%2Fvh"


def test_the_shipped_chart_scripts_are_the_pinned_ones():
    import altair

    assets = importlib.resources.files("coopeval.explorer") / "assets"
    vendor = json.loads((assets / "vendor.json").read_text())
    versions = {p["package"]: p["version"] for p in vendor["packages"]}
    assert versions["vega-lite"] == altair.SCHEMA_VERSION.lstrip("v")  # the specs Altair writes are of this version
    assert versions["vega"].split(".")[0] == altair.VEGA_VERSION and versions["vega-embed"].split(".")[0] == altair.VEGAEMBED_VERSION
    for package in vendor["packages"]:
        assert hashlib.sha256((assets / package["file"]).read_bytes()).hexdigest() == package["file_sha256"], package["file"]
        assert (assets / package["license_file"]).read_text().startswith("Copyright")



def test_every_chart_kind_is_a_valid_vega_lite_spec():
    """The build writes specs without validating them (speed); here each kind is checked against the schema."""
    import altair as alt
    import jsonschema

    from coopeval.explorer.charts import BOARD_AXES, board_charts, chart_kinds

    label = 'Mean "x"'
    boards = {
        study: {"columns": [{"key": "m", "label": label, "metric": True}], "rows": [{**dict.fromkeys(axes, "a"), "m": [1.0, 0.5], "n": 2}]}
        for study, axes in BOARD_AXES.items()
    }
    kinds = {**chart_kinds(), **board_charts(boards)[0]}
    schema = alt.vegalite.v6.schema.core.load_schema()
    for name, kind in kinds.items():
        jsonschema.validate({**kind["spec"], "datasets": {"rows": []}}, schema)
        assert kind["spec"]["$schema"].endswith(f"{alt.SCHEMA_VERSION}.json"), name
    titles = [layer["encoding"]["x"]["title"] for layer in kinds["board:coopeval:m"]["spec"]["spec"]["layer"]]
    assert titles == [label, label]  # the label substituted into the study's template, quotes and all
