"""Shared fixtures for the evaluation tests.

Reference material lives in ``../shared`` next to the repository root (oracle vectors in
``oracles/dev_vectors.json``, the released run1 data in ``data/coopeval_run1``). Tests that
need it are skipped with a clear reason when it is absent.

Parametrisation happens in :func:`pytest_generate_tests` (so test modules never import from
this file):

* a test taking ``axelrod_vector``, ``rd_vector``, ``dr_vector`` or ``released_vector`` runs
  once per vector of the corresponding oracle set, receiving ``(name, vector)``;
* a test taking ``matchup_experiment`` runs for each of the 24 run1 matchup experiments, and
  ``reputation_experiment`` for each of the 12 reputation experiments (folder names).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED_DIR = REPO_ROOT.parent / "shared"
ORACLE_FILE = SHARED_DIR / "oracles" / "dev_vectors.json"
RUN1_DIR = SHARED_DIR / "data" / "coopeval_run1"

MISSING_SHARED = (
    f"reference material not found at {SHARED_DIR} (expected ../shared next to the repo)"
)

GAMES = (
    "prisoners_dilemma",
    "public_goods",
    "travellers_dilemma",
    "trust_game",
    "stag_hunt",
    "matching_pennies",
)
MATCHUP_MECHANISMS = ("no_mechanism", "repetition", "mediation", "contracting")
REPUTATION_MECHANISMS = ("reputation_first_order", "reputation")
MATCHUP_EXPERIMENTS = tuple(f"{m}_{g}" for m in MATCHUP_MECHANISMS for g in GAMES)
REPUTATION_EXPERIMENTS = tuple(f"{m}_{g}" for m in REPUTATION_MECHANISMS for g in GAMES)

_ORACLE_ARGS = {
    "axelrod_vector": "axelrod_matches",
    "rd_vector": "replicator_dynamics",
    "dr_vector": "deviation_ratings",
    "released_vector": "coopeval_released_data",
}


@functools.cache
def _oracles() -> dict[str, Any] | None:
    if not ORACLE_FILE.is_file():
        return None
    with ORACLE_FILE.open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


_EXPERIMENT_ARGS = {
    "matchup_experiment": MATCHUP_EXPERIMENTS,
    "reputation_experiment": REPUTATION_EXPERIMENTS,
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for argname, names in _EXPERIMENT_ARGS.items():
        if argname in metafunc.fixturenames:
            metafunc.parametrize(argname, names)
    for argname, set_name in _ORACLE_ARGS.items():
        if argname not in metafunc.fixturenames:
            continue
        oracles = _oracles()
        if oracles is None:
            skip = pytest.mark.skip(reason=f"oracle file missing: {ORACLE_FILE}")
            metafunc.parametrize(argname, [pytest.param(None, marks=skip, id="no-oracles")])
            continue
        vectors = oracles["sets"][set_name]["vectors"]
        metafunc.parametrize(
            argname, [pytest.param((name, vectors[name]), id=name) for name in vectors]
        )


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The read-only reference folder ``../shared`` (skip if absent)."""
    if not SHARED_DIR.is_dir():
        pytest.skip(MISSING_SHARED)
    return SHARED_DIR


@pytest.fixture(scope="session")
def oracles() -> dict[str, Any]:
    """The parsed ``dev_vectors.json`` (skip if absent)."""
    data = _oracles()
    if data is None:
        pytest.skip(f"oracle file missing: {ORACLE_FILE}")
    return data


@pytest.fixture(scope="session")
def run1_dir(shared_dir: Path) -> Path:
    """The released run1 data folder (skip if absent)."""
    if not RUN1_DIR.is_dir():
        pytest.skip(f"run1 data not found at {RUN1_DIR}")
    return RUN1_DIR


@pytest.fixture(scope="session")
def experiment_names() -> dict[str, tuple[str, ...]]:
    """The run1 folder names: ``{"matchup": (24 names), "reputation": (12 names)}``."""
    return {"matchup": MATCHUP_EXPERIMENTS, "reputation": REPUTATION_EXPERIMENTS}


def read_json(path: Path) -> Any:
    """Read a JSON file (helper for tests)."""
    with path.open(encoding="utf-8") as handle:
        return json.load(handle)


@pytest.fixture(scope="session")
def load_json() -> Any:
    """Return the JSON reader, so test modules need not import from conftest."""
    return read_json
