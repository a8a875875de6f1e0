"""Data files of the explorer: JSON wrapped in a call of the page's registration function.

A file ``data/<name>.js`` holds ``CE.register("<key>", <json>);``, or, for an episode part (the
bulk of a site: prompts and replies), ``CE.registerPacked("<key>", "<base64 of gzip of the JSON>");``
which the page inflates with the browser's ``DecompressionStream`` (no library, no network).
Prompts repeat their rules and history round after round, so the packed parts are several times
smaller than the JSON and the site stays smaller than the store. JSON is written ASCII-only
with ``<`` and ``>`` escaped too (``\\uXXXX``), so no byte of a stored text can end the script or be read as markup: the
page inserts every text with text nodes. Non-finite floats are written ``NaN`` / ``Infinity``,
which are JavaScript expressions (the files are scripts, not JSON documents).
"""

from __future__ import annotations

import base64
import gzip
import json
import math
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


PACK_LEVEL = 3
"""gzip level of the packed files: level 3 packed the smoke site's episode JSON 15.7× in the time level 1 took (14.2×); level 6 packed 23× but took twice as long."""


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float written as a string ("NaN", "Infinity", "-Infinity"): strict JSON."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def to_strict_json(value: Any) -> str:
    """:func:`to_json` as strict JSON (``JSON.parse`` reads it): a non-finite float becomes its name as a string."""
    text = to_json(value)
    if "NaN" in text or "Infinity" in text:  # rare (and often inside a text): re-encode with the names as strings
        text = to_json(_finite(value))
    return text


def write_packed(root: Path, relative: str, key: str, encoded: str) -> int:
    """Write ``root/relative`` registering the strict JSON ``encoded`` under ``key``, gzip-packed
    and base64-encoded (deterministic: no time stamp); return its size in bytes."""
    packed = base64.b64encode(gzip.compress(encoded.encode("ascii"), compresslevel=PACK_LEVEL, mtime=0)).decode("ascii")
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    text = f'CE.registerPacked({to_json(key)},"{packed}");\n'
    path.write_text(text, encoding="ascii")
    return len(text)


def read_payload(text: str) -> tuple[str, Any]:
    """The key and payload of a data file's text, packed or not (tests and benchmarks read sites with it)."""
    for prefix in ("CE.register(", "CE.registerPacked("):
        if text.startswith(prefix) and text.endswith(");\n"):
            key, _, payload = text[len(prefix) : -3].partition(",")
            if prefix == "CE.register(":
                return json.loads(key), json.loads(payload)
            return json.loads(key), json.loads(gzip.decompress(base64.b64decode(json.loads(payload))))
    raise ValueError("not a data file of the explorer")
