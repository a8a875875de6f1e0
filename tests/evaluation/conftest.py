"""Shared fixtures for the evaluation tests.

Reference material comes from ``tests/data`` (oracle vectors and the run1 sample, always
present; see :mod:`tests.shared_data`). The ``shared_dir``, ``full_run1_dir``, ``run1_dir``
and ``oracles`` fixtures are in ``tests/conftest.py``.

Parametrisation happens in :func:`pytest_generate_tests` (so test modules never import from
this file):

* a test taking ``axelrod_vector``, ``rd_vector``, ``dr_vector`` or ``released_vector`` runs
  once per vector of the corresponding oracle set, receiving ``(name, vector)``;
* a test taking ``matchup_experiment`` runs for each of the 24 run1 matchup experiments, and
  ``reputation_experiment`` for each of the 12 reputation experiments (folder names).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.shared_data import oracle_vectors

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
        vectors = oracle_vectors()["sets"][set_name]["vectors"]
        metafunc.parametrize(
            argname, [pytest.param((name, vectors[name]), id=name) for name in vectors]
        )


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
