"""Throughput and validity of the embedded local model (``local/smollm2-135m``).

Not a test: a measurement script. Two parts:

1. Runtime speed (always; ``--speed-only`` skips part 2): ~1,000-token prompts evaluated in full
   (no prefix reuse) plus 32 decoded tokens, 2 threads, on the weights the provider loads
   (``$COOPEVAL_LOCAL_ENCODING``, Q8_0 by default) and, in alternating blocks (A B A B), on the
   shipped Q4_1 file unchanged (the reference). llama.cpp's own timings give prompt tokens per second and
   milliseconds per decoded token (medians). The script ends with one JSON line:
   ``prompt_tokens_per_s``, ``decode_ms_per_token``, the reference's, their ratios, the encoding
   and the load average before and after.
2. Decisions through the agent: it plays realistic single-turn action decisions (~350-token
prompts: a repeated Prisoner's Dilemma with 2 actions, and the Traveller's Dilemma under
Mediation with A0..A4) through :class:`coopeval.agents.llm_agent.LiteLLMAgent`, for the IO and
CoT styles, with and without llama.cpp's prompt-prefix (KV-cache) reuse, and prints a table of
seconds per call (median), decisions per second, token counts and the validity rate.

Consecutive prompts of one scenario share the game description and differ in the round history,
as consecutive decisions of one agent in a repeated game do. "reuse off" forces a full prompt
evaluation on every call (``cache_prompt=False``).

Usage::

    PYTHONPATH=src .venv/bin/python benchmarks/local_model.py [--speed-only] [--speed-calls 8]
        [--calls 6] [--cot-caps 320]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from dataclasses import dataclass
from typing import Any

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from coopeval.agents.grammar import DEFAULT_MAX_REASONING_CHARS
from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.local import last_call_stats
from coopeval.agents.protocol import DecisionRequest
from coopeval.decisions.formats import ActionDistribution

MODEL = "local/smollm2-135m"

IO_INSTRUCTION = "Respond with only the JSON object, without any other text."
COT_INSTRUCTION = (
    "Think about the problem step by step: split it into small steps and explain your reasoning "
    "briefly. Then write the final answer as the JSON object on the last line."
)

PD_GAME = """You are taking part in a decision game with one other player. Your goal is to collect as many points as possible in total over the whole game.

Available actions:
- A0
- A1

Rules: in every round, both players choose at the same time a probability for each action. The action you actually play is then drawn at random from your distribution, and the points of both players follow from the drawn actions:
- If you play A0 and the other player plays A0: you get 3 points, the other player gets 3 points.
- If you play A0 and the other player plays A1: you get 0 points, the other player gets 5 points.
- If you play A1 and the other player plays A0: you get 5 points, the other player gets 0 points.
- If you play A1 and the other player plays A1: you get 1 point, the other player gets 1 point.

You are Player 1.

Twist: the game is repeated. After each round, another round follows with probability 80%. You see the actions drawn in the last rounds (most recent last):
"""

TD_GAME = """You are taking part in a decision game with one other player. Your goal is to collect as many points as possible.

Available actions:
- A0: claim 2
- A1: claim 3
- A2: claim 4
- A3: claim 5
- A4: delegate to the mediator

Rules: both players choose at the same time a probability for each action; the action played is then drawn from each distribution. If both claims are equal, each player receives the claim. If they differ, both receive the lower claim; the player with the lower claim receives a bonus of 2 points and the player with the higher claim loses 2 points.

You are Player 2.

