"""``coopeval play-human``: usage errors, and a whole run through the workflow that a person leaves
and resumes.

The slow test starts ``coopeval play-human --configfile … results/coopeval.duckdb`` in a copy of the
workflow; a scripted person answers three questions on the seat folder and leaves; the command
is interrupted (Ctrl-C) and started again, and a second person answers the rest. The three
answers are never asked again (the seat folder and the response cache hold them), and the store
holds the person's decisions like any agent's: ``agent`` ``human/alice(IO)``, provider ``human``,
the time to answer and every attempt; the explorer built from it lists the person.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from coopeval.cli import main
from coopeval.explorer import build_site
from tests.humanplay.person import ScriptedPerson
from tests.pipeline.workflow_copy import copy_workflow

CONFIG = """\
studies: [coopeval]
seed: 3
agents:
  - model: human/alice
  - model: bot/tit-for-tat
games: [prisoners_dilemma]
mechanisms: [Repetition]
mechanism_params:
  Repetition: {num_rounds: 2, discount: 0.8, lookup_depth: 3}
"""

WAIT_S = 600.0
"""Hang guard of the whole-run test (snakemake on a loaded 2-core machine), not a timing."""


def test_a_missing_config_file_exits_2_naming_it(tmp_path, capsys):
    assert main(["play-human", "--configfile", str(tmp_path / "nope.yaml"), "--seats", str(tmp_path / "seats")]) == 2
    assert f"--configfile {tmp_path / 'nope.yaml'}: no such file" in capsys.readouterr().err


def test_no_config_file_exits_2_naming_the_fix(tmp_path, capsys):
    assert main(["play-human", "--seats", str(tmp_path / "seats")]) == 2
    assert "--configfile is missing" in capsys.readouterr().err


def test_a_taken_port_exits_2_before_the_run_starts(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "Snakefile").write_text("raise SystemExit('the run must not start')\n")
    (tmp_path / "human.yaml").write_text(CONFIG)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code = main(["play-human", "--configfile", "human.yaml", "--port", str(port), "--seats", str(tmp_path / "seats")])
    assert code == 2 and f"--port {port}: cannot listen on 127.0.0.1" in capsys.readouterr().err
    assert not (tmp_path / "seats" / "run.log").exists() and not (tmp_path / "seats" / "run.json").exists()


def _play_human(work: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "coopeval.cli", "play-human", "--configfile", "human-test.yaml", "--port", "0",
               "results/coopeval.duckdb"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(work / "src")}
    return subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def _wait(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.1)


@pytest.mark.slow
def test_a_person_leaves_and_resumes_a_run(tmp_path):
    work = copy_workflow(tmp_path)
    (work / "human-test.yaml").write_text(CONFIG)
    seats = work / "results" / ".human"
    first = ScriptedPerson(seats, max_answers=3)
    run = _play_human(work)
    with first.sitting():
        _wait(lambda: len(first.log) == 3 and bool(first.desk.folder.pending()), "three answers and a fourth question waiting")
    answered_first = {q.id for q, _, _ in first.log}
    run.send_signal(signal.SIGINT)
    out, _ = run.communicate(timeout=WAIT_S)
    assert run.returncode == 130, out
    assert "Open http://127.0.0.1:" in out

    second = ScriptedPerson(seats)
    run = _play_human(work)
    with second.sitting():
        out, _ = run.communicate(timeout=WAIT_S)
    assert run.returncode == 0, out + (seats / "run.log").read_text()[-4000:]
    assert not {q.id for q, _, _ in second.log} & answered_first  # nobody is asked twice
    store = duckdb.connect(str(work / "results" / "coopeval.duckdb"), read_only=True)
    try:
        mine = store.execute("SELECT status, count(*) FROM decisions WHERE agent = 'human/alice(IO)' GROUP BY status").fetchall()
        # 2 rounds × (2 seats of the self-play match-up + 1 seat in each match-up with the bot)
        assert mine == [("ok", 8)]
        calls = store.execute(
            "SELECT split_part(model, '/', 1), count(*), min(latency_s) >= 0 FROM llm_calls WHERE agent = 'human/alice(IO)' GROUP BY 1"
        ).fetchall()
        assert calls == [("human", 8, True)]
        answers = [json.loads(p) for (p,) in store.execute("SELECT parsed FROM decisions WHERE agent = 'human/alice(IO)'").fetchall()]
        assert answers == [{"A0": 100, "A1": 0}] * 8
    finally:
        store.close()
    assert len(first.log) == 3 and len(second.log) == 5
    # the explorer lists the person among the agents, like any other
    build_site(work / "results" / "coopeval.duckdb", tmp_path / "site")
    assert "human/alice(IO)" in (tmp_path / "site" / "data" / "index.js").read_text(encoding="utf-8")
