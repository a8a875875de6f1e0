"""A minimal driver of headless Chromium over the DevTools protocol (tests and benchmarks/explorer.py).

Debian's ``chromium`` is started with a remote-debugging port, no network (every host name
fails to resolve) and a throw-away profile; the driver talks to the page target over a
websocket (aiohttp, already a dependency of litellm): navigate, evaluate JavaScript, wait for a
condition, take a screenshot. The tests use it to click through the explorer like a reader.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import aiohttp

CHROMIUM = Path("/usr/bin/chromium")
REQUIRE_BROWSER = os.environ.get("COOPEVAL_REQUIRE_BROWSER") == "1"


def require_chromium() -> None:
    """Skip the calling test when Debian's Chromium is missing; fail instead under
    ``COOPEVAL_REQUIRE_BROWSER=1`` (``.ci/run`` installs it and sets that)."""
    import pytest

    if CHROMIUM.exists():
        return
    if REQUIRE_BROWSER:
        pytest.fail(f"COOPEVAL_REQUIRE_BROWSER=1 but {CHROMIUM} is missing: apt-get install -y chromium")
    pytest.skip(f"{CHROMIUM} absent (Debian package chromium); .ci/run installs it and requires it")
def built_site(tmp_path_factory: Any, name: str, make_store: Any) -> tuple[Path, Path]:
    """``(store, site)``: the store ``make_store(path)`` writes in a fresh folder ``name`` and the
    explorer built from it, for a module of browser tests (:func:`require_chromium` first)."""
    from coopeval.explorer import build_site

    require_chromium()
    root = tmp_path_factory.mktemp(name)
    store = make_store(root / "coopeval.duckdb")
    build_site(store, root / "site")
    return store, root / "site"


WAIT_S = 60.0
"""How long :meth:`Chromium.wait` polls before failing (a loaded 2-core machine is slow)."""


class BrowserError(AssertionError):
    """Chromium did not start, or a page did not reach the awaited state."""


class Chromium:
    """One headless Chromium with one page; use as a context manager.

    ``profile`` is an empty folder for the browser's profile; ``size`` the window in CSS pixels.
    ``host_rules`` are Chromium's ``--host-resolver-rules`` (default: no host name resolves; the
    human seat's tests add ``EXCLUDE 127.0.0.1`` to reach their local server).
    """

    host_rules = "MAP * ~NOTFOUND"

    def __init__(self, profile: Path, size: tuple[int, int] = (1280, 900)) -> None:
        self.profile = profile
        self.size = size
        self.loop = asyncio.new_event_loop()
        self.ids = itertools.count(1)
        self.process: subprocess.Popen[bytes] | None = None
        self.session: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None

    def __enter__(self) -> Chromium:
        self.profile.mkdir(parents=True, exist_ok=True)
        command = [
            str(CHROMIUM), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", f"--user-data-dir={self.profile}",
            f"--host-resolver-rules={self.host_rules}", "--hide-scrollbars", f"--window-size={self.size[0]},{self.size[1]}",
            "--remote-debugging-port=0", "--remote-allow-origins=*", "about:blank",
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + WAIT_S
        while not port_file.exists() or not port_file.read_text().strip():
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.__exit__(None, None, None)
                raise BrowserError("chromium did not open its DevTools port")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        self.loop.run_until_complete(self._connect(port))
        self.call("Page.enable")
        self.call("Runtime.enable")
        return self

    async def _connect(self, port: int) -> None:
        self.session = aiohttp.ClientSession()
        async with self.session.get(f"http://127.0.0.1:{port}/json/list") as response:
            targets = await response.json(content_type=None)
        (page,) = [t for t in targets if t.get("type") == "page"][:1]
        self.ws = await self.session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)

    def __exit__(self, *exc: object) -> None:
        if self.ws is not None:
            self.loop.run_until_complete(self.ws.close())
        if self.session is not None:
            self.loop.run_until_complete(self.session.close())
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
        self.loop.close()

    async def _call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        assert self.ws is not None
        ident = next(self.ids)
        await self.ws.send_str(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads((await self.ws.receive(timeout=WAIT_S)).data)
            if message.get("id") == ident:
                if "error" in message:
                    raise BrowserError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one DevTools command and return its result."""
        return self.loop.run_until_complete(self._call(method, params))

    def evaluate(self, expression: str) -> Any:
        """The value of a JavaScript expression in the page (JSON-serialisable values only)."""
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise BrowserError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url: str) -> None:
        """Navigate to ``url`` (a ``file://`` URL); a change of the hash only is a hash navigation."""
        self.call("Page.navigate", url=url)

    def wait(self, condition: str, what: str) -> float:
        """Poll the JavaScript ``condition`` until it is true; return the seconds waited."""
        started = time.monotonic()
        while time.monotonic() - started < WAIT_S:
            if self.evaluate(f"!!({condition})"):
                return time.monotonic() - started
            time.sleep(0.05)
        text = self.evaluate("document.getElementById('main') ? document.getElementById('main').innerText.slice(0, 500) : ''")
        raise BrowserError(f"page never showed {what} ({condition}); main reads: {text!r}")

    def click(self, selector: str) -> None:
        """Click the first element matching the CSS ``selector`` (it must exist)."""
        found = self.evaluate(f"(function(){{var e=document.querySelector({json.dumps(selector)}); if(!e) return false; e.click(); return true;}})()")
        if not found:
            raise BrowserError(f"no element {selector} to click")

    def screenshot(self, path: Path) -> Path:
        """PNG of the visible window at ``path``."""
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))
        return path
