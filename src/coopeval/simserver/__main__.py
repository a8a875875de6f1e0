"""``python -m coopeval.simserver``: run the simulated provider (see :mod:`coopeval.simserver`).

Example: ``python -m coopeval.simserver --port 8765 --latency 1 --cap 64 --fault 429=0.05
--fault 500=0.01 --policy qwen=defecting --log results/sim/requests.jsonl``.
"""

from __future__ import annotations

import argparse
import sys

from coopeval.simserver.policy import POLICIES, Policy
from coopeval.simserver.server import FAULTS, LATENCY_DISTRIBUTIONS, SimConfig, serve


def _pair(text: str, what: str) -> tuple[str, str]:
    name, sep, value = text.rpartition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"{what} {text!r}: write NAME=VALUE")
    return name, value


def parse_args(argv: list[str] | None = None) -> tuple[SimConfig, str, int]:
    """Parse the command line into the server config, the log path and the port.

    Raises
    ------
    SystemExit
        Bad arguments (argparse prints which one and why).
    """
    p = argparse.ArgumentParser(prog="python -m coopeval.simserver", description=__doc__)
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--latency", type=float, default=0.0, help="mean seconds per answer")
    p.add_argument("--latency-dist", choices=LATENCY_DISTRIBUTIONS, default="constant")
    p.add_argument("--cap", type=int, default=0, help="requests in flight before 429 (0: none)")
    p.add_argument("--retry-after", type=float, default=1, help="Retry-After seconds of a 429")
    p.add_argument("--prompt-window", type=int, default=0, help="prompt tokens kept (cut beyond; 0: none)")
    p.add_argument("--timeout-hang", type=float, default=30.0, help="seconds an injected timeout hangs")
    p.add_argument("--fault", action="append", default=[], metavar="NAME=RATE", help=f"NAME in {list(FAULTS)}")
    p.add_argument("--policy", action="append", default=[], metavar="MODEL=POLICY", help=f"POLICY in {list(POLICIES)}")
    p.add_argument("--default-policy", choices=POLICIES, default="random")
    p.add_argument("--malformed-rate", type=float, default=0.0, help="share of answers without JSON (every model)")
    p.add_argument("--log", default="sim_requests.jsonl", help="append-only request log (JSON lines)")
    a = p.parse_args(argv)
    try:
        faults = {name: float(rate) for name, rate in (_pair(f, "--fault") for f in a.fault)}
        policies = {m: Policy(kind, a.malformed_rate) for m, kind in (_pair(x, "--policy") for x in a.policy)}
        config = SimConfig(
            seed=a.seed,
            latency_s=a.latency,
            latency_dist=a.latency_dist,
            cap=a.cap,
            retry_after_s=a.retry_after,
            prompt_window=a.prompt_window,
            fault_rates=faults,
            timeout_hang_s=a.timeout_hang,
            policies=policies,
            default_policy=Policy(a.default_policy, a.malformed_rate),
        )
    except (ValueError, argparse.ArgumentTypeError) as exc:
        p.error(str(exc))
    return config, a.log, a.port


def main(argv: list[str] | None = None) -> None:
    """Run the server in the foreground."""
    config, log, port = parse_args(argv)
    print(f"coopeval sim server on http://127.0.0.1:{port}/v1 (log {log})", file=sys.stderr, flush=True)
    serve(config, log, port)


if __name__ == "__main__":
    main()
