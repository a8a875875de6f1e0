"""The per-cell attempt journal (``results/.journal/<cell>.jsonl``, never a declared output).

One JSON line per call attempt and per failed decision, flushed at once, so an interrupted job
leaves a readable trace of what it had asked before it stopped (docs/protocol/engineering.md#journal).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any


class Journal:
    """Append-only JSONL journal with a flush after each line and an fsync every 50 lines."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file = path.open("a", encoding="utf-8")
        self._lines = 0

    def __call__(self, record: dict[str, Any]) -> None:
        self._file.write(json.dumps(record, ensure_ascii=False, default=str) + "\n")
        self._file.flush()
        self._lines += 1
        if self._lines % 50 == 0:
            os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()
