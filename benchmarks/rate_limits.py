"""Throughput against a provider that accepts few calls in flight: matched cap and cap above.

Usage: ``PYTHONPATH=src:. python benchmarks/rate_limits.py [--decisions N] [--accepts C]
[--latency S] [--caps 4 8 16] [--retry-after S] [--fixed]``

Serves the simulated provider (:mod:`coopeval.simserver`) in this process on 127.0.0.1, accepting
``C`` requests in flight (the rest get 429 with ``Retry-After: S``), answering after ``latency``
seconds, and plays ``N`` independent decisions through litellm (``openai/sim``) with one
:class:`~coopeval.agents.maker.DecisionMaker` (one job, no response cache) per configured cap.
Prints one JSON line per cap: ``cap``, ``wall_s``, ``bound_s`` = ``N × latency / C`` (the time at
full use of the provider's limit), ``ratio`` = wall / bound, ``requests``, ``refused`` (429s the
server logged), ``refused_recorded`` (the ``llm_calls`` rows' ``rate_limited`` sum) and
``lowest_limit`` (the adaptive limit's lowest value). ``--fixed`` turns the adaptive limit off
(every call goes out as soon as the cap allows: the behaviour before issue 25).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("OPENAI_API_KEY", "sim")

from aiohttp import web

from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.maker import DecisionMaker
from coopeval.agents.recorder import call_rows
from coopeval.agents.retry import RetryPolicy
from coopeval.decisions.formats import ActionDistribution
from coopeval.simserver.policy import Policy
from coopeval.simserver.server import SimConfig, SimServer

FORMAT = ActionDistribution(("A0", "A1"))
BODY = 'Choose how to play; the percentages must sum to exactly 100, for example {"A0": <INT>, "A1": <INT>}'


async def play(
    n: int, accepts: int, latency: float, cap: int, retry_after: float, folder: Path, fixed: bool = False
) -> dict[str, float]:
    """One run: ``n`` decisions with cap ``cap`` against a provider accepting ``accepts``."""
    log = folder / f"requests-{cap}.jsonl"
    server = SimServer(
        SimConfig(latency_s=latency, cap=accepts, retry_after_s=retry_after, default_policy=Policy("cooperative")), log
    )
    runner = web.AppRunner(server.app())
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    agent = LiteLLMAgent("openai/sim", "IO", params={"api_base": f"http://127.0.0.1:{runner.addresses[0][1]}/v1"})
    maker = DecisionMaker(None, {}, max_concurrency=cap, retry_policy=RetryPolicy(max_attempts_rate_limit=100))
    if fixed:
        maker._limit = lambda agent: None  # type: ignore[assignment,method-assign,return-value]
    await maker.decide(agent, BODY, FORMAT, {"warm": True})  # litellm's first-call imports
    started = time.perf_counter()
    outcomes = await asyncio.gather(*(maker.decide(agent, BODY, FORMAT, {"d": i}) for i in range(n)))
    wall = time.perf_counter() - started
    await runner.cleanup()
    server.close()
    lines = [json.loads(line) for line in log.read_text().splitlines()][1:]  # without the warm-up
    bound = n * latency / accepts
    return {
        "cap": cap,
        "accepts": accepts,
        "decisions": n,
        "failed": sum(o.status != "ok" for o in outcomes),
        "wall_s": round(wall, 3),
        "bound_s": round(bound, 3),
        "ratio": round(wall / bound, 3),
        "requests": len(lines),
        "refused": sum(line["outcome"] == "429_cap" for line in lines),
        "refused_recorded": sum(r["rate_limited"] for o in outcomes for r in call_rows(o, {})),
        "lowest_limit": min((limit.lowest_limit for limit in maker.limits.values()), default=cap),
        "adaptive": not fixed,
    }


def main() -> None:
    """Parse the arguments and print one JSON line per cap."""
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--decisions", type=int, default=128)
    p.add_argument("--accepts", type=int, default=8)
    p.add_argument("--latency", type=float, default=0.25)
    p.add_argument("--caps", type=int, nargs="+", default=[8, 16])
    p.add_argument("--retry-after", type=float, default=0.25)
    p.add_argument("--fixed", action="store_true", help="no adaptive limit (the cap alone)")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        for cap in a.caps:
            print(json.dumps(asyncio.run(play(a.decisions, a.accepts, a.latency, cap, a.retry_after, Path(folder), a.fixed))))


if __name__ == "__main__":
    main()
