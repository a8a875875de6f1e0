"""A study defined outside ``src/`` runs through the smoke workflow end to end: the config key
``plugins`` imports ``tests/plugins/toy_study.py`` (on PYTHONPATH for the run), which registers
the study and its tables; nothing else is edited (issue 20, the study recipe)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.pipeline.workflow_copy import copy_workflow

REPO = Path(__file__).resolve().parents[2]
PLUGINS = REPO / "tests" / "plugins"


@pytest.mark.slow
def test_toy_study_runs_end_to_end(tmp_path):
    work = copy_workflow(tmp_path)
    (work / "toy.yaml").write_text("plugins: [toy_study]\nstudies: [toy]\ntoy: {rounds: 4, replicates: 3}\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(work / "src"), str(PLUGINS)])}
    command = [sys.executable, "-m", "snakemake", "--cores", "2", "all", "--configfile", "config/smoke.yaml", "toy.yaml"]
    run = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    assert "studies: toy (3 cells)" in run.stderr
    con = duckdb.connect(str(work / "results" / "coopeval.duckdb"), read_only=True)
    try:
        # round t of replicate r earns t * r: 4 rounds sum to 10 r
        rows = con.execute("SELECT replicate, count(*), sum(points) FROM toy_rounds GROUP BY replicate ORDER BY replicate").fetchall()
        assert rows == [(1, 4, 10.0), (2, 4, 20.0), (3, 4, 30.0)]
        cells = con.execute("SELECT cell_id, replicate, rounds FROM toy_cells ORDER BY replicate").fetchall()
        assert [(r, n) for _, r, n in cells] == [(1, 4), (2, 4), (3, 4)]
        played = {row[0] for row in con.execute("SELECT DISTINCT cell_id FROM toy_rounds").fetchall()}
        assert played == {c[0] for c in cells}
        assert con.execute("SELECT count(*) FROM decisions").fetchone()[0] == 0
    finally:
        con.close()
    # the other studies are not configured: nothing of theirs ran
    assert not (work / "results" / "play" / "coopeval").exists()


TOY_OVERLAY = """\
plugins: [toy_game, toy_mechanism, toy_provider]
studies: [coopeval]
agents:
  - model: toy/first
  - model: toy/last
games: [toy_dilemma]
mechanisms: [ToyRounds]
"""


@pytest.mark.slow
def test_toy_game_mechanism_and_provider_run_end_to_end(tmp_path):
    """The toy game (tests/plugins/toy_game.py) under the toy mechanism (toy_mechanism.py) with
    two agents of the toy provider (toy_provider.py): ``toy/first`` always plays A0 (cooperate),
    ``toy/last`` always A1 (defect). ToyRounds plays the 4 seat-ordered matchups (self-play
    included) for 2 rounds, so 16 action decisions. Row payoffs 4 (A0/A0), 0 (A0/A1), 6 (A1/A0),
    1 (A1/A1): toy/first earns 4 x 4 (vs itself) + 4 x 0 = 16 over its 8 decisions, toy/last
    4 x 6 + 4 x 1 = 28 over its 8."""
    work = copy_workflow(tmp_path)
    (work / "toys.yaml").write_text(TOY_OVERLAY)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(work / "src"), str(PLUGINS)])}
    command = [sys.executable, "-m", "snakemake", "--cores", "2", "all", "--configfile", "config/smoke.yaml", "toys.yaml"]
    run = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr[-4000:]
    con = duckdb.connect(str(work / "results" / "coopeval.duckdb"), read_only=True)
    try:
        cells = con.execute("SELECT mechanism, game FROM cells").fetchall()
        assert cells == [("ToyRounds", "toy_dilemma")]
        rows = con.execute(
            "SELECT agent, count(*), sum(action), sum(points), count(DISTINCT matchup_id), max(round) FROM decisions "
            "WHERE kind = 'action' GROUP BY agent ORDER BY agent"
        ).fetchall()
        assert rows == [("toy/first(IO)", 8, 0, 16.0, 3, 2), ("toy/last(IO)", 8, 8, 28.0, 3, 2)]
        assert con.execute("SELECT DISTINCT game, mechanism, status FROM decisions").fetchall() == [("ToyDilemma", "ToyRounds", "ok")]
        # Mean: the average per-round points of an agent's seats, over its 4 seats in the
        # 4 matchups: toy/first (4 + 4 + 0 + 0) / 4 = 2, toy/last (6 + 6 + 1 + 1) / 4 = 3.5
        means = con.execute("SELECT agent, value FROM metrics WHERE metric = 'Mean' ORDER BY agent").fetchall()
        assert means == [("LLM Average", 2.75), ("toy/first(IO)", 2.0), ("toy/last(IO)", 3.5)]
        # defecting strictly dominates: replicator dynamics end on toy/last, which no deviation beats
        assert con.execute("SELECT value FROM metrics WHERE metric = 'Fitness' AND agent = 'toy/last(IO)'").fetchone()[0] == pytest.approx(1.0)
        assert con.execute("SELECT value FROM metrics WHERE metric = 'DR' AND agent = 'toy/last(IO)'").fetchone()[0] == 0.0
    finally:
        con.close()
    assert not (work / "results" / "play" / "gossip").exists()
    per_game = (work / "results" / "tables" / "per_game.md").read_text()
    assert "Toy Dilemma" in per_game and "Toy rounds" in per_game, per_game[:2000]


REGISTRATION_CHECK = """\
import pytest
import coopeval.games as games
from coopeval.agents.registry import make_agent, model_error, register_provider
from coopeval.pipeline.config import config_schema
from coopeval.studies.coopeval.mechanisms import catalog, get_mechanism
from coopeval.studies.coopeval.study import CoopEvalStudy

