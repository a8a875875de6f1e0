"""The run-wide search over replies: which episodes hold a word, written at build time.

A word is three or more letters or digits of a reply, lower-cased
(:data:`coopeval.explorer.episodes.WORD`). The builder numbers the episodes it writes and
adds each episode's words; :meth:`SearchIndex.write` then writes

    data/words/<b>.js     word → numbers of the episodes whose replies hold it (b = bucket of the word)
    data/words/ep<n>.js   episode numbers 10,000 n … as [cell_id, key, parts]

The page's search loads the bucket of each query word, intersects the episode lists, and reads
only those episodes to find the decisions whose replies hold every word. The postings wait in
an in-memory DuckDB table (spilling to disk beyond its limit), not in Python lists, so memory
does not grow with the run's vocabulary.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from coopeval.explorer.scripts import write_script

EPISODES_PER_FILE = 10_000
MIN_BUCKETS = 256
BUCKET_BYTES = 500_000
"""Aimed size of one bucket file: the number of buckets doubles from 256 until the postings'
estimated bytes (about 8 per posting) divided by it reach at most this."""


def word_bucket(word: str, buckets: int) -> int:
    """``h = (31 h + code point) mod buckets`` over the word's characters (DuckDB and the page
    compute the same)."""
    h = 0
    for ch in word:
        h = (h * 31 + ord(ch)) % buckets
    return h


class SearchIndex:
    """Words → episodes of one build; ``spill`` is a folder for DuckDB's temporary files."""

    def __init__(self, spill: str, memory_limit: str = "128MB") -> None:
        self.con = duckdb.connect(config={"memory_limit": memory_limit, "temp_directory": spill, "threads": 1, "preserve_insertion_order": False})
        self.con.execute("CREATE TABLE postings (word VARCHAR, episode INTEGER)")
        self.episodes: list[list[Any]] = []
        self._words: list[str] = []
        self._ids: list[int] = []

    def add(self, cell_id: str, key: str, n_parts: int, words: set[str]) -> None:
        """Number the episode ``key`` of ``cell_id`` (written in ``n_parts`` parts) and add the words of its replies."""
        number = len(self.episodes)
        self.episodes.append([cell_id, key, n_parts])
        self._words.extend(words)
        self._ids.extend([number] * len(words))

    def flush(self) -> None:
        """Move the added postings into DuckDB (call once per chunk)."""
        if not self._words:
            return
        batch = pa.table({"word": pa.array(self._words, pa.string()), "episode": pa.array(self._ids, pa.int32())})
        self.con.register("batch", batch)
        self.con.execute("INSERT INTO postings SELECT * FROM batch")
        self.con.unregister("batch")
        self._words, self._ids = [], []

    def write(self, out: Path, note: Any) -> dict[str, int]:
        """Write the bucket and episode files under ``out/data/words/``; ``note(relative, size)``
        counts each file. Returns what the page needs: buckets, episodes, episode files."""
        self.flush()
        (total,) = self.con.execute("SELECT count(*) FROM postings").fetchone() or (0,)
        buckets = MIN_BUCKETS
        while total * 8 / buckets > BUCKET_BYTES:
            buckets *= 2
        sql = (
            "SELECT list_reduce(list_transform(string_split(word, ''), c -> unicode(c)::BIGINT), (h, x) -> (h * 31 + x) % $n, 0::BIGINT) AS b,"
            " word, list(episode ORDER BY episode) AS episodes FROM postings GROUP BY word ORDER BY b, word"
        )
        found: dict[int, dict[str, list[int]]] = {}

        def write_bucket(number: int) -> None:
            relative = f"data/words/{number}.js"
            note(relative, write_script(out, relative, f"words:{number}", found.pop(number, {})))

        for batch in self.con.execute(sql, {"n": buckets}).to_arrow_reader(4096):
            if not batch.num_rows:
                continue
            for b, word, episodes in zip(*(batch.column(i).to_pylist() for i in range(3)), strict=True):
                found.setdefault(b, {})[word] = episodes
            for number in [n for n in found if n < b]:  # buckets arrive in order: the earlier ones are complete
                write_bucket(number)
        for number in range(buckets):  # the rest, and empty buckets (every bucket file exists)
            if number in found or not (out / f"data/words/{number}.js").exists():
                write_bucket(number)
        files = 0
        for files, start in enumerate(range(0, len(self.episodes), EPISODES_PER_FILE), start=1):
            relative = f"data/words/ep{files - 1}.js"
            note(relative, write_script(out, relative, f"wordeps:{files - 1}", self.episodes[start : start + EPISODES_PER_FILE]))
        return {"buckets": buckets, "episodes": len(self.episodes), "episode_files": files, "per_file": EPISODES_PER_FILE}

    def close(self) -> None:
        """Close the postings' database (its spilled files go with the build's spill folder)."""
        self.con.close()
