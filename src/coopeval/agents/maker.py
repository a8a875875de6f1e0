"""One decision: ask, validate, re-ask, cache and record (docs/protocol/answers.md#parsing, #re-asks, docs/protocol/engineering.md#response-cache).

:class:`DecisionMaker` owns the loop every mechanism uses. Each attempt is looked up in the
response cache first (a hit costs nothing and replays the cached text); a miss calls the agent
through the retry loop and caches whatever the model returned. The verdict is recomputed from
the text by the current parser, never cached. After :data:`MAX_ATTEMPTS` invalid answers the
decision is recorded as failed with all its attempts; nothing is ever substituted. A request
the model cannot take as sent (:class:`~coopeval.agents.protocol.RequestRejectedError`, e.g. a
prompt that leaves no room for ``max_tokens`` in the context window) fails the decision at once
with that message: no retry, no re-ask (it would only be longer), nothing cached. A provider
that asks for a longer wait than the retry policy honours
(:class:`~coopeval.agents.protocol.ProviderRateLimitedError`) stops the decision and the job: the
journal gets a ``rate_limited`` line with the requested wait, nothing is cached, and a rerun
resumes from the cache (failing the decision instead would record no answer for a call the
provider would have answered later).
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from typing import Any

from coopeval.agents.adaptive import AdaptiveLimit
from coopeval.agents.protocol import (
    Agent,
    DecisionRequest,
    ProviderRateLimitedError,
    Reply,
    RequestRejectedError,
)
from coopeval.agents.retry import CallTally, RetryPolicy, generate_with_retry
from coopeval.agents.slots import slots_from_env
from coopeval.agents.turn import local_turn, unreplayed_hits
from coopeval.cache.response_cache import ResponseCache, call_key
from coopeval.core.hashing import content_hash
from coopeval.decisions.formats import AnswerFormat
from coopeval.decisions.parsing import check_answer
from coopeval.decisions.reask import MAX_ATTEMPTS, reask_messages
from coopeval.decisions.reasoning import reasoning_capped


@dataclass
class CallStats:
    """Counters of one job: model calls made, cache hits, attempts, failures, US dollars spent,
    answers cut off at ``max_tokens`` (``truncated``, cached ones included) and reasoning tokens
    of the calls made."""

    calls_made: int = 0  # model calls actually sent (cache misses of cacheable agents)
    bot_calls: int = 0  # answers of scripted bots (never cached, free)
    cache_hits: int = 0
    attempts: int = 0
    failed_decisions: int = 0
    cost_usd: float = 0.0
    truncated: int = 0
    reasoning_tokens: int = 0
    replayed: int = 0  # in-process calls answered from the cache, sent again to rebuild the runtime's state
    replay_mismatches: int = 0  # of those, how many gave another text than the cached one


class BudgetExceededError(RuntimeError):
    """The job spent more than ``max_usd`` on model calls (docs/protocol/engineering.md#secrets-and-provenance)."""


@dataclass
class DecisionOutcome:
    """The result of one decision.

    ``status`` is ``"ok"`` or ``"failed"``; ``parsed`` the validated answer (None if failed);
    ``attempts`` one dict per attempt with the columns of the ``llm_calls`` table;
    :attr:`reply_columns` are the ``decisions`` columns describing the final attempt's reply;
    ``answer_offset`` the character offset of the JSON object used in ``response`` (None for
    free-text formats and failed decisions); ``reasoning_truncated`` whether the final
    response's reasoning reached the embedded model's CoT cap (issue 13, 12(b)).
    """

    decision_id: str
    status: str
    parsed: dict[str, Any] | None
    response: str
    error: str
    attempts: list[dict[str, Any]] = field(default_factory=list)
    answer_offset: int | None = None
    reasoning_truncated: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def reply_columns(self) -> dict[str, Any]:
        """The ``decisions`` columns describing the final reply, shared by every study's row:
        ``finish_reason`` and ``truncated`` of the final attempt, ``answer_offset`` and
        ``reasoning_truncated``."""
        last = self.attempts[-1] if self.attempts else {}
        return {
            "finish_reason": last.get("finish_reason", ""),
            "truncated": bool(last.get("truncated", False)),
            "answer_offset": self.answer_offset,
            "reasoning_truncated": self.reasoning_truncated,
        }


class DecisionMaker:
    """Asks agents for decisions with caching, re-asks and attempt records.

    Parameters
    ----------
    cache:
        The shared response cache, or None to disable caching (tests).
    journal:
        Optional callable receiving one JSON-serialisable dict per attempt and per decision
        (the mid-run journal, docs/protocol/engineering.md#journal).
    style_instructions:
        ``{"CoT": text, "IO": text}`` appended to the end of every prompt.
    max_concurrency:
        Calls in flight at once in this job (one semaphore per job, docs/protocol/engineering.md#litellm). Remote
        calls also take a run-wide slot when ``COOPEVAL_PROVIDER_SLOTS`` is set
        (:mod:`coopeval.agents.slots`), and each of their attempts a place under their provider's
        adaptive limit (:mod:`coopeval.agents.adaptive`, capped at ``max_concurrency``), which
        halves after a 429 and grows back with answers.
    lenient_contract_ints:
        ``compat.lenient_contract_ints`` (docs/protocol/reference-data.md#compatibility-flags).
    retry_failed:
        Number of extra retry rounds for decisions that failed all attempts (docs/protocol/answers.md#re-asks).
    max_usd:
        Hard budget of this job in US dollars (0 disables the guard). Cached answers cost
        nothing; reasoning tokens are priced (see :func:`coopeval.agents.prices.billed_usage`);
        the answer that crosses the limit is cached before the job stops, so a rerun with a
        higher budget loses nothing.
    retry_policy:
        Attempts and waits of the transport-retry loop (default :class:`RetryPolicy`).
    position_extra:
        Entries added to every decision's position, hence to its cache key and decision id
        (the cell's prompt variant, :func:`coopeval.core.prompts.variant_position`); empty or
        None leaves positions, keys and ids as they were.
    """

    def __init__(
        self,
        cache: ResponseCache | None,
        style_instructions: Mapping[str, str],
        journal: Callable[[dict[str, Any]], None] | None = None,
        max_concurrency: int = 8,
        lenient_contract_ints: bool = False,
        retry_failed: int = 0,
        max_usd: float = 0.0,
        retry_policy: RetryPolicy | None = None,
        position_extra: Mapping[str, Any] | None = None,
    ) -> None:
        self.cache = cache
        self.position_extra = dict(position_extra or {})
        self.journal = journal
        self.style_instructions = dict(style_instructions)
        self.stats = CallStats()
        self.semaphore = asyncio.Semaphore(max_concurrency)
        self.max_concurrency = max_concurrency
        self.limits: dict[str, AdaptiveLimit] = {}  # provider and endpoint → its adaptive limit
        self.provider_slots = slots_from_env()  # the run-wide cap (COOPEVAL_PROVIDER_SLOTS)
        self.lenient_contract_ints = lenient_contract_ints
        self.retry_failed = retry_failed
        self.max_usd = max_usd
        self.retry_policy = retry_policy or RetryPolicy()

    def _style_text(self, agent: Agent) -> str:
        return self.style_instructions.get(agent.style, "")

    async def decide(
        self,
        agent: Agent,
        body: str,
        answer_format: AnswerFormat,
        position: Mapping[str, Any],
        state: Mapping[str, Any] | None = None,
        seed: int | None = None,
    ) -> DecisionOutcome:
        """Ask ``agent`` one question until a valid answer or :data:`MAX_ATTEMPTS` attempts.

        ``body`` is the prompt without the style instruction; ``position`` identifies the
        decision in the game (JSON-serialisable; part of the cache key), extended by the
        maker's ``position_extra`` (e.g. the cell's prompt variant) when that is not empty.
        """
        if self.position_extra:
            position = {**position, **self.position_extra}
        # Deterministic: a rerun of the same cell reproduces identical decision tables.
        decision_id = content_hash(dict(position), 16)
        style = self._style_text(agent)
        original = ({"role": "user", "content": f"{body}\n\n{style}".rstrip()},)
        attempts: list[dict[str, Any]] = []
        text, error, rejected = "", "", ""
        for retry_round in range(self.retry_failed + 1):
            if rejected:
                break
            # A retry round exists only for decisions that failed every attempt before it.
            pos = dict(position) if retry_round == 0 else {**position, "retry_round": retry_round}
            messages: tuple[Mapping[str, str], ...] = original
            for attempt in range(MAX_ATTEMPTS):
                request = DecisionRequest(
                    messages=messages,
                    answer_format=answer_format,
                    state={**(state or {}), "attempt": attempt},
                    position=pos,
                    seed=seed,
                )
                tally = CallTally()
                try:
                    reply, key, hit = await self._ask(agent, request, attempt, tally)
                except RequestRejectedError as exc:
                    reply, key, hit, rejected = Reply(text=""), "", False, str(exc)
                except ProviderRateLimitedError as exc:  # the job stops; the journal keeps the wait
                    if self.journal:
                        self.journal(
                            {
                                "type": "rate_limited",
                                "position": pos,
                                "decision_id": decision_id,
                                "model": agent.model,
                                "requested_wait_s": exc.requested_wait_s,
                                "max_wait_s": exc.max_wait_s,
                            }
                        )
                    raise
                text = reply.text
                verdict = check_answer(
                    answer_format,
                    text,
                    reply.finish_reason,
                    reply.max_tokens or _max_tokens(agent),
                    lenient=self.lenient_contract_ints,
                )
                parsed, error = verdict.parsed, verdict.error
                if rejected:
                    parsed, error = None, rejected
                record = {
                    "decision_id": decision_id,
                    "attempt": len(attempts),
                    "agent": agent.name,
                    "model": agent.model,
                    "kind": str(answer_format.kind),
                    "cache_key": key,
                    "cache_hit": hit,
                    "prompt": json.dumps([dict(m) for m in messages], ensure_ascii=False),
                    "response": text,
                    "error": error,
                    "prompt_tokens": reply.prompt_tokens,
                    "cached_prompt_tokens": reply.cached_prompt_tokens,
                    "completion_tokens": reply.completion_tokens,
                    "latency_s": reply.latency_s,
                    "cost_usd": reply.cost_usd,
                    "model_resolved": reply.model_resolved,
                    "finish_reason": reply.finish_reason,
                    "truncated": reply.truncated,
                    "max_tokens": reply.max_tokens,
                    "reasoning_tokens": reply.reasoning_tokens,
                    "reasoning": reply.reasoning,
                    **_structured_columns(agent, answer_format),
                    "rate_limited": tally.rate_limited,
                    "transport_retries": tally.retries,
                    "in_flight": tally.in_flight,
                    "in_flight_limit": tally.limit,
                    "in_flight_cap": self.max_concurrency if tally.limit else 0,
                }
                attempts.append(record)
                self.stats.attempts += 1
                self.stats.truncated += int(reply.truncated)
                if self.journal:
                    self.journal({"type": "attempt", "position": pos, **record})
                if verdict.valid and not rejected:
                    capped = reasoning_capped(text, verdict.offset, _reasoning_cap(agent))
                    return DecisionOutcome(decision_id, "ok", parsed, text, "", attempts, verdict.offset, capped)
                if rejected:
                    break
                messages = reask_messages(original_messages_body(body), text, error, style)
        self.stats.failed_decisions += 1
        if self.journal:
            self.journal({"type": "failed_decision", "position": dict(position), "decision_id": decision_id, "error": error})
        return DecisionOutcome(decision_id, "failed", None, text, error, attempts)

    def _limit(self, agent: Agent) -> AdaptiveLimit:
        """The adaptive limit of ``agent``'s provider and endpoint in this job."""
        endpoint = getattr(agent, "endpoint", None) or {}
        name = f"{agent.model.split('/', 1)[0]} {json.dumps(endpoint, sort_keys=True)}"
        return self.limits.setdefault(name, AdaptiveLimit(self.max_concurrency))

    async def _ask(
        self, agent: Agent, request: DecisionRequest, attempt: int, tally: CallTally
    ) -> tuple[Reply, str, bool]:
        prepare = getattr(agent, "prepare", None)  # structured-output probes: per agent, per constraint
        if prepare is not None:
            await prepare(self.cache, request.answer_format)
        # endpoint: who answers (LiteLLMAgent.endpoint); absent for bots and mocks
        endpoint = getattr(agent, "endpoint", None)
        key = call_key(agent.model, request.messages, agent.params, request.position, attempt, endpoint)
        if getattr(agent, "transportless", False):  # the estimate's stand-ins: no transport, cache or timing
            self.stats.bot_calls += 1
            return await agent.generate(request), key, False
        use_cache = self.cache is not None and agent.cacheable
        in_process = bool(getattr(agent, "uses_local_llm", False))
        if use_cache:
            assert self.cache is not None
            cached = self.cache.get(key)
            if cached is not None and not _empty_reply(cached):
                self.stats.cache_hits += 1
                answer = Reply.from_json(cached)
                if in_process:  # keeps its place in the runtime's sequence, replayed before the next call made
                    async with local_turn().hold():
                        unreplayed_hits(agent.model).append((agent, request, answer.text))
                return answer, key, True
        remote = agent.cacheable and not getattr(agent, "is_local", False)
        # an in-process model answers one call at a time, in an order fixed by the program
        # (coopeval.agents.turn); every other call takes a place under the job's concurrency cap
        gate: AbstractAsyncContextManager[Any] = local_turn().hold() if in_process else self.semaphore
        async with gate:
            if in_process:
                await self._replay_cache_hits(agent.model)
            started = time.perf_counter()
            limit = self._limit(agent) if remote else None
            if remote and self.provider_slots is not None:
                async with self.provider_slots.slot():
                    reply = await generate_with_retry(agent, request, self.retry_policy, limit=limit, tally=tally)
            else:
                reply = await generate_with_retry(agent, request, self.retry_policy, limit=limit, tally=tally)
            if not reply.latency_s:
                reply = Reply(**{**reply.to_json(), "latency_s": time.perf_counter() - started})
        if agent.cacheable:
            self.stats.calls_made += 1
        else:
            self.stats.bot_calls += 1
        self.stats.cost_usd += reply.cost_usd
        self.stats.reasoning_tokens += reply.reasoning_tokens
        if use_cache:
            assert self.cache is not None
            self.cache.set(key, reply.to_json())
        if self.max_usd and self.stats.cost_usd > self.max_usd:
            raise BudgetExceededError(
                f"this job spent ${self.stats.cost_usd:.4f} on model calls, more than max_usd = {self.max_usd}; "
                "raise max_usd in the config to continue (answers so far are cached)"
            )
        return reply, key, False

    async def _replay_cache_hits(self, model: str) -> None:
        """Send again, in order, the calls of in-process ``model`` answered from the cache since
        its runtime last answered one, discarding their texts, so the runtime reaches the state
        an uninterrupted run had (:mod:`coopeval.agents.turn`). Called holding the turn. A replay
        that fails or gives another text than the cached one loses nothing (the cached answer
        stands) and is counted; the first of those prints one line."""
        pending = unreplayed_hits(model)
        while pending:
            agent, request, text = pending.pop(0)
            try:
                replayed = await generate_with_retry(agent, request, self.retry_policy, tally=CallTally())
            except Exception as exc:  # the cached answer stands; only the runtime's state may differ
                replayed = Reply(text=f"<replay failed: {exc}>")
            self.stats.replayed += 1
            if replayed.text != text:
                self.stats.replay_mismatches += 1
                if self.stats.replay_mismatches == 1:
                    print(
                        f"coopeval: a call of {model} answered from the cache gave another text when "
                        "sent again to rebuild the runtime's state after a resume; the texts after it may "
                        "differ from an uninterrupted run's (docs/providers.md#reproducible-texts)",
                        file=sys.stderr,
                        flush=True,
                    )


def _structured_columns(agent: Agent, answer_format: AnswerFormat) -> dict[str, str]:
    """``structured_output`` (the mode) and ``structured_field`` (the request field that carried
    the constraint, ``none`` if none did) of one call; bots and mocks send none."""
    constraint = getattr(agent, "structured_constraint", None)
    if constraint is None:
        return {"structured_output": str(getattr(agent, "structured_output", "none")), "structured_field": "none"}
    mode, field = constraint(answer_format)
    return {"structured_output": mode, "structured_field": field}


def _empty_reply(cached: Mapping[str, Any]) -> bool:
    """Whether a cached value is an empty provider reply (no text, reasoning or completion
    tokens) stored before such replies were refused: it is asked again, never replayed."""
    return not cached.get("text") and not cached.get("reasoning") and not cached.get("completion_tokens")


def _max_tokens(agent: Agent) -> int | None:
    """The ``max_tokens`` the agent sends, named in the re-ask of a cut-off answer (None: unset)."""
    value = agent.params.get("max_tokens")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def _reasoning_cap(agent: Agent) -> int | None:
    """The embedded model's CoT reasoning cap (its grammar's ``max_reasoning_chars``), else None."""
    if not getattr(agent, "uses_local_llm", False) or agent.style != "CoT":
        return None
    value = agent.params.get("max_reasoning_chars")
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def original_messages_body(body: str) -> tuple[dict[str, str], ...]:
    """The original prompt without the style instruction, as the re-ask's first part."""
    return ({"role": "user", "content": body},)
