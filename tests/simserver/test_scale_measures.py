"""benchmarks/scale.py tells answers lost at a SIGKILL from calls paid twice (hand-made log and
a real response cache)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

from coopeval.agents.protocol import Reply
from coopeval.cache.response_cache import ResponseCache
from coopeval.simserver.server import response_id

SCALE = Path(__file__).resolve().parents[2] / "benchmarks" / "scale.py"


def _scale_module():
    spec = importlib.util.spec_from_file_location("scale_benchmark", SCALE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_repeats_lost_at_a_kill_and_harness_repeats(tmp_path):
    rows = [
        {"hash": "b", "t": 5.0, "outcome": "ok"},
        {"hash": "a", "t": 9.9, "outcome": "429"},  # refused: not an answer
        {"hash": "a", "t": 10.0, "outcome": "ok"},
        {"hash": "a", "t": 20.0, "outcome": "ok"},  # not in the cache at the kill (11): lost in flight
        {"hash": "b", "t": 30.0, "outcome": "ok"},  # in the cache at the kill, asked again: paid twice
        {"hash": "c", "t": 40.0, "outcome": "ok"},
        {"hash": "c", "t": 41.0, "outcome": "500"},  # no kill in between: paid twice (though refused)
    ]
    log = tmp_path / "requests.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    measures = _scale_module().log_measures(log, kills=[(11.0, {response_id("b")})])
    assert measures == {
        "requests": 7,
        "ok_requests": 5,
        "repeated_requests": 3,
        "repeated_lost_at_kill": 1,
        "harness_repeats": 2,
    }


def test_an_answer_sent_just_after_a_kill_was_asked_by_the_killed_process(tmp_path):
    # A log line's t is when the answer was sent; a request started before the kill (11) and
    # answered after it never reached the killed client: its repeat is lost at the kill.
    rows = [
        {"hash": "a", "t": 11.4, "outcome": "ok", "latency_s": 1.0},  # asked at 10.4: lost
        {"hash": "b", "t": 12.5, "outcome": "ok", "latency_s": 1.0},  # asked at 11.5 by the rerun
        {"hash": "a", "t": 20.0, "outcome": "ok", "latency_s": 1.0},  # lost at the kill
        {"hash": "b", "t": 21.0, "outcome": "ok", "latency_s": 1.0},  # no kill since it was asked: paid twice
        {"hash": "a", "t": 40.0, "outcome": "ok", "latency_s": 1.0},  # answered at 20 and cached before the kill at 30
    ]
    log = tmp_path / "requests.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in rows))
    measures = _scale_module().log_measures(log, kills=[(11.0, set()), (30.0, {response_id("a")})])
    assert (measures["repeated_requests"], measures["repeated_lost_at_kill"], measures["harness_repeats"]) == (3, 1, 2)


def test_cached_response_ids_reads_the_cache_and_the_unwritten_replies(tmp_path):
    cache = ResponseCache(tmp_path)
    cache.set("k1", Reply(text="{}", response_id="sim-1").to_json())
    cache.set("k2", Reply(text="{}", response_id="sim-2").to_json())
    (tmp_path / "unwritten.jsonl").write_text(json.dumps({"key": "k3", "value": {"text": "{}", "response_id": "sim-3"}}) + "\n")
    assert _scale_module().cached_response_ids(tmp_path) == {"sim-1", "sim-2", "sim-3"}


def test_log_tail_counts_only_complete_new_lines(tmp_path):
    log = tmp_path / "requests.jsonl"
    tail = _scale_module().LogTail(log)
    assert tail.ok_count() == 0
    log.write_text('{"outcome": "ok"}\n{"outcome": "429"}\n{"outcome": "o')
    assert tail.ok_count() == 1
    with log.open("a") as f:
        f.write('k"}\n{"outcome": "ok"}\n')
    assert tail.ok_count() == 3


def test_a_reference_without_a_store_is_refused_before_the_run(tmp_path, capsys):
    import pytest

    with pytest.raises(SystemExit) as info:
        _scale_module().main(["--kills", "1", "--reference", str(tmp_path), "--workdir", str(tmp_path / "w")])
    assert info.value.code == 2
    assert "holds no results/coopeval.duckdb; pass the `run` folder" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


def test_the_estimate_is_printed_beside_the_recorded_decisions_and_tokens():
    estimate = {
        "studies": {"coopeval": {"decisions_min": 900, "decisions_max": 1000}, "gossip": {"decisions_min": 50, "decisions_max": 50}},
        "totals": {"input_tokens": 200_000},
    }
    measures = {"decisions": 1029, "prompt_tokens": 190_000}
    assert _scale_module().estimate_measures(estimate, measures) == {
        "estimate_decisions_min": 950,
        "estimate_decisions_max": 1050,
        "estimate_input_tokens": 200_000,
        "decisions_per_estimate": 0.98,
        "prompt_tokens_per_estimate": 0.95,
    }
