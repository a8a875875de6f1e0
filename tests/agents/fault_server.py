"""A scripted OpenAI-compatible HTTP server on 127.0.0.1 for fault-injection tests.

Every POST to ``/v1/chat/completions`` takes the next behaviour from a script (the last one
repeats once the script runs out) and records the request. Ollama's native paths
(``/api/chat`` of litellm's ``ollama_chat/``, ``/api/generate`` of ``ollama/``) answer ``ok`` and
``tokens`` in Ollama's body (``message``/``response``, ``prompt_eval_count``, ``eval_count``);
every other behaviour is the same on all paths. Behaviours:

* ``ok[:<content>]``: 200 with that content (default :data:`VALID_ANSWER`) and usage (prompt
  tokens: the request's message characters / 4, at least 10, as a server counts them roughly);
* ``tokens:<n>``: ``ok`` reporting ``n`` prompt tokens (a server that cut the prompt to ``n``);
* ``status:<code>[:<retry-after>]``: an OpenAI-style error body with that status code and, if
  given, a ``Retry-After`` header (seconds or an HTTP date, sent verbatim);
* ``reset``: the connection is closed with a TCP RST before any response byte;
* ``drip``: 200 headers with a long ``Content-Length``, then one byte per ``drip_s`` seconds
  (bounded: at most ``drip_max`` bytes, so the handler thread always ends);
* ``malformed``: 200 with a body that is not JSON;
* ``empty``: 200 with ``content: null``, zero usage and no error object;
* ``context``: OpenAI's 400 ``context_length_exceeded`` error;
* ``reply:<json>``: 200 with the given JSON object as the whole body.

Only the standard library: the server is :class:`http.server.ThreadingHTTPServer` in a daemon
thread, so a test controls every byte (a reset or a drip cannot be scripted through a
framework's response objects).
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VALID_ANSWER = '{"A0": 60, "A1": 40}'


def completion_body(
    content: str | None,
    *,
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
    finish_reason: str = "stop",
    extra_usage: dict[str, Any] | None = None,
    extra_message: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """An OpenAI chat-completion response body."""
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": "sim",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, **(extra_message or {})},
                "finish_reason": finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            **(extra_usage or {}),
        },
    }


def ollama_body(content: str, prompt_tokens: int, *, generate: bool = False) -> dict[str, Any]:
    """An Ollama ``/api/chat`` (or, with ``generate``, ``/api/generate``) response body."""
    body: dict[str, Any] = {
        "model": "sim",
        "created_at": "2026-01-01T00:00:00Z",
        "done": True,
        "done_reason": "stop",
        "prompt_eval_count": prompt_tokens,
        "eval_count": 5,
    }
    if generate:
        body["response"] = content
    else:
        body["message"] = {"role": "assistant", "content": content}
    return body


def answer(body: dict[str, Any]) -> str:
    """The script entry that replies with ``body`` verbatim."""
    return "reply:" + json.dumps(body)


@dataclass
class FaultServer:
    """State shared with the handler: the script, the requests seen, the drip pace."""

    script: list[str]
    drip_s: float = 1.0
    drip_max: int = 30
    requests: list[dict[str, Any]] = field(default_factory=list)
    outcomes: list[str] = field(default_factory=list)
    port: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def api_base(self) -> str:
        """The ``api_base`` to give litellm."""
        return f"http://127.0.0.1:{self.port}/v1"

    def api_base_for(self, model: str) -> str:
        """The ``api_base`` of litellm model string ``model``: Ollama's paths hang off the root."""
        return f"http://127.0.0.1:{self.port}" if model.startswith("ollama") else self.api_base

    paths: list[str] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # time.monotonic() at each request's arrival

    def next_behaviour(self, body: dict[str, Any], path: str = "/v1/chat/completions") -> str:
        """Record one request (and its path) and return its behaviour."""
        with self._lock:
            self.paths.append(path)
            self.times.append(time.monotonic())
            index = len(self.requests)
            self.requests.append(body)
            behaviour = self.script[min(index, len(self.script) - 1)]
            self.outcomes.append(behaviour.split(":", 1)[0])
            return behaviour


def _handler(server: FaultServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return

        def _send(self, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            if self.path == "/api/show":
                # litellm asks Ollama for model info (template, capabilities) before some calls,
                # depending on what it has cached in the process: not a request of the test
                self._send(200, json.dumps({"template": "", "model_info": {}, "details": {}, "capabilities": []}).encode())
                return
            behaviour = server.next_behaviour(body, self.path)
            kind, _, arg = behaviour.partition(":")
            if kind in ("ok", "tokens"):
                content = arg if kind == "ok" and arg else VALID_ANSWER
                chars = sum(len(str(m.get("content") or "")) for m in body.get("messages") or [] if isinstance(m, dict))
                chars += len(str(body.get("prompt") or ""))  # ollama/'s /api/generate
                prompt_tokens = int(arg) if kind == "tokens" else max(10, chars // 4)
                if self.path.startswith("/api/"):
                    reply = ollama_body(content, prompt_tokens, generate=self.path == "/api/generate")
                else:
                    reply = completion_body(content, prompt_tokens=prompt_tokens)
                self._send(200, json.dumps(reply).encode())
            elif kind == "reply":
                self._send(200, arg.encode())
            elif kind == "empty":
                self._send(200, json.dumps(completion_body(None, prompt_tokens=0, completion_tokens=0)).encode())
            elif kind == "malformed":
                self._send(200, b'{"id": "chatcmpl-fault", "choices": [ <html>bad gateway')
            elif kind == "status":
                code, _, retry_after = arg.partition(":")
                error = {"error": {"message": f"scripted {code}", "type": "scripted", "code": code}}
                headers = {"Retry-After": retry_after} if retry_after else {}
                self._send(int(code), json.dumps(error).encode(), headers)
            elif kind == "context":
                message = (
                    "This model's maximum context length is 8192 tokens. However, your messages "
                    "resulted in 9000 tokens. Please reduce the length of the messages."
                )
                error = {"error": {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}}
                self._send(400, json.dumps(error).encode())
            elif kind == "reset":
                self.connection.setsockopt(
                    socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
                )
                self.close_connection = True
                self.connection.close()
            elif kind == "drip":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "100000")
                self.end_headers()
                self.wfile.flush()
                try:
                    for _ in range(server.drip_max):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(server.drip_s)
                except OSError:
                    pass  # the client gave up: what we want
                self.close_connection = True
            else:  # pragma: no cover - a typo in a test script
                raise ValueError(f"unknown behaviour {behaviour!r}")

    return Handler


@contextmanager
def serve(script: list[str], drip_s: float = 1.0, drip_max: int = 30) -> Iterator[FaultServer]:
    """Run a :class:`FaultServer` on a free port of 127.0.0.1 for the ``with`` block."""
    state = FaultServer(list(script), drip_s=drip_s, drip_max=drip_max)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    httpd.daemon_threads = True
    state.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        httpd.shutdown()
        httpd.server_close()
