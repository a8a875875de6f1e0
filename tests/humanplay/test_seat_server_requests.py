"""Malformed requests to the seat page's server (issue 46, "the seat's server"): each gets a 4xx
and one log line on stderr, never a dropped connection and a traceback in the person's terminal."""

from __future__ import annotations

import http.client
import json

import pytest

from coopeval.humanplay.web import SeatServer


def _request(port: int, method: str, path: str, body: bytes | None = None, host: str | None = None, length: str | None = None) -> tuple[int, str]:
    """(status, body text) of one raw request: ``host`` and ``length`` as given, however malformed
    (the Host header defaults to the server's address, Content-Length to the body's size)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.putrequest(method, path, skip_host=host is not None, skip_accept_encoding=True)
    if host is not None:
        connection.putheader("Host", host)
    if body is not None:
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", length or str(len(body)))
    connection.endheaders(body)
    answer = connection.getresponse()
    text = answer.read().decode("utf-8")
    connection.close()
    return answer.status, text


@pytest.mark.parametrize(
    ("body", "length", "reason"),
    [
        (b'{"seat": "alice", "id": "x", "text": "{}"}', "\u00b2", "Content-Length '\u00b2': the request body must hold 1 to 1000000 bytes"),
        (json.dumps({"seat": "al\u0000ice", "id": "x", "text": "{}"}).encode(), None, "seat 'al\\x00ice' is not a seat or question name"),
        (json.dumps({"seat": "alice", "id": "q" * 5000, "text": "{}"}).encode(), None, "is not a seat or question name (1 to 200 bytes"),
    ],
    ids=["superscript-length", "nul-in-seat", "long-id"],
)
def test_a_malformed_answer_gets_a_400_and_one_log_line(tmp_path, capsys, body: bytes, length: str | None, reason: str) -> None:
    with SeatServer(tmp_path / "seats", port=0) as server:
        port = int(server.url.rsplit(":", 1)[1].strip("/"))
        status, text = _request(port, "POST", "/api/answer", body, length=length)
    assert status == 400
    assert reason in json.loads(text)["error"]
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1
    assert err.startswith("coopeval play-human: seat page: refused POST /api/answer from 127.0.0.1 (400): ")


@pytest.mark.parametrize(
    ("method", "path", "host"),
    [("GET", "/api/state", "evil.example"), ("GET", "/", "127.0.0.1.evil.example:{port}"), ("POST", "/api/answer", "evil.example:{port}")],
    ids=["state", "page", "answer"],
)  # fmt: skip
def test_a_foreign_host_gets_403_and_one_log_line(tmp_path, capsys, method: str, path: str, host: str) -> None:
    """Issue 46 (the seat's server): a request addressed to another host name (DNS rebinding) is
    forbidden (403, not 401: nothing about it is unauthenticated, its host is wrong), with one log
    line naming the host, and nothing is answered or stored."""
    body = json.dumps({"seat": "alice", "id": "x", "text": "{}"}).encode() if method == "POST" else None
    with SeatServer(tmp_path / "seats", port=0) as server:
        port = int(server.url.rsplit(":", 1)[1].strip("/"))
        named = host.format(port=port)
        status, text = _request(port, method, path, body, host=named)
        assert _request(port, "GET", "/api/state", host=f"127.0.0.1:{port}")[0] == 200  # the same server, addressed locally
    assert status == 403
    reason = f"Host {named!r}: the seat page answers only requests addressed to 127.0.0.1 or localhost; open http://127.0.0.1:{port}/"
    assert json.loads(text) == {"error": reason}
    err = capsys.readouterr().err
    assert err == f"coopeval play-human: seat page: refused {method} {path} from 127.0.0.1 (403): {reason}\n"
    assert not (tmp_path / "seats" / "alice").exists()  # no answer stored
