"""A real llama-server (the ``xllamacpp`` wheel) serving the embedded SmolLM2 on 127.0.0.1.

``python -m tests.agents.llama_server PORT [ALIAS]`` serves until killed; :func:`running_server`
starts it in a child process, waits (bounded) until *it* answers and kills it by its pid
afterwards. The port comes from :func:`free_port`, which frees it again before the child binds
it, so another process may take it in between: the child's model is given a unique alias, and
only a server listing that alias on ``/v1/models`` counts as started (not any server on the port);
a child that exits before answering (its bind failed) is retried on a new port.
One compute thread, one slot: the project machine has 2 shared cores.

A seeded request is not reproducible across runs of a test module: the slot reuses the longest
cached prefix of the previous prompt (``cache_prompt``, on by default), so the last prompt
tokens are evaluated in a batch of another size and the logits differ in the last bits; and the
order in which concurrent decisions reach the one slot varies from run to run. Tests must
therefore assert only what the constraint guarantees, never what one sample happened to be.

Set ``COOPEVAL_LLAMA_SERVER_LOG`` to a file path to keep the server's log (requests, slot and
prompt-cache reuse, grammar warnings) there; by default it is discarded.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from coopeval.core.environment import env_value

REPO = Path(__file__).resolve().parents[2]
STARTUP_S = 60.0
START_ATTEMPTS = 3
"""Ports tried when the child exits before answering (its port was taken meanwhile)."""
MODEL_NAME = "smollm2"
"""The name the tests send (``openai/smollm2``); kept as an alias next to the unique one."""
LOG_ENV = "COOPEVAL_LLAMA_SERVER_LOG"
"""Environment variable naming a file the server's stdout and stderr are appended to."""


def free_port() -> int:
    """An unused TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(port: int, alias: str = MODEL_NAME) -> None:
    """Serve SmolLM2 on ``127.0.0.1:port`` (OpenAI-compatible ``/v1/chat/completions``) until
    killed, its model listed on ``/v1/models`` under ``alias`` (and :data:`MODEL_NAME`).

    Raises whatever ``xllamacpp.Server`` raises when it cannot bind the port (the process then
    exits non-zero: :func:`running_server` retries on another port).
    """
    import xllamacpp

    from coopeval.agents.local import local_model_path

    params = xllamacpp.CommonParams()
    params.model.path = str(local_model_path("smollm2-135m"))
    params.model_alias = {MODEL_NAME, alias}
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.reuse_port = False  # a port already in use fails the bind instead of being shared
    params.n_ctx = 4096
    params.n_parallel = 1
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    server = xllamacpp.Server(params)
    print("serving", server.listening_address, flush=True)
    while True:
        time.sleep(3600)


def serves_alias(port: int, alias: str) -> bool:
    """Whether the server on ``127.0.0.1:port`` is up and lists ``alias`` on ``/v1/models``."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2) as r:
            return r.status == 200 and alias in r.read().decode("utf-8", "replace")
    except OSError:  # refused, loading (503), or not an HTTP server
        return False


def _start(port: int, alias: str, log: IO[bytes] | None) -> subprocess.Popen[bytes]:
    """Start :func:`serve` on ``port`` with ``alias`` in a child process."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    return subprocess.Popen(
        [sys.executable, "-m", "tests.agents.llama_server", str(port), alias],
        cwd=REPO,
        env=env,
        stdout=log or subprocess.DEVNULL,
        stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
    )


@contextmanager
def running_server(log_file: Path | None = None) -> Iterator[str]:
    """Start :func:`serve` in a child process; yield its ``api_base`` (``http://127.0.0.1:<port>/v1``).

    The server's log goes to ``log_file`` if given, else to :data:`LOG_ENV`'s file, else nowhere.

    Raises
    ------
    RuntimeError
        The server did not list its alias within :data:`STARTUP_S` seconds, or exited before
        answering on :data:`START_ATTEMPTS` ports in a row.
    """
    log_path = str(log_file) if log_file is not None else env_value(LOG_ENV)
    log = open(log_path, "ab") if log_path else None  # noqa: SIM115 - closed in the finally below
    proc: subprocess.Popen[bytes] | None = None
    try:
        exits = []
        for _ in range(START_ATTEMPTS):
            port, alias = free_port(), f"coopeval-test-{uuid.uuid4().hex}"
            proc = _start(port, alias, log)
            deadline = time.monotonic() + STARTUP_S
            while not serves_alias(port, alias):
                if proc.poll() is not None:
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"llama-server on port {port} did not answer within {STARTUP_S:g} s")
                time.sleep(0.25)
            else:
                break
            exits.append(f"port {port}: exit code {proc.returncode}")
        else:
            raise RuntimeError(f"llama-server did not start ({'; '.join(exits)})")
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        if proc is not None:
            proc.kill()
            proc.wait(timeout=10)
        if log is not None:
            log.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]), *sys.argv[2:3])
