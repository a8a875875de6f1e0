"""The simulated provider's HTTP side: latency, concurrency cap, injected faults, request log.

``POST /v1/chat/completions`` takes an OpenAI chat request and, in this order:

1. logs nothing yet and computes the **request hash**: SHA-256 of the canonical JSON of
   ``{"model", "messages", "seed"}`` (with ``send_seed`` the seed tells apart identical prompts
   of different decisions, e.g. the same match-up in two replicates);
2. refuses with **429** and ``Retry-After: <retry_after_s>`` when ``cap`` requests are already
   in flight (outcome ``429_cap``);
3. draws one fault (``401``, ``429``, ``500``, ``timeout``, ``truncated``) with the configured
   rates from a seeded stream, sleeps the drawn latency and then answers: an error status, a
   hang of ``timeout_hang_s`` seconds followed by 504, a body cut in half with the connection
   closed, or the policy's answer (:mod:`coopeval.simserver.policy`, outcome ``ok``);
4. appends one JSON line to the request log: ``{"hash", "t" (Unix seconds at the end), "model",
   "outcome", "latency_s"}``.

An unknown path gets aiohttp's 404; a body that is not a chat request gets 400 naming the field.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from aiohttp import web

from coopeval.agents.context_window import estimate_prompt_tokens
from coopeval.simserver.policy import Policy, answer

FAULTS = ("401", "429", "500", "timeout", "truncated")
LATENCY_DISTRIBUTIONS = ("constant", "uniform", "exponential")


@dataclass(frozen=True)
class SimConfig:
    """Everything the server does besides answering.

    Attributes
    ----------
    seed:
        Seeds answers (with each request's content) and the fault/latency stream.
    latency_s, latency_dist:
        Mean seconds before an answer; ``constant``, ``uniform`` (on [0, 2 × mean]) or
        ``exponential``.
    cap:
        Requests in flight at once; the next one gets 429 at once. 0 = no cap.
    retry_after_s:
        The ``Retry-After`` header of every 429, seconds (HTTP wants whole ones; fractions, written
        as they are, let tests scale waits down: litellm's clients read them).
    prompt_window:
        Context window in prompt tokens (0 = none): a longer prompt is answered as if cut to it,
        the usage reporting ``prompt_window`` prompt tokens (Ollama's behaviour past ``num_ctx``).
        Prompt tokens are counted like the client's estimate
        (:func:`coopeval.agents.context_window.estimate_prompt_tokens`), so an uncut prompt is
        never taken for a cut one.
    fault_rates:
        Fault name (:data:`FAULTS`) → probability per request; they must sum to at most 1.
    timeout_hang_s:
        How long a ``timeout`` fault keeps the request open before answering 504.
    policies, default_policy:
        Model name (the request's ``model`` field) → :class:`Policy`; others get the default.

    Raises
    ------
    ValueError
        Unknown fault or distribution, negative values, or fault rates summing above 1.
    """

    seed: int = 0
    latency_s: float = 0.0
    latency_dist: str = "constant"
    cap: int = 0
    retry_after_s: float = 1
    prompt_window: int = 0
    fault_rates: Mapping[str, float] = field(default_factory=dict)
    timeout_hang_s: float = 30.0
    policies: Mapping[str, Policy] = field(default_factory=dict)
    default_policy: Policy = field(default_factory=Policy)

    def __post_init__(self) -> None:
        unknown = set(self.fault_rates) - set(FAULTS)
        if unknown:
            raise ValueError(f"fault_rates: unknown fault(s) {sorted(unknown)}; use {list(FAULTS)}")
        if any(r < 0 for r in self.fault_rates.values()) or sum(self.fault_rates.values()) > 1:
            raise ValueError(f"fault_rates {dict(self.fault_rates)} must be >= 0 and sum to at most 1")
        if self.latency_dist not in LATENCY_DISTRIBUTIONS:
            raise ValueError(f"latency_dist {self.latency_dist!r}: use one of {list(LATENCY_DISTRIBUTIONS)}")
        if min(self.latency_s, self.cap, self.retry_after_s, self.timeout_hang_s, self.prompt_window) < 0:
            raise ValueError("latency_s, cap, retry_after_s, timeout_hang_s and prompt_window must be >= 0")

    def policy_for(self, model: str) -> Policy:
        """The policy of ``model`` (exact name), else :attr:`default_policy`."""
        return self.policies.get(model, self.default_policy)


def request_hash(body: Mapping[str, Any]) -> str:
    """SHA-256 hex of the canonical JSON of the request's model, messages and seed."""
    key = {"model": body.get("model"), "messages": body.get("messages"), "seed": body.get("seed")}
    return hashlib.sha256(json.dumps(key, sort_keys=True, ensure_ascii=False).encode("utf-8")).hexdigest()


class SimServer:
    """The application state: config, in-flight counter, fault stream and request log.

    ``log_path`` is opened for appending (created with its parent folder); call
    :meth:`close` when done. :meth:`app` returns the aiohttp application.
    """

    def __init__(self, config: SimConfig, log_path: str | Path) -> None:
        self.config = config
        self.in_flight = 0
        self._rng = random.Random(config.seed)
        estimate_prompt_tokens([{"role": "user", "content": "warm up"}])  # imports the tokenizer before serving
        path = Path(log_path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self._log: IO[str] = path.open("a", encoding="utf-8")

    def close(self) -> None:
        """Close the request log."""
        self._log.close()

    def app(self) -> web.Application:
        """The aiohttp application serving ``/v1/chat/completions``."""
        application = web.Application(client_max_size=16 * 1024 * 1024)
        application.router.add_post("/v1/chat/completions", self.chat)
        application.router.add_post("/chat/completions", self.chat)
        return application

    def _record(self, digest: str, model: str, outcome: str, latency: float) -> None:
        line = {"hash": digest, "t": round(time.time(), 3), "model": model, "outcome": outcome, "latency_s": round(latency, 3)}
        self._log.write(json.dumps(line) + "\n")
        self._log.flush()

    def _latency(self) -> float:
        mean, dist = self.config.latency_s, self.config.latency_dist
        if mean == 0 or dist == "constant":
            return mean
        if dist == "uniform":
            return self._rng.uniform(0, 2 * mean)
        return self._rng.expovariate(1 / mean)

    def _fault(self) -> str:
        draw = self._rng.random()
        for name in FAULTS:
            rate = self.config.fault_rates.get(name, 0.0)
            if draw < rate:
                return name
            draw -= rate
        return ""

    async def chat(self, request: web.Request) -> web.StreamResponse:
        """Handle one chat-completions request (see the module docstring)."""
        try:
            body = await request.json()
        except json.JSONDecodeError:
            return _error(400, "the body is not JSON")
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(messages, list) or not messages:
            return _error(400, "field 'messages' must be a non-empty list of chat messages")
        model = str(body.get("model") or "")
        digest = request_hash(body)
        started = time.monotonic()
        cap = self.config.cap
        if cap and self.in_flight >= cap:
            self._record(digest, model, "429_cap", 0.0)
            return _error(429, "too many requests in flight", {"Retry-After": f"{self.config.retry_after_s:g}"})
        self.in_flight += 1
        try:
            fault = self._fault()
            if fault == "429":
                self._record(digest, model, "429", 0.0)
                return _error(429, "rate limited (injected)", {"Retry-After": f"{self.config.retry_after_s:g}"})
            if fault == "401":
                self._record(digest, model, "401", 0.0)
                return _error(401, "invalid API key (injected)")
            await asyncio.sleep(self._latency())
            if fault == "500":
                self._record(digest, model, "500", time.monotonic() - started)
                return _error(500, "internal error (injected)")
            if fault == "timeout":
                await asyncio.sleep(self.config.timeout_hang_s)
                self._record(digest, model, "timeout", time.monotonic() - started)
                return _error(504, "gateway timeout (injected)")
            rng = random.Random(f"{self.config.seed}:{digest}")
            text = answer(messages, self.config.policy_for(model), rng)
            payload = json.dumps(_completion(digest, model, text, messages, self.config.prompt_window)).encode("utf-8")
            if fault == "truncated":
                response = web.StreamResponse(status=200, headers={"Content-Type": "application/json"})
                response.content_length = len(payload)
                await response.prepare(request)
                await response.write(payload[: len(payload) // 2])
                self._record(digest, model, "truncated", time.monotonic() - started)
                if request.transport is not None:
                    request.transport.close()
                return response
            self._record(digest, model, "ok", time.monotonic() - started)
            return web.Response(body=payload, content_type="application/json")
        except ValueError as exc:
            self._record(digest, model, "400", time.monotonic() - started)
            return _error(400, str(exc))
        finally:
            self.in_flight -= 1


def _error(status: int, message: str, headers: Mapping[str, str] | None = None) -> web.Response:
    body = {"error": {"message": message, "type": "sim_error", "code": status}}
    return web.json_response(body, status=status, headers=dict(headers or {}))


def response_id(digest: str) -> str:
    """The completion ``id`` answered to the request whose :func:`request_hash` is ``digest``;
    coopeval caches it with the reply (``Reply.response_id``), which lets the scale benchmark
    tell whether an answer reached the client's cache."""
    return f"sim-{digest[:24]}"


def _completion(digest: str, model: str, text: str, messages: list[Any], window: int = 0) -> dict[str, Any]:
    try:
        prompt = estimate_prompt_tokens([m for m in messages if isinstance(m, dict)])
    except Exception:  # a message the tokenizer cannot read: 4 characters a token
        prompt = sum(len(str(m.get("content") or "")) for m in messages if isinstance(m, dict)) // 4
    if window:
        prompt = min(prompt, window)  # the server kept only the window
    return {
        "id": response_id(digest),
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": len(text) // 4,
            "total_tokens": prompt + len(text) // 4,
        },
    }


def serve(config: SimConfig, log_path: str | Path, port: int) -> None:
    """Serve on 127.0.0.1:``port`` until interrupted (SIGINT/SIGTERM)."""
    server = SimServer(config, log_path)
    try:
        web.run_app(server.app(), host="127.0.0.1", port=port, print=None, access_log=None)
    finally:
        server.close()
