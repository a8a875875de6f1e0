"""Canonical JSON and content hashes: the identity of cells, decisions and cache entries.

docs/protocol/engineering.md#cells: a cell's id is a short sha256 of its spec's canonical JSON, so an
unchanged spec maps to the same Snakemake target and a changed one to a new target.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and no whitespace; raises TypeError on non-JSON values."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def content_hash(value: Any, length: int = 64) -> str:
    """The first ``length`` hex characters of sha256 over :func:`canonical_json` of ``value``."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:length]


def cell_hash(spec: Any) -> str:
    """A cell id: the first 12 hex chars of :func:`content_hash` of the cell spec."""
    return content_hash(spec, 12)
