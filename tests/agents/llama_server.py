"""A real llama-server (the ``xllamacpp`` wheel) serving the embedded SmolLM2 on 127.0.0.1.

``python -m tests.agents.llama_server PORT`` serves until killed; :func:`running_server` starts
it in a child process, waits (bounded) until it answers and kills it by its pid afterwards.
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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from coopeval.core.environment import env_value

REPO = Path(__file__).resolve().parents[2]
STARTUP_S = 60.0
LOG_ENV = "COOPEVAL_LLAMA_SERVER_LOG"
"""Environment variable naming a file the server's stdout and stderr are appended to."""


def free_port() -> int:
    """An unused TCP port on 127.0.0.1."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(port: int) -> None:
    """Serve SmolLM2 on ``127.0.0.1:port`` (OpenAI-compatible ``/v1/chat/completions``) until killed."""
    import xllamacpp

    from coopeval.agents.local import local_model_path

    params = xllamacpp.CommonParams()
    params.model.path = str(local_model_path("smollm2-135m"))
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.n_ctx = 4096
    params.n_parallel = 1
    params.cpuparams.n_threads = 1
    params.cpuparams_batch.n_threads = 1
    server = xllamacpp.Server(params)
    print("serving", server.listening_address, flush=True)
    while True:
        time.sleep(3600)


@contextmanager
def running_server(log_file: Path | None = None) -> Iterator[str]:
    """Start :func:`serve` in a child process; yield its ``api_base`` (``http://127.0.0.1:<port>/v1``).

    The server's log goes to ``log_file`` if given, else to :data:`LOG_ENV`'s file, else nowhere.

    Raises
    ------
    RuntimeError
        The server did not answer ``/health`` within :data:`STARTUP_S` seconds.
    """
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(REPO)])}
    log_path = str(log_file) if log_file is not None else env_value(LOG_ENV)
    log = open(log_path, "ab") if log_path else None  # noqa: SIM115 - closed in the finally below
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.agents.llama_server", str(port)],
        cwd=REPO,
        env=env,
        stdout=log or subprocess.DEVNULL,
        stderr=subprocess.STDOUT if log else subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + STARTUP_S
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"llama-server on port {port} did not start (exit code {proc.poll()})")
            time.sleep(0.25)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.kill()
        proc.wait(timeout=10)
        if log is not None:
            log.close()


if __name__ == "__main__":
    serve(int(sys.argv[1]))
