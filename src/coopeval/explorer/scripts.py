"""Data files of the explorer: JSON wrapped in a call of the page's registration function.

A file ``data/<name>.js`` holds ``CE.register("<key>", <json>);``. JSON is written ASCII-only
with ``<`` and ``>`` escaped too (``\\uXXXX``), so no byte of a stored text can end the script or be read as markup: the
page inserts every text with text nodes. Non-finite floats are written ``NaN`` / ``Infinity``,
which are JavaScript expressions (the files are scripts, not JSON documents).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 2_000_000
"""The largest data file the builder aims to write (bytes); episodes are split in parts below it."""

PART_BYTES = 1_500_000
"""An episode part is closed once its decisions reach this many bytes of JSON."""


def to_json(value: Any) -> str:
    """Compact ASCII JSON of ``value`` (JavaScript literals ``NaN``/``Infinity`` for non-finite floats)."""
    text = json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=str)
    return text.replace("<", "\\u003c").replace(">", "\\u003e")


def write_encoded(root: Path, relative: str, key: str, encoded: str) -> int:
    """Write ``root/relative`` registering the already encoded JSON ``encoded`` under ``key``; return its bytes."""
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f"CE.register({to_json(key)},{encoded});\n"
    path.write_text(text, encoding="ascii")
    return len(text)


def write_script(root: Path, relative: str, key: str, payload: Any) -> int:
    """Write ``root/relative`` registering ``payload`` under ``key``; return its size in bytes."""
    return write_encoded(root, relative, key, to_json(payload))
