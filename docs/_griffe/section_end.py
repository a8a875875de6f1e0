"""Griffe extension for the API pages: a paragraph after a numpy item section becomes "Notes".

Several docstrings in ``src/coopeval`` end a ``Parameters`` (or ``Attributes``, ``Returns``…)
section with a blank line and an unindented paragraph about the whole object, e.g.::

    Parameters
    ----------
    fail_after:
        Raise after this many calls.

    ``calls`` counts calls actually made ...

numpy style has no end marker for a section, so griffe reads that paragraph as more parameter
entries and warns (``Could not parse line``, ``Parameter 'of' does not appear in the function
signature``), which fails ``mkdocs build --strict``. This extension inserts a ``Notes`` header
before such a paragraph, so the page shows it as the authors meant and every other griffe
warning still fails the build. A line counts as a new item, not a paragraph, when it looks like
a numpy item header: a name (``*args`` and dotted names included) optionally followed by ``:``.
Only the rendered docs change; the source files are left alone.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ITEM_SECTIONS = {
    "parameters", "other parameters", "attributes", "returns", "yields", "receives", "raises",
    "warns", "methods", "functions", "classes", "modules",
}
_ITEM_HEADER = re.compile(r"^\*{0,2}[\w.]+(\s*:.*)?$")
_UNDERLINE = re.compile(r"^-{3,}\s*$")


def end_item_sections(text: str) -> str:
    """Return ``text`` with a ``Notes`` header before each paragraph that ends an item section.

    Parameters
    ----------
    text:
        A numpy-style docstring (already dedented, as griffe stores it).
    """
    lines = text.split("\n")
    out: list[str] = []
    in_items = False
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if _UNDERLINE.match(nxt) and line.strip():
            in_items = line.strip().lower() in _ITEM_SECTIONS
            out.append(line)
            continue
        starts_paragraph = (
            in_items
            and line.strip()
            and not line[0].isspace()
            and not _UNDERLINE.match(line)
            and i > 0
            and not lines[i - 1].strip()
            and not _ITEM_HEADER.match(line.strip())
        )
        if starts_paragraph:
            out.extend(["Notes", "-----"])
            in_items = False
        out.append(line)
    return "\n".join(out)


class NumpySectionEnd(griffe.Extension):
    """Apply :func:`end_item_sections` to every docstring griffe loads."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:  # noqa: D102
        if obj.docstring is not None:
            obj.docstring.value = end_item_sections(obj.docstring.value)
