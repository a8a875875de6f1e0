"""The llama.cpp model of the local provider: deterministic prompt-prefix reuse and KV snapshots.

Importing this module imports ``llama_cpp``; only :mod:`coopeval.agents.local.provider` does,
when a ``local/`` model is first registered. Not thread-safe: the provider calls every
instance from its single llama.cpp thread.

Behaviour
---------
* Prompt-prefix reuse: llama-cpp-python keeps the KV cache of the previous call and evaluates
  only the tokens after the longest common prefix. We never reset between calls. Setting
  :attr:`CanonicalLlama.reuse_prompts` to False (the provider's ``cache_prompt=False``) forces a
  full re-evaluation (benchmarks only).
* Seed determinism under prefix reuse. Measured on this build: a token evaluated in a batch of
  one gets slightly different logits (up to ~0.4) from the same token evaluated in a batch of
  two or more (batches of size >= 2 agree bit for bit, whatever their size). Stock
  llama-cpp-python re-evaluates a *single* token when the whole prompt is cached, splits a
  513-token prompt as 512 + 1, and may reuse KV entries of generated tokens (evaluated one by
  one) as prompt. Any of these makes the same seed give a different text depending on the
  previous call. :class:`CanonicalLlama` therefore (a) reuses only KV entries written as
  prompt, (b) always re-evaluates at least two prompt tokens, and (c) never leaves a final
  prompt chunk of one token. Same prompt + same seed + same thread count then gives the same
  text whatever came before (tested in ``tests/agents/test_local_model.py``).
* Prompt snapshots. Consecutive calls often come from different seats (Player 1, Player 2, …)
  whose prompts part early, at the seat line, so the single live KV cache would re-evaluate each
  seat's long mechanism text on every call. After every prompt evaluation the KV entries of the
  prompt (sequence 0, ~23 KB per token) are copied out with ``llama_state_seq_get_data``; the
  latest ``max_snapshots`` (``$COOPEVAL_LLAMA_SNAPSHOTS``, default 8) are kept. A call whose
  prompt shares a longer prefix with a snapshot than with the live cache (by at least
  ``_MIN_SNAPSHOT_GAIN`` tokens) restores that snapshot into an emptied cache first, so its cells
  and positions are exactly those of a fresh evaluation and the determinism guarantee above
  still holds (tested).
* Context window. Stock llama-cpp-python silently shortens ``max_tokens`` when prompt plus
  ``max_tokens`` exceed ``n_ctx`` (an answer then stops early, e.g. at ~4,000 prompt tokens of
  4,096). :meth:`CanonicalLlama.create_completion` remembers the requested ``max_tokens`` and
  :meth:`CanonicalLlama.generate` refuses such a prompt before evaluating anything, with
  :class:`~coopeval.agents.local.errors.LocalContextWindowError` naming the prompt tokens,
  ``max_tokens`` and ``n_ctx``.
* Flash attention stays off: measured ~20 % faster on 1,200-token prompts, but its logits then
  depend on how the prompt was split into batches, and a restored snapshot gave another text than
  a fresh evaluation with the same seed.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Generator, Sequence
from typing import Any

from llama_cpp import Llama, llama_cpp
from llama_cpp.llama_grammar import LlamaGrammar

from coopeval.agents.local.errors import GrammarError, LocalContextWindowError

__all__ = ["CanonicalLlama", "check_grammar", "common_prefix", "llama_grammar"]


def common_prefix(cached: Sequence[int], tokens: list[int], limit: int) -> int:
    """Length of the common prefix of two token sequences, at most ``limit``."""
    n = 0
    for a, b in zip(cached, tokens[: max(0, limit)], strict=False):
        if a != b:
            break
        n += 1
    return n


class CanonicalLlama(Llama):
    """``Llama`` whose prompt tokens are always evaluated in batches of two or more tokens.

    See the module docstring ("Seed determinism under prefix reuse", "Prompt snapshots").
    Extra keyword argument ``max_snapshots`` (default 0: no snapshots). After each call,
    ``last_reused`` is the number of prompt tokens taken from the KV cache and
    ``last_restored`` tells whether a snapshot was restored.
    """

    _MIN_SUFFIX = 2
    _MIN_SNAPSHOT_GAIN = 16  # tokens; below this a restore (a ~ms copy) is not worth it

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.max_snapshots = kwargs.pop("max_snapshots", 0)
        super().__init__(*args, **kwargs)
        self._prompt_len = 0  # leading KV entries written as prompt (batches >= 2)
        self.last_reused = 0  # prompt tokens taken from the KV cache by the latest call
        self.last_restored = False  # whether the latest call restored a snapshot
        self.reuse_prompts = True  # False: evaluate the whole prompt (benchmarks only)
        self._snapshots: list[tuple[tuple[int, ...], Any]] = []  # (prompt, KV bytes)
        self._max_tokens: int | None = None  # max_tokens of the completion being created

    def create_completion(self, prompt: Any, *args: Any, **kwargs: Any) -> Any:
        """``Llama.create_completion``, remembering ``max_tokens`` for :meth:`generate`'s check."""
        budget = kwargs.get("max_tokens", args[1] if len(args) > 1 else 16)
        self._max_tokens = int(budget) if budget is not None and int(budget) > 0 else None
        try:
            return super().create_completion(prompt, *args, **kwargs)
        finally:
            self._max_tokens = None

    def check_context(self, prompt_tokens: int, max_tokens: int | None) -> None:
        """Refuse a prompt whose answer budget would be shortened by the context window.

        Raises
        ------
        LocalContextWindowError
            If ``prompt_tokens + max_tokens > n_ctx`` (llama.cpp would cut ``max_tokens`` to
            ``n_ctx - prompt_tokens`` without saying so).
        """
        n_ctx = self.n_ctx()
        if max_tokens is not None and prompt_tokens + max_tokens > n_ctx:
            raise LocalContextWindowError(
                f"the prompt has {prompt_tokens} tokens and max_tokens = {max_tokens}: together "
                f"more than the context window n_ctx = {n_ctx} of the embedded model (llama.cpp "
                f"would silently cut the answer budget to {max(0, n_ctx - prompt_tokens)} tokens); "
                "shorten the prompt (e.g. a shorter history window) or lower max_tokens "
                "(or max_reasoning_chars for CoT)"
            )

    def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Any:
        """``Llama.generate`` after checking the context window (:meth:`check_context`) and
        choosing how much of the KV cache (or a snapshot) to keep."""
        tokens = list(tokens)
        self.check_context(len(tokens), self._max_tokens)
        keep = 0
        self.last_restored = False
        if kwargs.get("reset", True) and self.reuse_prompts:
            cap = len(tokens) - self._MIN_SUFFIX
            if self.n_tokens > 0:
                keep = common_prefix(
                    self.input_ids[: min(self.n_tokens, self._prompt_len)], tokens, cap
                )
            best = None
            for snapshot in self._snapshots:
                shared = common_prefix(snapshot[0], tokens, cap)
                if shared >= keep + self._MIN_SNAPSHOT_GAIN:
                    best, keep = snapshot, shared
            if best is not None and not self._restore(best):
                keep = 0
        # llama-cpp-python's own prefix matching now finds exactly `keep` tokens
        self.n_tokens = keep
        self.last_reused = keep
        if keep == 0:
            self.reset()  # type: ignore[no-untyped-call]
        self._prompt_len = 0  # until the prompt is fully evaluated
        return self._track(super().generate(tokens, *args, **kwargs), len(tokens))

    def _track(self, inner: Generator[Any, Any, Any], prompt_len: int) -> Any:
        """Relay ``inner``; once the first token arrives the prompt is cached: snapshot it."""
        try:
            token = inner.send(None)
            self._prompt_len = prompt_len  # the whole prompt is in the KV cache now
            self._snapshot(prompt_len)
            while True:
                sent = yield token
                token = inner.send(sent)
        except StopIteration:
            return
        finally:
            inner.close()

    def _snapshot(self, prompt_len: int) -> None:
        """Keep a copy of the KV entries of the prompt just evaluated (sequence 0)."""
        if self.max_snapshots <= 0 or not self.reuse_prompts:
            return
        prompt = tuple(int(t) for t in self.input_ids[:prompt_len])
        self._snapshots = [s for s in self._snapshots if s[0] != prompt]
        size = llama_cpp.llama_state_seq_get_size(self._ctx.ctx, 0)
        buffer = (ctypes.c_uint8 * size)()
        if llama_cpp.llama_state_seq_get_data(self._ctx.ctx, buffer, size, 0) != size:
            return
        self._snapshots.append((prompt, buffer))
        del self._snapshots[: -self.max_snapshots]

    def _restore(self, snapshot: tuple[tuple[int, ...], Any]) -> bool:
        """Empty the KV cache and load ``snapshot`` into it; False if llama.cpp refuses."""
        prompt, buffer = snapshot
        self._ctx.kv_cache_clear()
        self.n_tokens = 0
        self._prompt_len = 0
        if llama_cpp.llama_state_seq_set_data(self._ctx.ctx, buffer, len(buffer), 0) == 0:
            self._ctx.kv_cache_clear()
            return False
        self.input_ids[: len(prompt)] = prompt
        self.n_tokens = self._prompt_len = len(prompt)
        self.last_restored = True
        return True

    def eval(self, tokens: Any) -> None:
        """``Llama.eval``, but a final chunk of one token becomes a chunk of two."""
        tokens = list(tokens)
        n_batch = self.n_batch
        if len(tokens) > n_batch and len(tokens) % n_batch == 1:
            cut = len(tokens) - 2  # last chunk of two tokens instead of one
            for start in range(0, cut, n_batch):
                super().eval(tokens[start : min(start + n_batch, cut)])
            super().eval(tokens[cut:])
            return
        super().eval(tokens)


def check_grammar(llm: Llama, text: str) -> None:
    """Parse GBNF ``text`` with llama.cpp's own parser (rule ``root``).

    Raises
    ------
    GrammarError
        If llama.cpp cannot parse it (instead of crashing the process later).
    """
    sampler = llama_cpp.llama_sampler_init_grammar(llm._model.vocab, text.encode("utf-8"), b"root")
    if not sampler:
        raise GrammarError("llama.cpp could not parse the GBNF grammar")
    llama_cpp.llama_sampler_free(sampler)


@functools.lru_cache(maxsize=64)
def llama_grammar(text: str) -> LlamaGrammar:
    """The ``LlamaGrammar`` of GBNF ``text`` (cached; call :func:`check_grammar` first)."""
    return LlamaGrammar.from_string(text, verbose=False)