Twist: a mediator can play on your behalf. Each player may delegate to the mediator (action A4) or act alone. The mediator only observes how many players delegate and then plays the same action for all delegators. The mediator was chosen by vote among the designs proposed by the players; the winning design was proposed by Player 1:
- if 1 player delegates, the mediator plays A2 (claim 4);
- if 2 players delegate, the mediator plays A3 (claim 5).
Delegating is only useful if you trust that the mediator's rule serves you better than acting alone. Earlier rounds against other opponents (most recent last):
"""

DIST_INSTRUCTION = """
Choose a probability distribution over the available actions {tokens}. Your answer must end with one valid JSON object whose keys are exactly the action tokens and whose values are integer percentage points that sum to exactly 100, for example {example}. {extra}
"""


def _history(n_rounds: int, n_actions: int, offset: int) -> str:
    lines = []
    for r in range(n_rounds):
        mine = (r * 7 + offset) % n_actions
        theirs = (r * 3 + 2 * offset + 1) % n_actions
        lines.append(f"Round {r + 1}: you played A{mine}, the other player played A{theirs}.")
    return "\n".join(lines)


def build_prompt(n_actions: int, call: int, style: str) -> str:
    """A ~350-450-token action prompt (with the chat template).

    All prompts of one game share the game description; ``call`` varies the round history
    (3 to 5 rounds, different actions).
    """
    tokens = [f"A{i}" for i in range(n_actions)]
    example = json.dumps(
        {t: (100 // n_actions + (1 if i < 100 % n_actions else 0)) for i, t in enumerate(tokens)}
    )
    game = PD_GAME if n_actions == 2 else TD_GAME
    extra = "All actions must be included." if n_actions > 2 else ""
    history = _history(3 + call % 3, n_actions, call)
    instruction = DIST_INSTRUCTION.format(tokens=", ".join(tokens), example=example, extra=extra)
    style_text = COT_INSTRUCTION if style == "CoT" else IO_INSTRUCTION
    return f"{game}{history}\n{instruction}\n{style_text}"


def check_distribution(text: str, keys: tuple[str, ...]) -> str | None:
    """Tiny independent check: the last ``{...}`` must be JSON with exactly ``keys``, ints, sum 100.

    Returns ``None`` when valid, else the reason.
    """
    start = text.rfind("{")
    if start < 0:
        return "no JSON object"
    try:
        obj = json.loads(text[start:])
    except json.JSONDecodeError as exc:
        return f"invalid JSON: {exc}"
    if not isinstance(obj, dict) or tuple(obj) != keys:
        return f"wrong keys {list(obj) if isinstance(obj, dict) else type(obj).__name__}"
    values = list(obj.values())
    if any(type(v) is not int or not 0 <= v <= 100 for v in values):
        return "values must be integers in 0..100"
    if sum(values) != 100:
        return f"sum {sum(values)} != 100"
    return None


def progress(line: str) -> None:
    """One progress line on stderr, flushed at once (a stopped run keeps what it measured)."""
    print(f"[{time.strftime('%H:%M:%S')}] {line}", file=sys.stderr, flush=True)


def _project_parser() -> Any:
    try:
        from coopeval.decisions.parsing import parse_answer
    except ImportError:  # the parser lives in another module and may be absent
        return None
    return parse_answer


@dataclass
class Row:
    style: str
    n_actions: int
    reuse: bool
    cap: int | None
    calls: int
    prompt_tokens: float
    completion_tokens: float
    s_per_call: float  # median wall seconds
    min_s_per_call: float  # fastest call (least disturbed by other processes)
    cpu_s_per_call: float  # median process CPU seconds (both llama.cpp threads)
    reused_tokens: float
    valid: int
    parser_valid: int | None


@dataclass
class _Samples:
    wall: list[float]
    cpu: list[float]
    reused: list[float]
    p_tok: list[int]
    c_tok: list[int]
    valid: int = 0
    parser_valid: int = 0


async def run_scenario(style: str, n_actions: int, calls: int, cap: int | None) -> list[Row]:
    """Time ``calls`` decisions with prefix reuse and ``calls`` without, interleaved.

    Interleaving (one call of each mode in turn) exposes both modes to the same background load.
    A reuse-on call follows a call whose prompt has the same game description but another
    history, so it reuses the shared prefix only, as consecutive decisions in a game do.
    """
    params: dict[str, Any] = {"temperature": 1.0}
    if style == "CoT" and cap is not None:
        params["max_reasoning_chars"] = cap
    agents = {
        True: LiteLLMAgent(MODEL, style, {**params, "cache_prompt": True}),
        False: LiteLLMAgent(MODEL, style, {**params, "cache_prompt": False}),
    }
    tokens = tuple(f"A{i}" for i in range(n_actions))
    fmt = ActionDistribution(tokens)
    parser = _project_parser()
    # warm-up: model load and grammar validation (not timed)
    warm = DecisionRequest(
        ({"role": "user", "content": build_prompt(n_actions, 99, style)},), fmt, seed=1
    )
    await agents[False].generate(warm)
    samples = {mode: _Samples([], [], [], [], []) for mode in (True, False)}
    for call in range(calls):
        for reuse in (False, True):
            offset = call if not reuse else call + 50  # other history, same game description
            msg = {"role": "user", "content": build_prompt(n_actions, offset, style)}
            request = DecisionRequest((msg,), fmt, seed=1000 + call)
            started, cpu_started = time.perf_counter(), time.process_time()
            reply = await agents[reuse].generate(request)
            acc = samples[reuse]
            acc.wall.append(time.perf_counter() - started)
            acc.cpu.append(time.process_time() - cpu_started)
            acc.reused.append(last_call_stats().get("cached_prompt_tokens", 0.0))
            acc.p_tok.append(reply.prompt_tokens)
            acc.c_tok.append(reply.completion_tokens)
            problem = check_distribution(reply.text, tokens)
            acc.valid += problem is None
            progress(
                f"{style} {n_actions} actions reuse {'on' if reuse else 'off'} call {call + 1}/{calls}: "
                f"{acc.wall[-1]:.2f} s, {reply.prompt_tokens} prompt + {reply.completion_tokens} completion tokens, "
                f"{'valid' if problem is None else 'INVALID'}"
            )
            if problem is not None:
                print(f"  INVALID ({problem}): {reply.text[-200:]!r}", file=sys.stderr)
            if parser is not None:
                try:
                    parser(fmt, reply.text)
                    acc.parser_valid += 1
                except Exception as exc:
                    print(f"  parser rejected: {exc}", file=sys.stderr)
    return [
        Row(
            style,
            n_actions,
            reuse,
            cap if style == "CoT" else None,
            calls,
            statistics.mean(acc.p_tok),
            statistics.mean(acc.c_tok),
            statistics.median(acc.wall),
            min(acc.wall),
            statistics.median(acc.cpu),
            statistics.mean(acc.reused),
            acc.valid,
            acc.parser_valid if parser is not None else None,
        )
        for reuse, acc in ((True, samples[True]), (False, samples[False]))
    ]


def print_table(rows: list[Row]) -> None:
    header = (
        f"{'style':5} {'actions':>7} {'reuse':>5} {'cap':>5} {'calls':>5} {'prompt_tok':>10} "
        f"{'reused':>6} {'compl_tok':>9} {'s/call':>7} {'min_s':>6} {'cpu_s':>6} {'dec/s':>6} "
        f"{'valid':>7} {'parser':>7}"
    )
    print(header)
    print("-" * len(header))
    for r in rows:
        parser = "-" if r.parser_valid is None else f"{r.parser_valid}/{r.calls}"
        print(
            f"{r.style:5} {r.n_actions:>7} {'on' if r.reuse else 'off':>5} {r.cap or '-':>5} {r.calls:>5} "
            f"{r.prompt_tokens:>10.0f} {r.reused_tokens:>6.0f} {r.completion_tokens:>9.1f} "
            f"{r.s_per_call:>7.2f} {r.min_s_per_call:>6.2f} {r.cpu_s_per_call:>6.2f} "
            f"{1 / r.s_per_call:>6.2f} "
            f"{r.valid:>3}/{r.calls:<3} {parser:>7}"
        )


def _speed_prompt(call: int) -> str:
    """A ~1,000-token prompt; ``call`` changes its first words, so no prefix is shared."""
    rounds = " ".join(
        f"Round {r}: player {call} chose action A{(r * 7 + call) % 3} and scored {(r * 3 + call) % 11} points."
        for r in range(60)
    )
    return f"Game {call}. {rounds}"


def runtime_speed(calls: int) -> dict[str, Any]:
    """Part 1 (see the module docstring): medians over ``calls`` calls per weights, in two
    alternating blocks."""
    from coopeval.agents.local.catalogue import resolve_local_model
    from coopeval.agents.local.encoding import encoded_model
    from coopeval.agents.local.model import LocalRuntime

    source, shipped = resolve_local_model("smollm2-135m")
    weights = encoded_model(source, shipped)
    load_before = os.getloadavg()[0]
    files = {"provider": weights.path, "reference": source}
    timings: dict[str, dict[str, list[float]]] = {k: {"prompt": [], "decode": []} for k in files}
    tokens = 0
    # blocks of calls, A B A B: one runtime alive at a time (two in one process would share the
    # cores with each other's idle, spinning worker threads)
    for block in range(2):
        for name, path in files.items():
            runtime = LocalRuntime(path, 4096, 2, 0, 0)
            for call in range(calls // 2 + 1):  # the first call warms up, untimed
                reply = runtime.chat(
                    {
                        "messages": [{"role": "user", "content": _speed_prompt(100 * block + call)}],
                        "max_tokens": 32,
                        "ignore_eos": True,
                        "seed": call,
                        "cache_prompt": False,
                    }
                )
                t = reply["timings"]
                tokens = int(t["prompt_n"])
                if call:
                    timings[name]["prompt"].append(float(t["prompt_per_second"]))
                    timings[name]["decode"].append(float(t["predicted_per_token_ms"]))
                progress(
                    f"speed block {block + 1}/2 {name} call {call}/{calls // 2}{' (warm-up)' if not call else ''}: "
                    f"{float(t['prompt_per_second']):.0f} prompt tok/s, {float(t['predicted_per_token_ms']):.2f} ms/token"
                )
            runtime.close()
    med = {k: {m: statistics.median(v) for m, v in d.items()} for k, d in timings.items()}
    return {
        "encoding": weights.encoding,
        "weights": weights.label,
        "prompt_tokens": tokens,
        "calls": calls,
        "threads": 2,
        "prompt_tokens_per_s": round(med["provider"]["prompt"], 1),
        "decode_ms_per_token": round(med["provider"]["decode"], 2),
        "reference_prompt_tokens_per_s": round(med["reference"]["prompt"], 1),
        "reference_decode_ms_per_token": round(med["reference"]["decode"], 2),
        "prompt_ratio": round(med["provider"]["prompt"] / med["reference"]["prompt"], 3),
        "decode_ratio": round(med["provider"]["decode"] / med["reference"]["decode"], 3),
        "prompt_tokens_per_s_range": [round(min(timings["provider"]["prompt"])), round(max(timings["provider"]["prompt"]))],
        "decode_ms_per_token_range": [round(min(timings["provider"]["decode"]), 2), round(max(timings["provider"]["decode"]), 2)],
        "load_before": round(load_before, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }


async def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0], formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    ap.add_argument("--speed-only", action="store_true", help="run part 1 only")
    ap.add_argument("--speed-calls", type=int, default=8, help="timed calls per weights in part 1")
    ap.add_argument("--calls", type=int, default=6, help="timed calls per scenario")
    ap.add_argument(
        "--cot-caps",
        type=int,
        nargs="+",
        default=[DEFAULT_MAX_REASONING_CHARS],
        help="CoT reasoning caps (chars)",
    )
    ap.add_argument("--styles", nargs="+", default=["IO", "CoT"], help="answer styles of part 2")
    ap.add_argument("--actions", type=int, nargs="+", default=[2, 5], help="numbers of actions of part 2 (2: Prisoner's Dilemma, 5: Traveller's Dilemma)")
    args = ap.parse_args(argv)
    speed = runtime_speed(args.speed_calls)
    progress(f"part 1: {json.dumps(speed)}")
    if args.speed_only:
        print(json.dumps(speed))
        return
    rows = []
    for style in args.styles:
        for n_actions in args.actions:
            for cap in args.cot_caps if style == "CoT" else [None]:
                rows.extend(await run_scenario(style, n_actions, args.calls, cap))
                for row in rows[-2:]:
                    progress(f"scenario done: {row}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f} (2 cores; >2 means contention)")
    print("s/call: median wall seconds; min_s: fastest call; cpu_s: median process CPU seconds;")
    print("dec/s = 1 / median s/call; reused: mean prompt tokens taken from the KV cache")
    print_table(rows)
    print(json.dumps(speed))


if __name__ == "__main__":
    asyncio.run(main())
