"""The web front end of the human seats: one page on localhost (standard library only).

``GET /`` is the page (``assets/page.html``: its script and style inline, nothing fetched from
the network); ``GET /api/state`` the oldest open question and the run's status
(:meth:`~coopeval.humanplay.service.SeatDesk.state`); ``POST /api/answer`` with
``{"seat", "id", "text"}`` hands an answer over and returns the parser's verdict
(:meth:`~coopeval.humanplay.service.SeatDesk.answer`; 409 when the question is no longer open).
The server binds 127.0.0.1 only, answers only requests addressed to a local host name (no DNS
rebinding: any other ``Host`` gets 403 and one log line) and takes answers only as
``application/json`` (a cross-site form cannot post one).
"""

from __future__ import annotations

import json
import sys
import threading
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib.resources import files
from pathlib import Path
from typing import Any

from coopeval.humanplay.service import SeatDesk

__all__ = ["SeatServer", "page_html"]

LOCAL_HOSTS = ("127.0.0.1", "localhost")
MAX_BODY_BYTES = 1_000_000
"""Largest answer request taken (a person's answer is far smaller)."""


def page_html() -> bytes:
    """The page's HTML (package data ``coopeval/humanplay/assets/page.html``)."""
    return files("coopeval.humanplay").joinpath("assets/page.html").read_bytes()


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        return  # requests are not logged: the terminal belongs to the run's messages

    def _local(self) -> bool:
        """Whether the request is addressed to a local host name; if not (DNS rebinding: a page of
        another site whose name now points at 127.0.0.1), answer 403 and log it in one line."""
        declared = self.headers.get("Host") or ""
        host = declared.rsplit(":", 1)[0].strip("[]").lower()  # host names ignore case
        if host in LOCAL_HOSTS:
            return True
        port = self.server.server_address[1]
        self._refuse(
            HTTPStatus.FORBIDDEN,
            f"Host {declared[:80]!r}: the seat page answers only requests addressed to 127.0.0.1 or localhost; "
            f"open http://127.0.0.1:{port}/",
        )
        return False

    def _send(self, status: HTTPStatus, body: Any, content_type: str = "application/json") -> None:
        data = body if isinstance(body, bytes) else json.dumps(body, ensure_ascii=False).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", f"{content_type}; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self' data:")
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if not self._local():
            return
        if self.path in ("/", "/index.html"):
            self._send(HTTPStatus.OK, page_html(), "text/html")
        elif self.path == "/api/state":
            self._send(HTTPStatus.OK, self.server.desk.state())
        else:
            self._send(HTTPStatus.NOT_FOUND, {"error": f"no page {self.path}"})

    def do_POST(self) -> None:
        if not self._local():
            return
        if self.path != "/api/answer":
            self._send(HTTPStatus.NOT_FOUND, {"error": f"no endpoint {self.path}"})
            return
        if (self.headers.get("Content-Type") or "").split(";")[0].strip() != "application/json":
            self._send(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, {"error": "send the answer as application/json"})
            return
        declared = (self.headers.get("Content-Length") or "").strip()
        length = int(declared) if declared.isascii() and declared.isdigit() else 0  # "²" is a digit to isdigit()
        if not 0 < length <= MAX_BODY_BYTES:
            self._refuse(HTTPStatus.BAD_REQUEST, f"Content-Length {declared!r}: the request body must hold 1 to {MAX_BODY_BYTES} bytes")
            return
        try:
            body = json.loads(self.rfile.read(length))
            seat, qid, text = str(body["seat"]), str(body["id"]), body["text"]
            if not isinstance(text, str):
                raise TypeError("text must be a string")
        except (ValueError, KeyError, TypeError) as exc:
            self._refuse(HTTPStatus.BAD_REQUEST, f'send {{"seat", "id", "text"}} as JSON ({exc})')
            return
        try:
            verdict = self.server.desk.answer(seat, qid, text)
        except KeyError as exc:
            self._send(HTTPStatus.CONFLICT, {"error": str(exc.args[0])})
            return
        except (ValueError, OSError) as exc:  # a name no file can have
            self._refuse(HTTPStatus.BAD_REQUEST, str(exc))
            return
        self._send(HTTPStatus.OK, verdict)

    def _refuse(self, status: HTTPStatus, reason: str) -> None:
        """Answer a malformed request ``status`` with ``reason``, and log it in one line."""
        _log(f"refused {self.command} {self.path[:80]} from {self.client_address[0]} ({int(status)}): {reason}")
        self._send(status, {"error": reason})


def _log(line: str) -> None:
    """One line about the page's server on stderr (never a traceback: the terminal is a person's)."""
    print(f"coopeval play-human: seat page: {' '.join(line.split())[:300]}", file=sys.stderr, flush=True)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], desk: SeatDesk) -> None:
        super().__init__(address, _Handler)
        self.desk = desk

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A request that failed in a way not foreseen: one log line instead of the standard
        library's traceback."""
        kind, error = sys.exc_info()[:2]
        _log(f"a request from {client_address[0]} failed: {kind.__name__ if kind else 'error'}: {error}")


class SeatServer:
    """The page's HTTP server on 127.0.0.1, served from a background thread.

    Parameters
    ----------
    root:
        The seats folder (``COOPEVAL_HUMAN_SEATS``).
    port:
        TCP port (0: any free port; :attr:`url` names the one taken).

    Use as a context manager, or call :meth:`start` and :meth:`stop`.

    Raises
    ------
    OSError
        The port is taken (from :meth:`start`).
    """

    def __init__(self, root: str | Path, port: int = 0) -> None:
        self.root = Path(root)
        self.port = port
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def desk(self) -> SeatDesk:
        """The desk the page reads and answers through."""
        assert self._server is not None, "start the server first"
        return self._server.desk

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>/`` of the running server."""
        assert self._server is not None, "start the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}/"

    def start(self) -> SeatServer:
        """Bind and serve in a daemon thread; return self."""
        self._server = _Server(("127.0.0.1", self.port), SeatDesk(self.root))
        self._thread = threading.Thread(target=self._server.serve_forever, name="seat-page", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and close the socket."""
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self) -> SeatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
