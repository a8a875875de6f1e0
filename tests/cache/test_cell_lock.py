"""One executor per cell (issue 25 kind 4): two processes playing the same cell against the
simulated provider send one request per decision, not about two; ``COOPEVAL_CELL_LOCK=fail``
stops the second at once naming the holder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from coopeval.cache.cell_lock import CellBusyError, cell_lock, lock_path
from coopeval.core.environment import EnvironmentSettingError, env_value
from coopeval.simserver.process import free_port, start_server, stop_server
from tests.helpers import study_cells
from tests.shared_data import PROMPTS_DIR

ROOT = Path(__file__).resolve().parents[2]

DRIVER = textwrap.dedent(
    """
    import json, sys
    from coopeval.pipeline.play import run_cell
    from coopeval.pipeline.studies import get_study
    spec, out, cache, prompts = json.loads(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    outputs = {t: f"{out}/{t}.parquet" for t in get_study("coopeval").play_tables}
    run_cell("coopeval", spec, outputs, cache, f"{out}/journal", prompts, max_concurrency=8)
    """
)


def _cell(port: int) -> dict[str, object]:
    params = {"api_base": f"http://127.0.0.1:{port}/v1", "send_seed": True, "timeout": 20}
    cfg = {
        "seed": 0,
        "agents": [{"model": "openai/sim-a", "style": "IO", "params": params}, {"model": "openai/sim-b", "style": "IO", "params": params}],
        "games": ["prisoners_dilemma"],
        "mechanisms": ["Repetition"],
        "replicates": 1,
    }
    (cell,) = study_cells("coopeval", cfg)
    return cell


def _player(spec: dict[str, object], out: Path, cache: Path, mode: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "OPENAI_API_KEY": "sim", "COOPEVAL_CELL_LOCK": mode}
    command = [sys.executable, "-c", DRIVER, json.dumps(spec), str(out), str(cache), str(PROMPTS_DIR)]
    return subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _ok_requests(log: Path) -> int:
    return sum(1 for line in log.read_text().splitlines() if json.loads(line)["outcome"] == "ok")


def test_two_executors_of_one_cell_pay_once(tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "requests.jsonl"
    server = start_server(port, log, ["--latency", "0.02"])
    try:
        spec = _cell(port)
        first = _player(spec, tmp_path / "a", tmp_path / "cache", "wait")
        second = _player(spec, tmp_path / "b", tmp_path / "cache", "wait")
        results = [p.communicate(timeout=240) for p in (first, second)]
    finally:
        stop_server(server)
    assert [first.returncode, second.returncode] == [0, 0], [r[1].decode()[-2000:] for r in results]
    decisions = [pl.read_parquet(tmp_path / side / "decisions.parquet") for side in ("a", "b")]
    n = decisions[0].height
    assert n == 120  # Repetition, T = 15, 2 agents: 4 match-ups × 15 rounds × 2 seats
    assert _ok_requests(log) == n  # before the lock: about 215 for these 120 decisions
    assert decisions[1]["decision_id"].to_list() == decisions[0]["decision_id"].to_list()
    waited = [r[1].decode() for r in results if b"waiting: another process plays this cell" in r[1]]
    assert len(waited) == 1 and f"play-coopeval-{spec['cell_id']}" in waited[0]


def test_fail_mode_stops_the_second_executor_naming_the_holder(tmp_path: Path) -> None:
    spec = {"cell_id": "c0ffee", "agents": []}
    with cell_lock(tmp_path / "cache", "play-coopeval-c0ffee", mode="wait"):
        player = _player(spec, tmp_path / "b", tmp_path / "cache", "fail")
        _, err = player.communicate(timeout=120)
        assert player.returncode != 0
        text = err.decode()
        assert "CellBusyError" in text and f"pid={os.getpid()}" in text and "COOPEVAL_CELL_LOCK=wait" in text


def test_lock_in_process_modes_and_names(tmp_path: Path) -> None:
    with cell_lock(tmp_path, "play-gossip-x/y") as path:
        assert path == lock_path(tmp_path, "play-gossip-x/y") == tmp_path / "locks" / "play-gossip-x_y.lock"
        assert f"pid={os.getpid()}" in path.read_text()
        with pytest.raises(CellBusyError, match=r"play-gossip-x/y is already being played .*pid="), cell_lock(tmp_path, "play-gossip-x/y", mode="fail"):
            pass
        with cell_lock(tmp_path, "play-gossip-other", mode="fail"):
            pass  # another cell is free
    with cell_lock(tmp_path, "play-gossip-x/y", mode="fail"):
        pass  # released at exit
    with pytest.raises(ValueError, match="must be one of"), cell_lock(tmp_path, "j", mode="later"):
        pass
    assert env_value("COOPEVAL_CELL_LOCK", {}) == "wait" and env_value("COOPEVAL_CELL_LOCK", {"COOPEVAL_CELL_LOCK": "FAIL"}) == "fail"
    with pytest.raises(EnvironmentSettingError, match="COOPEVAL_CELL_LOCK='sometimes': write wait or fail"):
        env_value("COOPEVAL_CELL_LOCK", {"COOPEVAL_CELL_LOCK": "sometimes"})
