"""Response cache: every answer a model returned, keyed on the full request and its position.

Engineering rules §4. Values are plain JSON dicts in a private ``diskcache`` directory using
``JSONDisk`` (never pickle: CVE-2025-69872), created with mode 0700. The key is the sha256 of
canonical JSON over the model id, the full message list, the sampling parameters actually
sent, the decision's position in the game (seed, game, mechanism, replicate, seated agents,
round, seat, kind, attempt, retry round) and :data:`CACHE_SCHEMA_VERSION`. It deliberately
excludes the cell hash and the roster, so adding an agent re-pays only new calls.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from coopeval.core.hashing import content_hash

CACHE_SCHEMA_VERSION = 1


def call_key(
    model: str,
    messages: Sequence[Mapping[str, str]],
    params: Mapping[str, Any],
    position: Mapping[str, Any],
    attempt: int,
) -> str:
    """The cache key of one call attempt (hex sha256)."""
    payload = {
        "v": CACHE_SCHEMA_VERSION,
        "model": model,
        "messages": [dict(m) for m in messages],
        "params": dict(params),
        "position": dict(position),
        "attempt": attempt,
    }
    return content_hash(payload)


class ResponseCache:
    """A process-safe persistent map from call keys to JSON replies.

    Parameters
    ----------
    directory:
        Cache directory (created with mode 0700). Must be on a local disk: SQLite on NFS
        corrupts or locks.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        import diskcache

        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, 0o700)
        self.directory = path
        self._cache = diskcache.Cache(str(path), disk=diskcache.JSONDisk, timeout=30)

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached reply for ``key``, or None."""
        value = self._cache.get(key, default=None)
        return value if isinstance(value, dict) else None

    def set(self, key: str, value: Mapping[str, Any]) -> None:
        """Store a reply (a JSON-serialisable dict)."""
        self._cache.set(key, dict(value))

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        """Close the underlying SQLite connection."""
        self._cache.close()
