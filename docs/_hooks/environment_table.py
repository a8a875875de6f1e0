"""MkDocs hook: the environment-variable table of the docs, generated from the package's registry.

A page that holds the line ``<!-- environment-table -->`` gets, in its place, a Markdown table of
:data:`coopeval.core.environment.ENVIRONMENT` (name, type, default, meaning, who reads it), so
the table is declared once, in the code that validates the variables, and the docs cannot
drift from it. ``src/`` is put on ``sys.path`` so the build needs no installed package.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

MARKER = "<!-- environment-table -->"
"""The line a page writes where the table goes."""

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "src"))

from coopeval.core.environment import ENVIRONMENT  # noqa: E402


def environment_table() -> str:
    """The Markdown table of every declared ``COOPEVAL_*`` variable, in declaration order."""
    lines = ["| variable | type | default | meaning | read by |", "|---|---|---|---|---|"]
    for var in ENVIRONMENT.values():
        default = "unset" if var.default is None else f"`{var.default}`"
        reader = "the test suite" if var.scope == "tests" else "a run"
        lines.append(f"| `{var.name}` | {var.kind.replace('>=', '≥')} | {default} | {var.meaning} | {reader} |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, **_: Any) -> str:
    """Replace the marker line of a page by :func:`environment_table`."""
    return markdown.replace(MARKER, environment_table()) if MARKER in markdown else markdown
