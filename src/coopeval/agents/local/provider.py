"""litellm glue of the local provider: :class:`LocalLlamaCpp`, the handler of ``local/<name>``.

Importing this module imports litellm and llama.cpp; only
:func:`coopeval.agents.local.register_local_provider` does (lazily).

Behaviour
---------
* One :class:`~coopeval.agents.local.model.CanonicalLlama` per model per process, created on
  first use (``n_ctx`` :data:`~coopeval.agents.local.catalogue.DEFAULT_N_CTX`, ``n_threads`` =
  ``$COOPEVAL_LLAMA_THREADS`` or 2), closed at interpreter exit (avoids the ``Llama.__del__``
  ``TypeError``).
* One thread runs every llama.cpp call of the process (a single-worker executor; a llama.cpp
  context is not thread-safe either). This build uses OpenMP, which gives each calling thread its
  own team of worker threads, and an idle team keeps spinning for a while after its last
  parallel region. Measured: when ``asyncio.to_thread`` spread calls over several pool threads,
  the spinning teams took the CPU from the working one and a generated token cost 40 ms instead
  of 14 ms (2 cores).
* Passed through: ``temperature``, ``top_p``, ``top_k``, ``min_p``, ``max_tokens``, ``seed``,
  ``stop``, ``repeat_penalty``, ``grammar`` (GBNF text or ``LlamaGrammar``) and
  ``response_format`` (OpenAI ``json_schema`` is translated to llama-cpp's ``json_object`` +
  ``schema`` form; ignored when a grammar is given). The extra parameter ``cache_prompt=False``
  forces a full prompt re-evaluation (benchmarks only).
* GBNF text is validated once per distinct grammar with llama.cpp's own parser: an invalid
  grammar raises :class:`~coopeval.agents.local.errors.GrammarError` instead of crashing the
  process.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import functools
import threading
import time
from typing import Any, cast

import litellm
from litellm.llms.custom_llm import CustomLLM
from llama_cpp.llama_grammar import LlamaGrammar

from coopeval.agents.local.catalogue import (
    DEFAULT_N_CTX,
    LOCAL_PREFIX,
    local_model_path,
    n_snapshots,
    n_threads,
)
from coopeval.agents.local.errors import LocalContextWindowError
from coopeval.agents.local.model import CanonicalLlama, check_grammar, llama_grammar

__all__ = ["PASS_THROUGH", "LocalLlamaCpp"]

PASS_THROUGH = frozenset(
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
"""Completion parameters handed to llama-cpp-python; any other parameter is dropped."""


class LocalLlamaCpp(CustomLLM):
    """litellm handler serving ``local/<name>`` from an in-process ``llama_cpp.Llama``.

    ``last_stats`` describes the latest call: ``wall_s`` (seconds inside llama.cpp),
    ``reused_prompt_tokens`` and ``restored_snapshot`` (0.0 or 1.0).
    """

    def __init__(self) -> None:
        super().__init__()
        self._llms: dict[str, CanonicalLlama] = {}
        self._lock = threading.Lock()
        self._executor = concurrent.futures.ThreadPoolExecutor(
            max_workers=1, thread_name_prefix="llama.cpp"
        )
        self._valid_grammars: set[str] = set()
        self.last_stats: dict[str, float] = {}
        atexit.register(self.close)

    def _llm(self, name: str) -> CanonicalLlama:
        """The model ``local/<name>``, loaded on first use (LocalModelMissingError if absent)."""
        if name not in self._llms:
            self._llms[name] = CanonicalLlama(
                model_path=str(local_model_path(name)),
                n_ctx=DEFAULT_N_CTX,
                n_threads=n_threads(),
                n_threads_batch=n_threads(),
                max_snapshots=n_snapshots(),
                verbose=False,
            )
        return self._llms[name]

    def _grammar(self, llm: CanonicalLlama, text: str) -> LlamaGrammar:
        """The grammar of GBNF ``text``, validated by llama.cpp once per distinct text."""
        if text not in self._valid_grammars:
            check_grammar(llm, text)
            self._valid_grammars.add(text)
        return llama_grammar(text)

    def completion(self, *args: Any, **kwargs: Any) -> Any:
        """litellm's synchronous entry: run :meth:`_complete` on the llama.cpp thread."""
        if threading.current_thread().name.startswith("llama.cpp"):
            return self._complete(*args, **kwargs)
        return self._executor.submit(self._complete, *args, **kwargs).result()

    async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
        """litellm's asynchronous entry: await :meth:`_complete` on the llama.cpp thread."""
        loop = asyncio.get_running_loop()
        call = functools.partial(self._complete, *args, **kwargs)
        return await loop.run_in_executor(self._executor, call)

    def _complete(
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
        """One chat completion (on the llama.cpp thread); returns a ``litellm.ModelResponse``.

        Raises
        ------
        LocalContextWindowError
            If prompt plus ``max_tokens`` exceed the context window.
        GrammarError, LocalModelMissingError
            Invalid GBNF grammar; weights not installed.
        """
        name = model.removeprefix(LOCAL_PREFIX)
        params = {k: v for k, v in optional_params.items() if k in PASS_THROUGH}
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
        out["model"] = f"{LOCAL_PREFIX}{name}"  # else litellm's cost lookup fails noisily
        return litellm.ModelResponse(**out)

    def close(self) -> None:
        """Close every loaded model (registered with :mod:`atexit`)."""
        with self._lock:
            for llm in self._llms.values():
                llm.close()
            self._llms.clear()
