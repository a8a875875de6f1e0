"""Where the tests find reference data, and what happens when the full folder is absent.

* ``tests/data/`` (in the repository, always present): the oracle vectors
  (``oracles/dev_vectors.json``) and a small sample of the released run1 data
  (``coopeval_run1/``: every experiment's summary and design files, two experiments' records,
  replicator checkpoints, and 203 sampled answers). ``tests/data/make_sample.py`` rebuilds it.
* The full reference folder: ``$COOPEVAL_SHARED_DIR``, else ``../shared`` beside the clone.
  Only full-run checks need it; they skip when it is absent, with a reason naming it, except
  when ``COOPEVAL_REQUIRE_SHARED`` is set (``.ci/run`` sets it whenever ``../shared`` is beside
  the clone), where its absence fails the test instead of passing silently.
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[1]
PROMPTS_DIR = REPO / "resources" / "prompts"
"""CoopEval's prompt templates (the workflow passes config ``prompts_dir``)."""
JUDGE_TEMPLATE = PROMPTS_DIR / "judge" / "judge.txt"
DATA_DIR = REPO / "tests" / "data"
ORACLE_FILE = DATA_DIR / "oracles" / "dev_vectors.json"
RUN1_SAMPLE = DATA_DIR / "coopeval_run1"
RESPONSES_SAMPLE = DATA_DIR / "run1_responses_sample.json.gz"


def shared_path() -> Path:
    """The full reference folder: ``$COOPEVAL_SHARED_DIR`` or ``../shared`` beside the clone."""
    override = os.environ.get("COOPEVAL_SHARED_DIR")
    return Path(override) if override else REPO.parent / "shared"


def full_run1_path() -> Path:
    """The full released run1 folder inside :func:`shared_path`."""
    return shared_path() / "data" / "coopeval_run1"


def in_ci() -> bool:
    """True when ``COOPEVAL_REQUIRE_SHARED`` is set (to anything but empty, 0 or false)."""
    return os.environ.get("COOPEVAL_REQUIRE_SHARED", "").strip().lower() not in ("", "0", "false", "no")


def require_dir(path: Path, what: str) -> Path:
    """Return ``path`` if it is a directory; otherwise skip (fail in CI) naming ``what`` needs it."""
    if path.is_dir():
        return path
    reason = (
        f"full-run check: needs {what} at {path} (set COOPEVAL_SHARED_DIR or put ../shared beside the clone); "
        "tests/data holds only a sample"
    )
    if in_ci():
        pytest.fail(f"COOPEVAL_REQUIRE_SHARED: reference data missing. {reason}", pytrace=False)
    pytest.skip(reason)


@cache
def oracle_vectors() -> dict[str, Any]:
    """The parsed oracle vectors (``tests/data/oracles/dev_vectors.json``)."""
    data: dict[str, Any] = json.loads(ORACLE_FILE.read_text(encoding="utf-8"))
    return data
