"""The response cache's storage (docs/protocol/engineering.md#response-cache "Store"): ``diskcache.Cache(dir,
disk=JSONDisk, timeout=30)`` in a directory of mode 0700, plain JSON values (never pickle:
CVE-2025-69872), persistent across processes, foreign non-reply values reported (issue 13)."""

from __future__ import annotations

import json
import sqlite3
import stat
import zlib

import diskcache
import pytest

from coopeval.cache.response_cache import CacheValueError, ResponseCache

REPLY = {"text": '{"A0": 100}', "prompt_tokens": 12, "completion_tokens": 4, "cost_usd": 0.0}


def test_directory_is_created_with_mode_0700(tmp_path) -> None:
    nested = tmp_path / "results" / ".cache"  # parents are created too
    cache = ResponseCache(nested)
    assert cache.directory == nested
    assert stat.S_IMODE(nested.stat().st_mode) == 0o700
    cache.close()


def test_reopening_an_existing_directory_keeps_the_answers(tmp_path) -> None:
    first = ResponseCache(tmp_path / "cache")
    first.set("k1", REPLY)
    first.close()
    again = ResponseCache(tmp_path / "cache")  # the directory exists already
    assert again.get("k1") == REPLY
    assert again.get("k2") is None
    assert len(again) == 1
    assert stat.S_IMODE((tmp_path / "cache").stat().st_mode) == 0o700
    again.close()


def test_values_are_stored_as_json_never_pickle(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    cache.set("k1", REPLY)
    cache.close()
    with sqlite3.connect(tmp_path / "cache" / "cache.db") as db:
        (raw,) = db.execute("SELECT value FROM Cache").fetchone()
    assert json.loads(zlib.decompress(raw).decode("utf-8")) == REPLY


def test_sqlite_busy_timeout_is_30_seconds(tmp_path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    assert cache._cache.timeout == 30  # several play jobs share one cache
    cache.close()


def test_a_foreign_non_dict_value_is_reported_not_read_as_missing(tmp_path) -> None:
    other = diskcache.Cache(str(tmp_path / "cache"), disk=diskcache.JSONDisk)
    other.set("k1", ["not", "a", "reply"])
    other.close()
    cache = ResponseCache(tmp_path / "cache")
    with pytest.raises(CacheValueError, match=r"key k1 is not a reply \(it holds list"):
        cache.get("k1")
    cache.close()
