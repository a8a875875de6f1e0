"""The explorer: a static site built from the store (docs/explorer.md).

:func:`~coopeval.explorer.build.build_site` reads ``results/coopeval.duckdb`` read-only and
writes ``index.html`` with its hand-written script and style (package data under
``assets/``) and the data as script files under ``data/`` that register themselves with the
page (browsers refuse ``fetch()`` of ``file://`` URLs, so a site opened from disk loads data by
adding ``<script>`` tags). Data is sharded per episode (a match-up of a cell), so the page
weight does not grow with the run.
"""

from __future__ import annotations

from coopeval.explorer.build import BuildReport, build_site

__all__ = ["BuildReport", "build_site"]
