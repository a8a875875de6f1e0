"""litellm glue of the local provider: :class:`LocalLlamaCpp`, the handler of ``local/<name>``.

Importing this module imports litellm; llama.cpp (``xllamacpp``) is imported when a model is
first loaded. Only :func:`coopeval.agents.local.register_local_provider` imports this module.

Behaviour
---------
* One :class:`~coopeval.agents.local.model.LocalRuntime` per model per process, created on first
  use from the weights of :func:`~coopeval.agents.local.encoding.encoded_model` (the packaged
  Q4_1 file re-encoded once as Q8_0), with ``n_ctx`` ``$COOPEVAL_LLAMA_CTX``, ``n_threads``
  ``$COOPEVAL_LLAMA_THREADS`` (capped at the usable CPUs) and the prompt cache
  ``$COOPEVAL_LLAMA_CACHE_MIB``; closed at interpreter exit.
* Calls block a daemon thread each while the runtime's own loop evaluates (a job stopped
  mid-call exits at once, abandoning the call); the decision loop sends a job's calls one at a time in an order fixed by the
  program (:mod:`coopeval.agents.turn`), so the runtime's sequence of requests, and with prompt
  reuse its texts, do not depend on timing.
* Passed through: ``temperature``, ``top_p``, ``top_k``, ``min_p``, ``max_tokens``, ``seed``,
  ``stop``, ``repeat_penalty``, ``grammar`` (GBNF text), ``response_format`` (OpenAI
  ``json_schema`` or ``json_object``; dropped when a grammar is given) and ``cache_prompt``
  (``False``: evaluate the whole prompt, the same text whatever came before).
* The reply's ``system_fingerprint`` is ``local/<name>@<file>@<encoding>:<sha256[:16]>``: which
  weights answered, recorded in ``llm_calls.model_resolved``.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import threading
import time
from typing import Any

import litellm
from litellm.llms.custom_llm import CustomLLM

from coopeval.agents.local.catalogue import (
    LOCAL_PREFIX,
    cache_mib,
    gpu_layers,
    n_ctx,
    n_threads,
    resolve_local_model,
)
from coopeval.agents.local.encoding import EncodedModel, encoded_model
from coopeval.agents.local.errors import LocalProviderError
from coopeval.agents.local.model import LocalRuntime, check_cpu
from coopeval.agents.local.prices import register_zero_cost

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
        "cache_prompt",
    }
)
"""Completion parameters handed to the runtime; any other parameter is dropped."""


class LocalLlamaCpp(CustomLLM):
    """litellm handler serving ``local/<name>`` from an in-process llama.cpp runtime.

    ``last_stats`` describes the latest call of this process: ``wall_s`` (seconds inside
    llama.cpp), ``cached_prompt_tokens`` (prompt tokens taken from the KV or prompt cache),
    ``evaluated_prompt_tokens``, ``prompt_ms`` and ``decode_ms`` (llama.cpp's timings).
    """

    def __init__(self) -> None:
        super().__init__()
        self._runtimes: dict[str, tuple[LocalRuntime, EncodedModel]] = {}
        self._lock = threading.Lock()
        self.last_stats: dict[str, float] = {}
        self._in_flight = 0
        atexit.register(self.close)

    def runtime(self, name: str) -> tuple[LocalRuntime, EncodedModel]:
        """The runtime of ``local/<name>`` and its weights, loaded on first use.

        Raises
        ------
        LocalModelMissingError, LocalModelFileError
            Weights not installed; a file that is not GGUF or does not fit; a CPU without AVX2.
        """
        with self._lock:
            if name not in self._runtimes:
                check_cpu()
                source, shipped = resolve_local_model(name)
                weights = encoded_model(source, shipped)
                runtime = LocalRuntime(weights.path, n_ctx(), n_threads(), cache_mib(), gpu_layers())
                self._runtimes[name] = (runtime, weights)
                register_zero_cost(f"{LOCAL_PREFIX}{name}")
            return self._runtimes[name]

    def completion(self, *args: Any, **kwargs: Any) -> Any:
        """litellm's synchronous entry."""
        return self._complete(*args, **kwargs)

    async def acompletion(self, *args: Any, **kwargs: Any) -> Any:
        """litellm's asynchronous entry: :meth:`_complete` on a daemon thread of its own.

        Not on asyncio's default executor: ``asyncio.run`` joins that executor's threads when it
        ends, so a job stopped (Ctrl-C, SIGTERM) while llama.cpp computes would wait for the call
        to finish (tens of seconds for a long CoT answer). A daemon thread is abandoned with its
        call; the answer was never given, so nothing is lost, and the rerun asks it again.
        """
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[Any] = loop.create_future()

        def settle(result: Any, error: BaseException | None) -> None:
            if answer.done():
                return
            if error is not None:
                answer.set_exception(error)
            else:
                answer.set_result(result)

        def work() -> None:
            result, error = None, None
            try:
                result = self._complete(*args, **kwargs)
            except Exception as exc:
                error = exc
            except BaseException as exc:  # not for a future: named instead
                error = LocalProviderError(f"the embedded runtime's call ended with {exc!r}")
            finally:
                with self._lock:
                    self._in_flight -= 1
            with contextlib.suppress(RuntimeError):  # the loop has closed: the job is stopping
                loop.call_soon_threadsafe(settle, result, error)

        with self._lock:
            self._in_flight += 1
        threading.Thread(target=work, name="coopeval-local-call", daemon=True).start()
        return await answer

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
        """One chat completion; returns a ``litellm.ModelResponse``.

        Raises
        ------
        LocalContextWindowError
            If prompt plus ``max_tokens`` exceed the context window.
        GrammarError, LocalModelMissingError, LocalModelFileError
            Invalid GBNF grammar; weights not installed or unusable.
        """
        name = model.removeprefix(LOCAL_PREFIX)
        request: dict[str, Any] = {k: v for k, v in optional_params.items() if k in PASS_THROUGH}
        if "grammar" in request:
            request.pop("response_format", None)
        request["messages"] = messages
        runtime, weights = self.runtime(name)
        started = time.perf_counter()
        out = runtime.chat(request)
        timings = out.pop("timings", None) or {}
        self.last_stats = {
            "wall_s": time.perf_counter() - started,
            "cached_prompt_tokens": float(timings.get("cache_n", 0)),
            "evaluated_prompt_tokens": float(timings.get("prompt_n", 0)),
            "prompt_ms": float(timings.get("prompt_ms", 0.0)),
            "decode_ms": float(timings.get("predicted_ms", 0.0)),
        }
        out["model"] = f"{LOCAL_PREFIX}{name}"  # litellm's cost lookup finds the zero price
        out["system_fingerprint"] = f"{LOCAL_PREFIX}{name}@{weights.label}"
        return litellm.ModelResponse(**out)

    def close(self) -> None:
        """Close every loaded runtime (registered with :mod:`atexit`); with a call still in
        flight (a job stopped mid-call) the runtimes are left to the process's end, since freeing
        one beneath llama.cpp would crash it."""
        with self._lock:
            if self._in_flight:
                return
            for runtime, _ in self._runtimes.values():
                runtime.close()
            self._runtimes.clear()
