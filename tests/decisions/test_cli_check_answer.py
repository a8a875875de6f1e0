"""``coopeval check-answer``: one JSON verdict from the decision loop's parser; exit 0/1/2."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from coopeval.cli import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict | None, str]:
    code = main(["check-answer", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def test_issue_example_is_invalid_with_offset(capsys: pytest.CaptureFixture[str]) -> None:
    text = '{"A0": 100, "A1": 0} then on reflection {"A0": 70%, "A1": 30%}'
    code, out, _ = run(["--kind", "action", "--actions", "A0,A1", text], capsys)
    assert code == 1
    assert out is not None and set(out) == {"valid", "parsed", "error", "offset", "truncated"}
    assert out["valid"] is False and out["parsed"] is None and out["offset"] == 40 and out["truncated"] is False
    assert out["error"].startswith('the last JSON object {"A0": 70%, "A1": 30%} is not valid JSON')


def test_valid_answer_from_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO('<think>{"A0": 1, "A1": 99}</think>\n{"A0": 25, "A1": 75}\n'))
    code, out, _ = run(["--kind", "action", "--actions", "A0,A1", "-"], capsys)  # 7 + 19 + 8 + 1 = 35
    assert code == 0
    assert out == {"valid": True, "parsed": {"A0": 25, "A1": 75}, "error": None, "offset": 35, "truncated": False}


def test_cut_off_answer(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["--kind", "sign", "--finish-reason", "length", "--max-tokens", "64", 'I will sign: {"sign": tr']
    code, out, _ = run(argv, capsys)
    assert code == 1 and out is not None and out["truncated"] is True and out["offset"] == 13
    assert out["error"] == (
        "the answer was cut off at max_tokens = 64 before it was complete (the last JSON object is not closed: "
        "{\"sign\": tr has no matching '}'); give a shorter answer"
    )


@pytest.mark.parametrize(
    ("argv", "parsed"),
    [
        (["--kind", "mediator_vote", "--n-options", "2", '{"M1": true, "M2": false}'], {"M1": True, "M2": False}),
        (["--kind", "contract_vote", "--n-options", "1", '{"C1": false}'], {"C1": False}),
        (["--kind", "mediator_design", "--actions", "A0,A1", "--n-options", "3", '{"1": "A0", "2": "A1", "3": "A1"}'],
         {"1": "A0", "2": "A1", "3": "A1"}),
        (["--kind", "contract_design", "--actions", "A0,A1", '{"A0": -3, "A1": 12}'], {"A0": -3, "A1": 12}),
        (["--kind", "action", "--actions", "A0,A1,A2", '{"A0": 0, "A1": 0, "A2": 100}'], {"A0": 0, "A1": 0, "A2": 100}),
    ],
)
def test_every_kind(argv: list[str], parsed: dict, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(argv, capsys)
    assert code == 0 and out is not None and out["parsed"] == parsed and out["offset"] == 0


def test_judge_uses_the_packaged_taxonomy(capsys: pytest.CaptureFixture[str]) -> None:
    answer = '{"reasoning": "r", "confidence": 0.9, "justification_type": "Reciprocity, 1"}'
    code, out, _ = run(["--kind", "judge", answer], capsys)
    assert code == 0 and out is not None and out["parsed"]["confidence"] == 0.9
    assert "Reciprocity" in out["parsed"]["labels"] and len(out["parsed"]["labels"]) == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--kind", "action", "{}"], "--actions: required for --kind action"),
        (["--kind", "mediator_vote", "{}"], "--n-options: required for --kind mediator_vote"),
        (["--kind", "action", "--actions", "A0,A0", "{}"], "--actions: 'A0,A0' repeats a token"),
        (["--kind", "contract_vote", "--n-options", "0", "{}"], "--n-options: 0 must be at least 1"),
        (["--kind", "sign", "--max-tokens", "0", "{}"], "--max-tokens: 0 must be at least 1"),
    ],
)
def test_usage_errors_exit_2(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(argv, capsys)
    assert code == 2 and out is None and message in err


def test_unknown_kind_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["--kind", "chess_move", "x"], capsys)
    assert code == 2 and out is None and "invalid choice" in err


def test_console_entry_point() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "coopeval.cli", "check-answer", "--kind", "sign", '{"sign": true}'],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 0
    assert json.loads(done.stdout) == {"valid": True, "parsed": {"sign": True}, "error": None, "offset": 0, "truncated": False}
