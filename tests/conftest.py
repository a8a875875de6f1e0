"""Shared fixtures: reference data (the sample in ``tests/data`` and the full ``../shared``).

See :mod:`tests.shared_data` for where the data live and the skip/fail policy.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.shared_data import RUN1_SAMPLE, full_run1_path, oracle_vectors, require_dir, shared_path


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
