"""Shared test helpers: a deterministic stand-in LLM and the shared reference folder."""

from __future__ import annotations

from pathlib import Path
import pytest


REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


@pytest.fixture
def shared_dir() -> Path:
    """``../shared`` (reference data and oracles); tests skip where it is absent."""
    if not SHARED.is_dir():
        pytest.skip(f"reference folder {SHARED} is absent (it is present in CI beside the clone)")
    return SHARED
