"""Shared fixtures: reference data (the sample in ``tests/data`` and the full ``../shared``),
and the hypothesis profiles.

See :mod:`tests.shared_data` for where the data live and the skip/fail policy.

Hypothesis runs the ``ci`` profile unless ``HYPOTHESIS_PROFILE`` names another: derandomized
(the examples are a function of the test, so every run and every machine draws the same ones),
no deadline (the LP tests take tens of milliseconds on a loaded CI box) and 50 examples per test
unless a test asks for fewer. ``HYPOTHESIS_PROFILE=explore`` draws 1000 fresh random examples
per test for a local bug hunt. Shared strategies (random games, populations) are in
:mod:`tests.strategies`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from tests.shared_data import RUN1_SAMPLE, full_run1_path, oracle_vectors, require_dir, shared_path

settings.register_profile("ci", derandomize=True, deadline=None, max_examples=50, print_blob=True)
settings.register_profile("explore", deadline=None, max_examples=1000)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The full reference folder (``$COOPEVAL_SHARED_DIR`` or ``../shared``).

    Absent: the test is skipped with a reason saying it is a full-run check; in CI (``CI`` set)
    it fails instead.
    """
    return require_dir(shared_path(), "the full reference folder")


@pytest.fixture(scope="session")
def full_run1_dir(shared_dir: Path) -> Path:
    """The full released run1 folder (22 MiB, 36 experiments with all records); skip/fail as
    :func:`shared_dir`."""
    return require_dir(full_run1_path(), "the full released run1 data")


@pytest.fixture(scope="session")
def run1_dir() -> Path:
    """The run1 sample in ``tests/data/coopeval_run1`` (always present): every experiment's
    summary and design files, records of two experiments, replicator checkpoints."""
    return RUN1_SAMPLE


@pytest.fixture(scope="session")
def oracles() -> dict[str, Any]:
    """The parsed oracle vectors from ``tests/data/oracles/dev_vectors.json``."""
    return oracle_vectors()
