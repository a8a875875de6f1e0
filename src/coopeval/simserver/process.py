"""The simulated provider as a child process, for benchmarks and tests: a free port, start (and
wait until it listens), stop."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    port: int,
    log: str | Path,
    options: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    wait_s: float = 120.0,
) -> subprocess.Popen[bytes]:
    """Start ``python -m coopeval.simserver --port PORT --log LOG *options`` and return once it
    accepts connections on 127.0.0.1:``port``.

    ``wait_s`` only bounds a server that never listens: a healthy one returns as soon as it
    accepts a connection (about 1 s on an idle machine). It is 120 s because at a load average
    of ~20 on 2 cores the server's imports alone took over 30 s, the old limit, and failed
    tests that had nothing wrong (tests/cache/test_cell_lock.py, tests/simserver/test_server.py).

    Raises
    ------
    RuntimeError
        The server exited (bad options: the message gives its exit code) or did not listen
        within ``wait_s`` seconds (it is stopped; the message names the port).
    """
    command = [sys.executable, "-m", "coopeval.simserver", "--port", str(port), "--log", str(log), *options]
    proc = subprocess.Popen(command, env=dict(env) if env is not None else dict(os.environ), stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return proc
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"the sim server exited with code {proc.returncode} before listening on port {port}; "
                    f"check its options {list(options)}"
                ) from None
            time.sleep(0.1)
    stop_server(proc)
    raise RuntimeError(f"the sim server did not listen on port {port} within {wait_s:g} s")


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Terminate the server (kill it if it has not exited after 10 s)."""
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