assert "toy_dilemma" not in config_schema()["properties"]["games"]["items"]["enum"]  # built before the plugins
import toy_game, toy_mechanism, toy_provider

props = config_schema()["properties"]
assert props["games"]["items"]["enum"][-1] == "toy_dilemma"
assert props["mechanisms"]["items"]["enum"][-1] == "ToyRounds"
# Registered, but not played by a config that leaves the lists unset (defaults: the shipped ones).
assert props["games"]["default"] == list(games.SHIPPED_GAMES) == props["games"]["items"]["enum"][:-1]
assert props["mechanisms"]["default"] == list(catalog.SHIPPED_MECHANISMS) == props["mechanisms"]["items"]["enum"][:-1]
assert props["mechanism_params"]["properties"]["ToyRounds"]["properties"]["num_rounds"]["default"] == 2
constraints = CoopEvalStudy().wildcard_constraints
assert constraints["game"].endswith("|toy_dilemma") and constraints["mechanism"].endswith("|ToyRounds")
assert games.game_key_pattern().endswith("|toy_dilemma") and catalog.mechanism_name_pattern().endswith("|ToyRounds")
assert games.GAME_TYPES[-1] == "ToyDilemma" and games.GAME_TITLES["ToyDilemma"] == "Toy Dilemma"
assert "ToyDilemma" not in games.SOCIAL_DILEMMA_TYPES
assert games.get_game("ToyDilemma").payoffs((1, 0)) == (6.0, 0.0)
assert catalog.MECHANISM_ORDER[-1] == "ToyRounds" and catalog.MECHANISM_LABELS["ToyRounds"] == "Toy rounds"
assert type(get_mechanism("ToyRounds")).__name__ == "ToyRounds"
assert make_agent({"model": "toy/last"}).name == "toy/last(IO)"
assert "toy/first, toy/last" in model_error("toy/middle")
with pytest.raises(ValueError, match="already registered"):
    games.register_game(games.GameEntry(toy_game.toy_dilemma, social_dilemma=False))
with pytest.raises(ValueError, match="already registered"):
    catalog.register_mechanism(catalog.MECHANISM_INFO["Repetition"])
with pytest.raises(ValueError, match="already provider 'toy'"):
    register_provider(toy_provider.TOY)
print("registered")
"""


def test_plugin_entries_reach_schema_wildcards_and_lookups():
    """Importing the three toy plugins (in a fresh process, so this session's registries stay
    as shipped) adds their entries last to the schema enums (even when a schema was built
    before), the wildcard constraints, the
    orders and titles; registering a name twice is refused."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(PLUGINS)])}
    run = subprocess.run([sys.executable, "-c", REGISTRATION_CHECK], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-4000:]
    assert run.stdout.strip().endswith("registered")


def test_every_job_script_loads_the_plugins():
    """A job runs in its own process, so each script imports the config's plugins before it
    looks anything up by name (a plugin game, mechanism, provider or study)."""
    scripts = sorted((REPO / "workflow" / "scripts").glob("*.py"))
    assert scripts
    missing = [s.name for s in scripts if "start_job(snakemake.log[0], snakemake.config)" not in s.read_text(encoding="utf-8")]
    assert missing == []
