"""Issue 13 kind 7: the response cache never loses a paid answer silently.

Damage is found on open (path and fix in the message), nothing is evicted, a stored value that
is not a reply is an error naming key and file (never a miss that is paid again), and an answer
that cannot be written is kept (memory + side journal) and written on the next open.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import diskcache
import pytest

from coopeval.agents.maker import DecisionMaker
from coopeval.agents.mock import MockLLM
from coopeval.cache.response_cache import (
    UNWRITTEN_FILE,
    CacheDamagedError,
    CacheValueError,
    CacheWriteError,
    ResponseCache,
)
from coopeval.decisions.formats import ActionDistribution

REPLY = {"text": '{"A0": 100}', "prompt_tokens": 12, "completion_tokens": 4, "cost_usd": 0.01}


def filled_cache(directory: Path, n: int = 300) -> None:
    """A closed cache holding ``n`` incompressible replies k0..k{n-1} (about 300 KB for 300)."""
    cache = ResponseCache(directory)
    for i in range(n):
        cache.set(f"k{i}", {"text": os.urandom(600).hex()})
    cache.close()


# ---------------------------------------------------------------------------------------------
# Damage at open


@pytest.mark.parametrize(
    ("damage", "detail"),
    [
        (lambda b: b[: len(b) // 2], "database disk image is malformed"),  # truncated (copy cut off)
        (lambda b: b[:50], "database disk image is malformed"),  # header only
        (lambda b: b"\x07" * len(b), "file is not a database"),  # overwritten
        (lambda b: b[: 4096 * 3] + b"\xff" * 4096 + b[4096 * 4 :], "btreeInitPage"),  # one page
    ],
    ids=["truncated", "header-only", "overwritten", "one-bad-page"],
)
def test_a_damaged_file_fails_at_open_with_path_and_fix(tmp_path: Path, damage: Any, detail: str) -> None:
    filled_cache(tmp_path / "cache")
    db = tmp_path / "cache" / "cache.db"
    db.write_bytes(damage(db.read_bytes()))
    with pytest.raises(CacheDamagedError) as info:
        ResponseCache(tmp_path / "cache")
    message = str(info.value)
    assert message.startswith(f"response cache {db} is damaged (")
    assert detail in message
    assert f"sqlite3 {db} .dump | sqlite3 {db}.recovered" in message
    assert f"mv {db} {db}.damaged" in message


def test_the_dump_recipe_of_the_message_rescues_an_index_page_damage(tmp_path: Path) -> None:
    """The fix the message gives works when the damage spares the data pages (page 4 here)."""
    import shutil
    import subprocess

    if shutil.which("sqlite3") is None:
        pytest.skip("the sqlite3 command-line tool is not installed")
    filled_cache(tmp_path / "cache")
    db = tmp_path / "cache" / "cache.db"
    raw = db.read_bytes()
    db.write_bytes(raw[: 4096 * 3] + b"\xff" * 4096 + raw[4096 * 4 :])
    with pytest.raises(CacheDamagedError):
        ResponseCache(tmp_path / "cache")
    subprocess.run(f"sqlite3 {db} .dump | sqlite3 {db}.recovered && mv {db} {db}.damaged && mv {db}.recovered {db}",
                   shell=True, check=True, capture_output=True)
    cache = ResponseCache(tmp_path / "cache")
    assert len(cache) == 300 and all(cache.get(f"k{i}") is not None for i in range(300))
    cache.close()


# ---------------------------------------------------------------------------------------------
# Never evict


def test_settings_never_evict_and_keep_values_in_the_database(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    assert cache._cache.eviction_policy == "none"
    assert cache._cache.size_limit == 2**62 and cache._cache.cull_limit == 0
    big = {"text": os.urandom(60_000).hex()}  # 120 KB of text: above diskcache's 32 KB file threshold
    cache.set("big", big)
    assert cache.get("big") == big
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == ["cache.db", "cache.db-shm", "cache.db-wal"]
    cache.close()


def test_an_old_cache_with_a_small_size_limit_loses_nothing(tmp_path: Path) -> None:
    """A cache created with diskcache's evicting settings (here a 4 KiB limit) is switched to
    'none' on open: 50 replies of 1.2 KB each (60 KB) all stay."""
    old = diskcache.Cache(str(tmp_path / "cache"), disk=diskcache.JSONDisk, size_limit=4096, cull_limit=10)
    old.close()
    cache = ResponseCache(tmp_path / "cache")
    replies = {f"k{i}": {"text": os.urandom(600).hex()} for i in range(50)}
    for key, reply in replies.items():
        cache.set(key, reply)
    cache.close()
    again = ResponseCache(tmp_path / "cache")
    assert len(again) == 50 and all(again.get(k) == v for k, v in replies.items())
    again.close()


# ---------------------------------------------------------------------------------------------
# Values that are not replies


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ("a string", 'it holds str "a string"'),
        (["a", "list"], 'it holds list ["a", "list"]'),
        (7, "it holds int 7"),
        ({"no_text": 1}, 'it holds dict {"no_text": 1}'),
        ({"text": None}, 'it holds dict {"text": null}'),
    ],
)
def test_a_stored_non_reply_is_an_error_naming_key_and_file(tmp_path: Path, value: Any, shown: str) -> None:
    other = diskcache.Cache(str(tmp_path / "cache"), disk=diskcache.JSONDisk)
    other.set("k1", value)
    other.close()
    cache = ResponseCache(tmp_path / "cache")
    with pytest.raises(CacheValueError) as info:
        cache.get("k1")
    db = (tmp_path / "cache" / "cache.db").absolute()
    assert str(info.value).startswith(f"response cache {db}: key k1 is not a reply ({shown}); ")
    assert cache.get("k2") is None  # a real miss is still a miss
    cache.close()


def test_undecodable_stored_bytes_are_an_error_naming_key_and_file(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    cache.set("k1", REPLY)
    cache.close()
    with sqlite3.connect(tmp_path / "cache" / "cache.db") as db:
        db.execute("UPDATE Cache SET value = ?", (b"\x00not zlib",))
    cache = ResponseCache(tmp_path / "cache")
    with pytest.raises(CacheValueError, match=r"key k1 is not a reply \(its stored bytes do not decode as JSON"):
        cache.get("k1")
    cache.close()


def test_only_replies_are_stored(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    with pytest.raises(ValueError, match=r"^value for key k1: not a reply \(needs a string 'text'\)"):
        cache.set("k1", {"content": "x"})
    assert len(cache) == 0
    cache.close()


# ---------------------------------------------------------------------------------------------
# A write that fails keeps the answer


def failing_set(*_args: Any, **_kwargs: Any) -> None:
    raise sqlite3.OperationalError("database or disk is full")


def test_an_unwritable_answer_is_kept_and_written_on_the_next_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ResponseCache(tmp_path / "cache")
    journal = (tmp_path / "cache" / UNWRITTEN_FILE).absolute()
    with monkeypatch.context() as patch:
        patch.setattr(cache._cache, "set", failing_set)
        with pytest.raises(CacheWriteError) as info:
            cache.set("k1", REPLY)
    assert "(OperationalError: database or disk is full)" in str(info.value)
    assert f"it is kept in {journal}" in str(info.value)
    assert cache.get("k1") == REPLY  # this process still has it
    assert [json.loads(line) for line in journal.read_text().splitlines()] == [{"key": "k1", "value": REPLY}]
    cache.close()
    again = ResponseCache(tmp_path / "cache")  # the next run
    assert again.get("k1") == REPLY and len(again) == 1
    assert journal.read_text() == ""
    again.close()


def test_when_the_journal_fails_too_the_message_holds_the_answer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = ResponseCache(tmp_path / "cache")

    def no_space(*_args: Any) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(cache._cache, "set", failing_set)
    monkeypatch.setattr(cache, "_append_unwritten", no_space)
    with pytest.raises(CacheWriteError) as info:
        cache.set("k1", REPLY)
    message = str(info.value)
    assert "No space left on device" in message
    kept = message.split("The reply, to keep by hand: ", 1)[1]
    assert json.loads(kept) == {"key": "k1", "value": REPLY}
    assert cache.get("k1") == REPLY
    cache.close()


def test_a_torn_journal_line_is_skipped_and_the_rest_written(tmp_path: Path) -> None:
    directory = tmp_path / "cache"
    directory.mkdir()
    whole = json.dumps({"key": "k1", "value": REPLY})
    (directory / UNWRITTEN_FILE).write_text(whole + "\n" + whole[:20], encoding="utf-8")  # crash mid-line
    cache = ResponseCache(directory)
    assert cache.get("k1") == REPLY and len(cache) == 1
    assert (directory / UNWRITTEN_FILE).read_text() == ""
    cache.close()


def test_a_failed_write_is_not_paid_twice_through_the_decision_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    action = ActionDistribution(("A0", "A1"))
    position = {"game": "prisoners_dilemma", "round": 1, "seat": 0, "kind": "action"}

    def decide(cache: ResponseCache, agent: MockLLM) -> Any:
        maker = DecisionMaker(cache, {"IO": "Answer with JSON.", "CoT": "Think, then answer with JSON."})
        return asyncio.run(maker.decide(agent, "Choose a distribution over A0, A1.", action, position))

    cache = ResponseCache(tmp_path / "cache")
    first = MockLLM("mock/a")
    monkeypatch.setattr(cache._cache, "set", failing_set)
    with pytest.raises(CacheWriteError):
        decide(cache, first)
    assert first.calls == 1
    cache.close()
    replay = MockLLM("mock/a")
    outcome = decide(ResponseCache(tmp_path / "cache"), replay)
    assert replay.calls == 0 and outcome.attempts[0]["cache_hit"] is True
    assert outcome.parsed == decide(None, MockLLM("mock/a")).parsed  # type: ignore[arg-type]
