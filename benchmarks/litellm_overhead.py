"""CPU per call of ``litellm.acompletion`` alone, with and without its per-call switches (issue 32).

Usage::

    python benchmarks/litellm_overhead.py                    # every variant, 400 calls each
    python benchmarks/litellm_overhead.py --variants base nolog --calls 1000

Sends ``--calls`` requests of one ~1,900-character game prompt (16 in flight) to the
simulated provider (``python -m coopeval.simserver``, latency 0, its own process) through
``litellm.acompletion`` as the agent does (``num_retries=0``, a seed, a timeout) after 50 warm-up
calls, and prints one JSON line per variant with this process's CPU milliseconds per call.
Each variant runs in a fresh Python (a switch, once set, stays set). Variants:

* ``base``: litellm as the harness uses it;
* ``nolog``: ``litellm.logging = False``;
* ``notok``: ``litellm.disable_token_counter = True``;
* ``nocb``: every callback list emptied;
* ``client``: one ``openai.AsyncOpenAI`` client passed as ``client=`` to every call;
* ``httpx``: ``litellm.disable_aiohttp_transport = True``;
* ``all``: ``nolog``, ``notok``, ``nocb`` and ``client`` together.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VARIANTS = ("base", "nolog", "notok", "nocb", "client", "httpx", "all")
PROMPT = (
    "You and another player each choose an action in a repeated game of 15 rounds. "
    "Each round both choose at once between A0 (cooperate) and A1 (defect): both A0 pays 3 each, "
    "both A1 pays 1 each, and A1 against A0 pays 5 to the defector and 0 to the cooperator. "
) * 8 + 'Do you sign the contract? Reply with {"sign": <true or false>}.'


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def _run(variant: str, port: int, calls: int) -> tuple[float, float]:
    from coopeval.agents.litellm_client import import_litellm

    litellm = import_litellm()
    chosen = {"nolog", "notok", "nocb", "client"} if variant == "all" else {variant}
    if "nolog" in chosen:
        litellm.logging = False
    if "notok" in chosen:
        litellm.disable_token_counter = True
    if "nocb" in chosen:
        for name in ("callbacks", "success_callback", "failure_callback", "_async_success_callback", "_async_failure_callback"):
            setattr(litellm, name, [])
    if "httpx" in chosen:
        litellm.disable_aiohttp_transport = True
    base = f"http://127.0.0.1:{port}/v1"
    client = None
    if "client" in chosen:
        from openai import AsyncOpenAI

        client = AsyncOpenAI(api_key="sim-key", base_url=base)
    semaphore = asyncio.Semaphore(16)

    async def one(seed: int) -> str:
        async with semaphore:
            kwargs = {"model": "openai/openai/gpt-5.2", "messages": [{"role": "user", "content": PROMPT}], "api_base": base,
                      "num_retries": 0, "temperature": 1.0, "seed": seed, "timeout": 20}
            if client is not None:
                kwargs["client"] = client
            response = await litellm.acompletion(**kwargs)
            return str(response.choices[0].message.content)

    await asyncio.gather(*(one(i) for i in range(50)))
    cpu, wall = _cpu(), time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(50, 50 + calls)))
    return _cpu() - cpu, time.perf_counter() - wall


def child(variant: str, port: int, calls: int) -> None:
    """One variant in this process: print its JSON line."""
    cpu, wall = asyncio.run(_run(variant, port, calls))
    print(json.dumps({"variant": variant, "calls": calls, "cpu_ms_per_call": round(1000 * cpu / calls, 2), "wall_s": round(wall, 2)}), flush=True)


def main(argv: list[str] | None = None) -> None:
    """Start the server, run each variant in a fresh Python, stop the server."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(VARIANTS))
    p.add_argument("--calls", type=int, default=400)
    p.add_argument("--child", nargs=2, metavar=("VARIANT", "PORT"), help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    sys.path.insert(0, str(REPO / "src"))
    os.environ.setdefault("OPENAI_API_KEY", "sim-key")
    if a.child:
        child(a.child[0], int(a.child[1]), a.calls)
        return
    from coopeval.simserver.process import free_port, start_server, stop_server

    port = free_port()
    with tempfile.TemporaryDirectory(prefix="coopeval-litellm-") as tmp:
        server = start_server(port, Path(tmp) / "requests.jsonl", ["--latency", "0", "--default-policy", "cooperative"])
        try:
            for variant in a.variants:
                subprocess.run([sys.executable, __file__, "--calls", str(a.calls), "--child", variant, str(port)], check=True)
        finally:
            stop_server(server)


if __name__ == "__main__":
    main()
