"""The explorer: a static site built from the store (docs/explorer.md).

:func:`~coopeval.explorer.build.build_site` reads ``results/coopeval.duckdb`` read-only and
writes ``index.html`` with its hand-written script and style (package data under
``assets/``) and the data as script files under ``data/`` that register themselves with the
page (browsers refuse ``fetch()`` of ``file://`` URLs, so a site opened from disk loads data by
adding ``<script>`` tags). Data is sharded per episode (a match-up of a cell), so the page
weight does not grow with the run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coopeval.explorer.build import BuildReport, build_site

__all__ = ["BuildReport", "build_site"]


def __getattr__(name: str) -> Any:
    """``build_site`` and ``BuildReport`` on first use: the package's CLI parser must not import DuckDB."""
    if name in __all__:
        from coopeval.explorer import build

        return getattr(build, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
