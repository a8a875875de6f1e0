"""Writing Altair charts, shared by every study's figures (docs/protocol/engineering.md#figures).

Charts are saved offline through vl-convert: PNG (at scale 2), SVG and interactive HTML. The HTML
embeds the Vega, Vega-Lite and vega-embed JavaScript (vl-convert's bundle, about 0.9 MB a file),
so a figure renders from disk with no network; Altair's default would load them from a CDN and
show a blank page offline (issue 13, kind 11a). Altair is imported only when a note chart is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import polars as pl

# Options of Altair's ``Chart.save`` per format: PNG at scale 2; HTML with the JavaScript inlined.
SAVE_OPTIONS: dict[str, dict[str, Any]] = {"png": {"scale_factor": 2}, "html": {"inline": True}}


def save_chart(chart: Any, stem: str | Path, formats: Iterable[str] = ("png", "svg", "html")) -> list[Path]:
    """Save ``chart`` as ``stem.<fmt>`` for each format (options in ``SAVE_OPTIONS``: PNG at
    scale 2, self-contained HTML); returns the paths.

    Raises whatever ``chart.save`` raises for an unknown format (e.g. ``ValueError``).
    """
    stem = Path(stem)
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = []
    for fmt in formats:
        path = stem.with_suffix(f".{fmt}")
        chart.save(str(path), **SAVE_OPTIONS.get(fmt, {}))
        paths.append(path)
    return paths


def note_chart(text: str) -> Any:
    """A one-line chart saying why a figure has no data (written where the figure would be)."""
    import altair as alt

    return alt.Chart(pl.DataFrame({"note": [text]})).mark_text(size=13).encode(text="note:N").properties(width=420, height=60)


def report_format(formats: Sequence[str]) -> str:
    """The one format per figure embedded in the Snakemake report: SVG, else PNG, else HTML
    (the other formats stay in ``results/figures/``).

    Raises
    ------
    ValueError
        If ``formats`` holds none of the three.
    """
    for fmt in ("svg", "png", "html"):
        if fmt in formats:
            return fmt
    raise ValueError(f"no figure format among {list(formats)}")
