"""Interactive HTML figures render offline (issue 13, kind 11a).

``save_chart`` inlines the Vega libraries; a real headless Chromium (Debian's ``chromium``) loads
the file from ``file://`` with networking off and must paint the chart's bars. The same chart
saved with Altair's default (CDN scripts) is the control: offline it must stay blank, which
shows that the browser really had no network and that the pixel check can fail.

The browser tests are skipped when ``/usr/bin/chromium`` is absent, except under
``COOPEVAL_REQUIRE_BROWSER=1`` (set by ``.ci/run``), where its absence fails them.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import polars as pl
import pytest

from coopeval.core.charts import save_chart

CHROMIUM = Path("/usr/bin/chromium")
REQUIRE_BROWSER = os.environ.get("COOPEVAL_REQUIRE_BROWSER") == "1"
BAR_RGB = (0x4C, 0x78, 0xA8)  # Vega-Lite's default mark colour
WIDTH, HEIGHT = 300, 200  # chart size in CSS pixels


def _bar_chart():
    import altair as alt

    frame = pl.DataFrame({"option": ["A0", "A1", "A2"], "share": [60, 30, 10]})
    return (
        alt.Chart(frame)
        .mark_bar()
        .encode(x=alt.X("option:N"), y=alt.Y("share:Q", scale=alt.Scale(domain=[0, 60])))
        .properties(width=WIDTH, height=HEIGHT)
    )


def test_html_figure_has_no_remote_script(tmp_path):
    (html,) = save_chart(_bar_chart(), tmp_path / "bars", ["html"])
    text = html.read_text()
    assert re.findall(r"<script[^>]*\bsrc\s*=", text, flags=re.IGNORECASE) == []
    assert "vega-embed.js bundle" in text  # the libraries are in the file itself
    assert '"share":60' in text.replace(" ", "")  # and so is the data


def _require_chromium() -> None:
    if CHROMIUM.exists():
        return
    if REQUIRE_BROWSER:
        pytest.fail(f"COOPEVAL_REQUIRE_BROWSER=1 but {CHROMIUM} is missing: apt-get install -y chromium")
    pytest.skip(f"{CHROMIUM} absent (Debian package chromium); .ci/run installs it and requires it")


def _screenshot(html: Path, out: Path, profile: Path) -> Path:
    """Load ``html`` from file:// in headless Chromium with networking off; PNG of the window."""
    command = [
        str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={profile}",
        "--host-resolver-rules=MAP * ~NOTFOUND",  # no name resolves: a CDN script cannot load
        "--virtual-time-budget=10000", "--hide-scrollbars", "--window-size=600,400",
        f"--screenshot={out}", html.resolve().as_uri(),
    ]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and out.exists(), result.stderr[-2000:]
    return out


def _bar_pixels(png: Path) -> int:
    """Number of pixels within 12 per channel of the bar colour."""
    from PIL import Image

    image = Image.open(png).convert("RGB")
    return sum(
        1 for pixel in image.getdata() if all(abs(channel - want) <= 12 for channel, want in zip(pixel, BAR_RGB, strict=False))
    )


def test_html_figure_renders_offline_in_chromium(tmp_path):
    _require_chromium()
    chart = _bar_chart()
    (inline,) = save_chart(chart, tmp_path / "inline", ["html"])
    cdn = tmp_path / "cdn.html"
    chart.save(str(cdn))  # Altair's default: scripts from a CDN
    painted = _bar_pixels(_screenshot(inline, tmp_path / "inline.png", tmp_path / "profile-inline"))
    blank = _bar_pixels(_screenshot(cdn, tmp_path / "cdn.png", tmp_path / "profile-cdn"))
    # Three bars on a 0-60 axis of HEIGHT = 200 px: 200, 100 and 33.3 px tall; each band is
    # WIDTH / 3 = 100 px with Vega-Lite's default inner padding 0.1, so a bar is 90 px wide:
    # 90 * 333.3 = 30,000 px (measured 29,970; edges are anti-aliased).
    assert abs(painted - 30_000) <= 300, painted
    assert blank == 0
