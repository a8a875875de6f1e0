"""Response cache: every answer a model returned, keyed on the full request and its position.

docs/protocol/engineering.md#response-cache. Values are plain JSON dicts in a private ``diskcache`` directory using
``JSONDisk`` (never pickle: CVE-2025-69872), created with mode 0700. The key is the sha256 of
canonical JSON over the model id, the full message list, the sampling parameters actually
sent, the endpoint when one is set (``api_base``/``api_version``; never credentials), the
decision's position in the game (seed, game, mechanism, replicate, seated agents, round, seat,
kind, attempt, retry round) and :data:`CACHE_SCHEMA_VERSION`. It deliberately excludes the cell
hash and the roster, so adding an agent re-pays only new calls.

Paid answers are never lost silently (issue 13, kind 7):

* the file is checked (``PRAGMA quick_check``) when opened; damage raises
  :class:`CacheDamagedError` naming the file and the fix;
* nothing is ever evicted (``eviction_policy='none'``, no size limit) and every value stays
  inside the SQLite file (no side ``.val`` files that could go missing);
* a stored value that is not a reply raises :class:`CacheValueError` naming the key and the
  file (it is never read as a miss and paid again);
* an answer that cannot be written is kept in memory and appended to the side journal
  :data:`UNWRITTEN_FILE` in the cache directory, then :class:`CacheWriteError` stops the run;
  the next open writes the journal's answers into the cache, so the answer is not paid twice.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import sqlite3
import zlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from coopeval.core.hashing import content_hash

CACHE_SCHEMA_VERSION = 1

DB_FILE = "cache.db"
"""The SQLite file diskcache keeps in the cache directory."""

UNWRITTEN_FILE = "unwritten.jsonl"
"""Side journal in the cache directory: one ``{"key", "value"}`` JSON line per answer that could
not be written to the database; replayed into the cache (then emptied) on the next open."""

CREDENTIAL_KEYS = frozenset({"api_key", "extra_headers", "headers", "authorization", "token", "access_token"})
"""Request settings that carry credentials: never part of a key (rotating a key must not re-pay,
and a secret's hash must not land in the store)."""

SETTINGS: dict[str, Any] = {
    "eviction_policy": "none",  # never drop a paid answer
    "size_limit": 2**62,  # no practical limit (diskcache's default is 1 GiB)
    "cull_limit": 0,
    "disk_min_file_size": 2**62,  # every value inside cache.db, covered by the integrity check
}
"""diskcache settings of the response cache (stored in the database by diskcache)."""

log = logging.getLogger(__name__)


class CacheError(RuntimeError):
    """Base class of response-cache failures."""


class CacheDamagedError(CacheError):
    """The cache database is damaged or not a database (raised on open or read)."""


class CacheValueError(CacheError):
    """A stored value is not a reply (not a JSON object with a string ``text``)."""


class CacheWriteError(CacheError):
    """A reply could not be written; it was kept (in memory and, if possible, the side journal)."""


def call_key(
    model: str,
    messages: Sequence[Mapping[str, str]],
    params: Mapping[str, Any],
    position: Mapping[str, Any],
    attempt: int,
    endpoint: Mapping[str, Any] | None = None,
) -> str:
    """The cache key of one call attempt (hex sha256).

    ``endpoint`` holds the request settings outside ``params`` that choose who answers
    (``api_base``, ``api_version``; never credentials). It enters the key only when non-empty,
    so keys of calls without an endpoint are unchanged from earlier versions. Entries named in
    :data:`CREDENTIAL_KEYS` are dropped from ``params`` and ``endpoint``.
    """
    payload = {
        "v": CACHE_SCHEMA_VERSION,
        "model": model,
        "messages": [dict(m) for m in messages],
        "params": {k: v for k, v in params.items() if k not in CREDENTIAL_KEYS},
        "position": dict(position),
        "attempt": attempt,
    }
    where = {k: v for k, v in (endpoint or {}).items() if k not in CREDENTIAL_KEYS}
    if where:
        payload["endpoint"] = where
    return content_hash(payload)


def _damaged(path: Path, detail: str) -> CacheDamagedError:
    return CacheDamagedError(
        f"response cache {path} is damaged ({detail}). Stop every job using it, then copy out "
        f"what is readable: sqlite3 {path} .dump | sqlite3 {path}.recovered && mv {path} "
        f"{path}.damaged && mv {path}.recovered {path} (answers on damaged pages are lost and "
        f"asked again); or move it aside (mv {path} {path}.damaged, with its -wal and -shm "
        "files) to start an empty cache, which pays again for every answer it held. Keep "
        f"{UNWRITTEN_FILE} in that directory: it holds answers not yet written"
    )


def check_integrity(path: str | os.PathLike[str]) -> None:
    """Run SQLite's ``PRAGMA quick_check`` on the cache database ``path`` (if it exists).

    Raises
    ------
    CacheDamagedError
        If the file is not a database or the check reports damage; the message names the file
        and the fix.
    """
    db = Path(path)
    if not db.exists():
        return
    try:
        conn = sqlite3.connect(db, timeout=30)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check").fetchall()]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        if _is_busy(exc):
            raise
        raise _damaged(db, str(exc)) from None
    if rows != ["ok"]:
        raise _damaged(db, "; ".join(str(r) for r in rows[:3]))


def _is_busy(exc: sqlite3.DatabaseError) -> bool:
    """A lock or I/O condition (``OperationalError``: locked, busy, disk I/O), not damage."""
    return isinstance(exc, sqlite3.OperationalError)


def _is_reply(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("text"), str)


class ResponseCache:
    """A process-safe persistent map from call keys to JSON replies.

    Parameters
    ----------
    directory:
        Cache directory (created with mode 0700). Must be on a local disk: SQLite on NFS
        corrupts or locks.

    Raises
    ------
    CacheDamagedError
        If ``directory/cache.db`` fails the integrity check.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        import diskcache

        path = Path(directory)
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, 0o700)
        self.directory = path
        self.db_path = (path / DB_FILE).absolute()
        self.unwritten_path = (path / UNWRITTEN_FILE).absolute()
        self._pending: dict[str, dict[str, Any]] = {}
        check_integrity(self.db_path)
        try:
            self._cache = diskcache.Cache(str(path), disk=diskcache.JSONDisk, timeout=30, **SETTINGS)
        except sqlite3.DatabaseError as exc:
            if _is_busy(exc):
                raise
            raise _damaged(self.db_path, str(exc)) from None
        self._replay_unwritten()

    def get(self, key: str) -> dict[str, Any] | None:
        """The cached reply for ``key``, or None when there is none.

        Raises
        ------
        CacheValueError
            If the stored value does not decode or is not a reply (message names key and file).
        CacheDamagedError
            If SQLite reports damage while reading.
        """
        if key in self._pending:
            return dict(self._pending[key])
        missing = object()
        try:
            value = self._cache.get(key, default=missing)
            if value is missing and key in self._cache:
                raise self._bad_value(key, "its value file is missing")
        except (zlib.error, ValueError) as exc:
            raise self._bad_value(key, f"its stored bytes do not decode as JSON: {exc}") from None
        except sqlite3.DatabaseError as exc:
            if _is_busy(exc):
                raise
            raise _damaged(self.db_path, str(exc)) from None
        if value is missing:
            return None
        if not _is_reply(value):
            raise self._bad_value(key, f"it holds {type(value).__name__} {json.dumps(value)[:80]}")
        return value

    def _bad_value(self, key: str, why: str) -> CacheValueError:
        return CacheValueError(
            f"response cache {self.db_path}: key {key} is not a reply ({why}); it was written by "
            "something else. Delete that entry (python -c \"import diskcache; "
            f"diskcache.Cache('{self.directory}', disk=diskcache.JSONDisk).delete('{key}')\") to "
            "ask the model again"
        )

    def set(self, key: str, value: Mapping[str, Any]) -> None:
        """Store a reply (a JSON-serialisable dict with a string ``text``).

        Raises
        ------
        ValueError
            If ``value`` is not a reply.
        CacheWriteError
            If the database refused the write. The reply is then kept in memory (``get`` returns
            it in this process) and appended to :data:`UNWRITTEN_FILE`, which the next open
            writes into the cache; the message says where the reply was kept.
        """
        reply = dict(value)
        if not _is_reply(reply):
            raise ValueError(f"value for key {key}: not a reply (needs a string 'text'); cache only replies")
        try:
            self._cache.set(key, reply)
            return
        except Exception as exc:  # sqlite3.Error, OSError, diskcache.Timeout: keep the answer
            error = f"{type(exc).__name__}: {exc}"
        self._pending[key] = reply
        try:
            self._append_unwritten(key, reply)
        except OSError as exc:
            raise CacheWriteError(
                f"response cache {self.db_path}: could not store the reply for key {key} "
                f"({error}) nor append it to {self.unwritten_path} ({exc}). The reply, to keep "
                f"by hand: {json.dumps({'key': key, 'value': reply})}"
            ) from None
        raise CacheWriteError(
            f"response cache {self.db_path}: could not store the reply for key {key} ({error}); "
            f"it is kept in {self.unwritten_path} and is written into the cache when it is next "
            "opened. Fix the cause (disk full? damaged file? see the error) and rerun"
        )

    def _append_unwritten(self, key: str, reply: Mapping[str, Any]) -> None:
        line = json.dumps({"key": key, "value": dict(reply)}, ensure_ascii=False) + "\n"
        fd = os.open(self.unwritten_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())

    def _replay_unwritten(self) -> None:
        """Write the side journal's replies into the cache, then empty it (under a file lock)."""
        if not self.unwritten_path.exists():
            return
        with open(self.unwritten_path, "r+", encoding="utf-8") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            lines = handle.read().splitlines()
            for number, line in enumerate(lines, 1):
                try:
                    entry = json.loads(line)
                    key, reply = entry["key"], entry["value"]
                except (ValueError, KeyError, TypeError):
                    # a torn last line from a crash mid-write: nothing usable in it
                    log.warning("%s line %d is not an entry; skipped", self.unwritten_path, number)
                    continue
                if not _is_reply(reply):
                    continue
                try:
                    self._cache.set(key, reply)
                except Exception as exc:  # the database still refuses writes: keep the journal
                    raise CacheWriteError(
                        f"response cache {self.db_path}: could not write the kept replies of "
                        f"{self.unwritten_path} ({type(exc).__name__}: {exc}); they stay there. "
                        "Fix the cause (disk full? damaged file?) and rerun"
                    ) from None
            handle.seek(0)
            handle.truncate()
            handle.flush()
            os.fsync(handle.fileno())
        if lines:
            log.info("wrote %d kept replies from %s into the cache", len(lines), self.unwritten_path)

    def __len__(self) -> int:
        return len(self._cache)

    def close(self) -> None:
        """Close the underlying SQLite connection."""
        self._cache.close()
