"""The llama-server test helper starts *its* server: a server already on the port that does not
list the child's unique alias is not taken for it, and a child whose bind failed (it exits) is
retried on a new port. Stand-in children (a few lines of http.server) replace the real
llama-server, so this runs without a model."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import IO

import pytest

from tests.agents import llama_server

STAND_IN = """
import json, sys
from http.server import BaseHTTPRequestHandler, HTTPServer
port, alias = int(sys.argv[1]), sys.argv[2]
class H(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"data": [{"id": alias}]}).encode()
        self.send_response(200); self.end_headers(); self.wfile.write(body)
    def log_message(self, *args):
        pass
HTTPServer(("127.0.0.1", port), H).serve_forever()
"""


class Foreign(BaseHTTPRequestHandler):
    """Another server: 200 with a model list on every path, never the child's alias."""

    def do_GET(self) -> None:
        body = json.dumps({"data": [{"id": "someone-else"}], "status": "ok"}).encode()
        self.send_response(200)
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        return None


@pytest.fixture
def foreign_port() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Foreign)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def test_a_foreign_server_on_the_port_is_not_taken_for_ours(monkeypatch: pytest.MonkeyPatch, foreign_port: int) -> None:
    children: list[subprocess.Popen[bytes]] = []

    def silent_child(port: int, alias: str, log: IO[bytes] | None) -> subprocess.Popen[bytes]:
        # a child that never listens (as if still loading), while another server holds the port
        children.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"]))
        return children[-1]

    monkeypatch.setattr(llama_server, "free_port", lambda: foreign_port)
    monkeypatch.setattr(llama_server, "_start", silent_child)
    monkeypatch.setattr(llama_server, "STARTUP_S", 1.5)
    assert not llama_server.serves_alias(foreign_port, "coopeval-test-x")
    with pytest.raises(RuntimeError, match=f"port {foreign_port} did not answer within 1.5 s"), llama_server.running_server():
        pass
    assert [child.poll() for child in children] == [-9]  # killed by the helper


def test_a_child_whose_bind_failed_is_retried_on_a_new_port(monkeypatch: pytest.MonkeyPatch) -> None:
    starts: list[tuple[int, subprocess.Popen[bytes]]] = []

    def child(port: int, alias: str, log: IO[bytes] | None) -> subprocess.Popen[bytes]:
        if not starts:  # the first port was taken: the child exits as a failed bind does
            proc = subprocess.Popen([sys.executable, "-c", "raise SystemExit(1)"])
        else:
            proc = subprocess.Popen([sys.executable, "-c", STAND_IN, str(port), alias])
        starts.append((port, proc))
        return proc

    monkeypatch.setattr(llama_server, "_start", child)
    with llama_server.running_server() as base:
        assert base == f"http://127.0.0.1:{starts[1][0]}/v1"
        assert starts[0][1].returncode == 1 and starts[1][1].poll() is None
    assert len(starts) == 2 and starts[1][1].returncode == -9


def test_three_failed_binds_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        llama_server, "_start", lambda port, alias, log: subprocess.Popen([sys.executable, "-c", "raise SystemExit(3)"])
    )
    failed = r"did not start \(port \d+: exit code 3; port \d+: exit code 3; port \d+: exit code 3\)"
    with pytest.raises(RuntimeError, match=failed), llama_server.running_server():
        pass
