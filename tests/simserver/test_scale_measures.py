"""benchmarks/scale.py counts repeated provider requests from the server's log (hand-made log)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

SCALE = Path(__file__).resolve().parents[2] / "benchmarks" / "scale.py"


def _scale_module():
    spec = importlib.util.spec_from_file_location("scale_benchmark", SCALE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_repeats_inside_and_outside_a_kill_window(tmp_path):
    rows = [
        {"hash": "b", "t": 5.0, "outcome": "ok"},
        {"hash": "a", "t": 9.9, "outcome": "429"},  # refused: not an answer
        {"hash": "a", "t": 10.0, "outcome": "ok"},
        {"hash": "a", "t": 20.0, "outcome": "ok"},  # answered 1 s before the kill at 11: in flight
        {"hash": "b", "t": 30.0, "outcome": "ok"},  # answered 6 s before the kill: a harness repeat
    ]
    log = tmp_path / "requests.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    measures = _scale_module().log_measures(log, kill_times=[11.0])
    assert measures == {"requests": 5, "ok_requests": 4, "repeated_requests": 2, "repeated_in_kill_window": 1}
