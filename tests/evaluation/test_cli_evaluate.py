"""``coopeval evaluate``: output contract, reference matchups and one-line input errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from coopeval.cli import main
from coopeval.evaluation.metagame import evaluate_metagame

KEYS = {
    "agents",
    "mean",
    "fitness",
    "final_population",
    "population_weighted_fitness",
    "deviation_ratings",
    "dr_rule",
}
PD = {"agents": ["C", "D"], "payoffs": [[2, 0], [3, 1]]}
PGG = {
    "agents": ["C", "F"],
    "payoff_tensor": [[[1.5, 1.0], [1.0, 0.5]], [[2.0, 1.5], [1.5, 1.0]]],
}


def _write(tmp_path: Path, data: Any, name: str = "tensor.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data) if not isinstance(data, str) else data, encoding="utf-8")
    return str(path)


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out, err


def test_evaluate_pd(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["evaluate", _write(tmp_path, PD)], capsys)
    assert code == 0, err
    result = json.loads(out)
    assert set(result) == KEYS
    assert result["agents"] == ["C", "D"]
    assert result["mean"] == {"C": 1.0, "D": 2.0}
    assert result["deviation_ratings"] == {"C": -1.0, "D": 0.0}
    assert result["dr_rule"] == "strictest"
    assert result["final_population"]["D"] > 0.99
    assert result["population_weighted_fitness"] == pytest.approx(
        sum(result["final_population"][a] * result["fitness"][a] for a in "CD")
    )


def test_evaluate_three_players_alias_and_options(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["evaluate", _write(tmp_path, PGG), "--initial-population", "[0.9, 0.1]"]
    argv += ["--steps", "5", "--lr", "0.2", "--dr-rule", "coopeval_vertex"]
    code, out, err = _run(argv, capsys)
    assert code == 0, err
    result = json.loads(out)
    assert result["dr_rule"] == "reference-vertex"
    assert result["deviation_ratings"] == {"C": -0.5, "F": 0.0}
    expected = evaluate_metagame(
        ["C", "F"], PGG["payoff_tensor"], [0.9, 0.1], steps=5, lr=0.2, dr_rule="coopeval_vertex"
    )
    assert result == json.loads(json.dumps(expected))
    population_file = _write(tmp_path, {"C": 0.9, "F": 0.1}, "population.json")
    argv[3] = population_file
    code, out2, _ = _run(argv, capsys)
    assert code == 0 and json.loads(out2) == result


def test_evaluate_from_matchups(
    run1_dir: Path, load_json: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = run1_dir / "contracting_prisoners_dilemma"
    code, out, err = _run(
        ["evaluate", "--from-matchups", str(folder / "matchup_payoffs.json")], capsys
    )
    assert code == 0, err
    result = json.loads(out)
    means = load_json(folder / "agent_average_payoff.json")
    rd = load_json(folder / "replicator_dynamics_fitness.json")
    assert result["agents"] == sorted(means)
    for agent in result["agents"]:
        assert result["mean"][agent] == pytest.approx(means[agent], abs=1e-12)
        assert result["fitness"][agent] == pytest.approx(rd[agent]["fitness"], abs=1e-9)
        assert result["final_population"][agent] == pytest.approx(
            rd[agent]["final_population"], abs=1e-9
        )


@pytest.mark.parametrize(
    ("data", "extra", "field"),
    [
        ({"agents": ["C", "D"], "payoffs": [[2, 0, 1], [3, 1, 1]]}, [], "payoffs"),
        ({"agents": ["C", "D", "E"], "payoffs": [[2, 0], [3, 1]]}, [], "agents"),
        ({"agents": ["C", "D"]}, [], "payoffs"),
        ({"agents": ["C", "D"], "payoffs": [[2, None], [3, 1]]}, [], "payoffs"),
        ({"agents": ["C", "D"], "payoffs": [[2, "x"], [3, 1]]}, [], "payoffs"),
        ({"agents": ["C", "C"], "payoffs": [[2, 0], [3, 1]]}, [], "agents"),
        ({"agents": ["C", "D"], "payoffs": [1, 2]}, [], "payoffs"),
        (
            {"agents": ["A", "B"], "payoffs": [[[0, 4], [0, 0]], [[0, 0], [0, 0]]]},
            [],
            "payoffs",
        ),
        (PD, ["--steps", "-3"], "--steps"),
        (PD, ["--lr", "nan"], "--lr"),
        (PD, ["--initial-population", "[0.5, 0.6]"], "--initial-population"),
        (PD, ["--initial-population", "[1.0]"], "--initial-population"),
        (PD, ["--initial-population", "not json"], "--initial-population"),
        ("{not json", [], "TENSOR"),
        ([1, 2], [], "TENSOR"),
    ],
)
def test_bad_input_exit_2(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    data: Any,
    extra: list[str],
    field: str,
) -> None:
    code, out, err = _run(["evaluate", _write(tmp_path, data), *extra], capsys)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and field in lines[0], err


def test_bad_usage_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tensor = _write(tmp_path, PD)
    assert _run(["evaluate"], capsys)[0] == 2
    assert _run(["evaluate", tensor, "--from-matchups", tensor], capsys)[0] == 2
    assert _run(["evaluate", str(tmp_path / "missing.json")], capsys)[0] == 2
    code, _, err = _run(["evaluate", "--from-matchups", tensor], capsys)
    assert code == 2 and "--from-matchups" in err
    (tmp_path / "store.duckdb").write_bytes(b"DUCK\x00")
    code, _, err = _run(["evaluate", "--from-matchups", str(tmp_path / "store.duckdb")], capsys)
    assert code == 2 and f"--from-matchups: {str(tmp_path / 'store.duckdb')!r} is not valid JSON" in err
    (tmp_path / "binary.duckdb").write_bytes(b"\xff\xfe\x00DUCK")
    for args in (["--from-matchups", str(tmp_path / "binary.duckdb")], [str(tmp_path / "binary.duckdb")]):
        code, _, err = _run(["evaluate", *args], capsys)
        assert code == 2 and "is not valid JSON (not UTF-8 text)" in err
    assert _run(["evaluate", tensor, "--dr-rule", "nash"], capsys)[0] == 2
    assert _run([], capsys)[0] == 2
    assert _run(["--help"], capsys)[0] == 0


def test_help_is_lazy() -> None:
    """Building the parser must not import numpy/scipy (fast ``coopeval --help``)."""
    code = (
        "import sys; from coopeval.cli import build_parser; build_parser();"
        " print(sorted(m for m in ('numpy', 'scipy') if m in sys.modules))"
    )
    src = str(Path(__file__).resolve().parents[2] / "src")
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": src},
    )
    assert done.stdout.strip() == "[]"
