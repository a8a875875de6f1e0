"""The simulated runs of an estimate played in a forked child beside the first
(:mod:`coopeval.estimate.stances`) record what they record played one after the other in one
process."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from coopeval.estimate.simulate import PlayedCells, assemble, borrowable
from coopeval.estimate.stances import StanceRuns, fork_is_safe
from coopeval.pipeline.config import merge_overlay, validate_config
from coopeval.pipeline.studies import all_cells
from tests.shared_data import REPO

LLM = "openai/gpt-4o-mini"
OVERLAY = {
    "studies": ["coopeval", "gossip", "evolution"],
    "agents": [{"model": LLM, "style": "IO", "params": {"max_tokens": 50}}, {"model": "openai/gpt-4o", "style": "CoT"},
               {"model": "bot/always-defect"}],
    "games": ["prisoners_dilemma"],
    "mechanisms": ["NoMechanism", "Repetition", "Contracting"],  # borrowed by the defecting run, and played by it
    "mechanism_params": {"Repetition": {"num_rounds": 4}},
    "replicates": 1,
    "gossip": {"testbeds": ["trust"], "conditions": ["align"], "replicates": 1, "models": [{"model": LLM}]},
    "evolution": {"protocols": ["vh"], "variants": ["none"], "replicates": 1, "n_agents": 4, "generations": 2, "models": [{"model": LLM}]},
}
"""Every study; CoopEval cells the defecting run borrows (NoMechanism, Repetition) and one it
plays (Contracting); a gossip testbed whose defecting answers skip decisions (trust: no
investment, no responder)."""


def _config(cache_dir):
    base = yaml.safe_load((REPO / "config" / "config.yaml").read_text(encoding="utf-8"))
    return validate_config({**merge_overlay(base, OVERLAY), "cache_dir": str(cache_dir)})


# A fresh Python: a fork is only taken before polars has started its thread pool, which would
# deadlock a forked child (this pytest process has computed with polars).
_COMPARE = """
import json, sys
from tests.estimate.test_stances import _config
from coopeval.estimate.stances import StanceRuns, fork_is_safe
from coopeval.pipeline.studies import all_cells

config = _config(sys.argv[1])
cells = all_cells(config)
assert fork_is_safe(), "a fresh process that loaded a config cannot fork"
forked = StanceRuns(config, cells, processes=2)
assert forked.forked, "no fork in a fresh process"
parallel = forked.runs()
assert not fork_is_safe(), "polars' thread pool runs and fork_is_safe() did not see it"
from polars.testing import assert_frame_equal
alone = StanceRuns(config, cells, processes=2)
assert not alone.forked, "forked after polars ran"
serial = alone.runs()
for stance, sim in serial.items():
    assert_frame_equal(parallel[stance].calls, sim.calls)
    assert parallel[stance].steps == sim.steps and parallel[stance].samples == sim.samples and parallel[stance].largest == sim.largest
print(json.dumps({str(s): sim.calls.height for s, sim in serial.items()}))
"""


def test_runs_played_in_a_forked_child_equal_the_runs_played_in_one_process(tmp_path):
    rows = _fresh_python(_COMPARE, tmp_path)
    assert rows["cooperative"] > rows["failing"] > 0 and rows["defecting"] > rows["failing"]


_CHILD_DIES = """
import json, os, sys
from tests.estimate.test_stances import _config
from coopeval.estimate import stances
from coopeval.pipeline.studies import all_cells

PARENT, PLAY_OTHERS = os.getpid(), stances._play_others


def die_in_the_child(*args):
    if os.getpid() != PARENT:
        os._exit(3)
    return PLAY_OTHERS(*args)


stances._play_others = die_in_the_child  # the forked child dies at once
config = _config(sys.argv[1])
runs = stances.StanceRuns(config, all_cells(config), processes=2)
assert runs.forked
print(json.dumps({str(s): sim.calls.height for s, sim in runs.runs().items()}))
"""


def _fresh_python(script, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    child = subprocess.run([sys.executable, "-c", script, str(tmp_path / "cache")], capture_output=True, text=True,
                           env=env, cwd=REPO, timeout=300)
    assert child.returncode == 0, child.stderr[-3000:]
    return json.loads(child.stdout.strip().splitlines()[-1])


def test_runs_of_a_forked_child_that_died_are_played_in_the_process(tmp_path):
    assert _fresh_python(_CHILD_DIES, tmp_path) == _fresh_python(_COMPARE, tmp_path)


def test_the_defecting_run_borrows_the_cells_whose_counts_validity_decides(tmp_path):
    config = _config(tmp_path / "cache")
    cells = all_cells(config)
    lent = borrowable(config, cells)
    mechanisms = {c["cell_id"]: c.get("mechanism") for c in cells["coopeval"]}
    assert {mechanisms[c] for c in lent if c in mechanisms} == {"NoMechanism", "Repetition"}
    assert {c["cell_id"] for c in cells["evolution"]} <= lent and not {c["cell_id"] for c in cells["gossip"]} & lent
    assert StanceRuns(config, cells, processes=1).forked is False


def test_a_cell_left_to_borrow_needs_a_run_that_played_it(tmp_path):
    config = _config(tmp_path / "cache")
    with pytest.raises(ValueError, match="cell NoMechanism/x was left to borrow from a simulation that did not play it"):
        assemble(config, PlayedCells({"NoMechanism/x": None}, {}, {}, judge=False))


def test_no_fork_while_another_python_thread_runs():
    """A thread holding a lock at the fork would leave it held in the child for good."""
    import threading

    release = threading.Event()
    thread = threading.Thread(target=release.wait, daemon=True)
    thread.start()
    try:
        assert fork_is_safe() is False
    finally:
        release.set()
        thread.join()
