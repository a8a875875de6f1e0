"""Validity of SmolLM2's decisions behind a real llama-server per structured-output setting.

Usage: ``PYTHONPATH=src:. python benchmarks/structured_outputs.py [--rounds N] [--style IO CoT]``

Starts ``tests.agents.llama_server`` (xllamacpp, 127.0.0.1, one thread), then plays one
Repetition and one Contracting cell of the Prisoner's Dilemma with the roster
``[openai/smollm2]`` (self-play, two seats) through litellm over HTTP, once per setting
``none`` / ``json_schema`` / ``grammar``, without a response cache. Prints, per setting and
decision kind: decisions, valid at the first attempt, failed (all attempts invalid), and the
errors of invalid attempts by code.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter

import polars as pl

from coopeval.agents.llm_agent import LiteLLMAgent
from tests.agents.llama_server import running_server
from tests.helpers import make_cell, play_spec

MODES = ("none", "json_schema", "grammar")


def error_class(error: str) -> str:
    """A short class of a validator message: ``sum``, ``no JSON``, ``keys`` or its first words."""
    for prefix, name in (("the probabilities sum", "sum"), ("no JSON", "no JSON"), ("the JSON object must have", "keys")):
        if error.startswith(prefix):
            return name
    return " ".join(error.split()[:5])


def smollm2(api_base: str, mode: str, style: str) -> LiteLLMAgent:
    """The served SmolLM2 as a litellm agent with structured output ``mode``."""
    params = {"api_base": api_base, "structured_output": mode, "send_seed": True, "max_tokens": 400}
    return LiteLLMAgent("openai/smollm2", style=style, params=params, label="smollm2")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=0, help="Repetition rounds (0: the mechanism default)")
    ap.add_argument("--style", nargs="+", default=["IO"], choices=["IO", "CoT"])
    args = ap.parse_args()
    os.environ.setdefault("OPENAI_API_KEY", "sk-local")  # llama-server checks no key
    with running_server() as api_base:
        print("| style | setting | mechanism | kind | decisions | valid at 1st attempt | failed | invalid attempts by error |")
        print("|---|---|---|---|---|---|---|---|")
        for style, mode in ((s, m) for s in args.style for m in MODES):
            for mechanism in ("Repetition", "Contracting"):
                agent = smollm2(api_base, mode, style)
                extra = {"num_rounds": args.rounds} if args.rounds and mechanism == "Repetition" else {}
                spec = make_cell(mechanism, "prisoners_dilemma", [agent], **extra)
                started = time.perf_counter()
                tables, _ = play_spec(spec, [agent])
                seconds = time.perf_counter() - started
                calls = tables["llm_calls"]
                for kind in sorted(set(calls["kind"].to_list())):
                    rows = calls.filter(calls["kind"] == kind)
                    first = rows.filter(rows["attempt"] == 0)
                    n = first.height
                    valid = first.filter(first["error"] == "").height
                    by_decision = rows.group_by("decision_id").agg((pl.col("error") == "").any().alias("ok"))
                    failed = by_decision.filter(~by_decision["ok"]).height
                    errors = Counter(error_class(e) for e in rows["error"].to_list() if e)
                    shown = ", ".join(f"{c}× {e}" for e, c in errors.most_common())
                    print(f"| {style} | {mode} | {mechanism} | {kind} | {n} | {valid} ({100 * valid / n:.0f} %) | {failed} | {shown} |")
                print(f"<!-- {style} {mode} {mechanism}: {calls.height} calls, {seconds:.0f} s -->", flush=True)


if __name__ == "__main__":
    main()
