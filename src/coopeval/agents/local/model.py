"""One embedded llama.cpp runtime in process: :class:`LocalRuntime` around ``xllamacpp.Server``.

Importing this module imports ``xllamacpp`` (a prebuilt llama.cpp wheel, no compiler); only
:mod:`coopeval.agents.local.provider` does, when a ``local/`` model is first called, and only
after :func:`check_cpu` has passed (the wheel's kernels need AVX2 on x86-64; without it the
import would crash inside native code).

Behaviour
---------
* ``xllamacpp.Server`` runs llama.cpp's server loop on its own thread and answers OpenAI-shaped
  requests through ``handle_chat_completions`` (no HTTP hop). It is thread-safe: callers block
  in their own threads while the loop evaluates; one slot (``n_parallel = 1``) serves requests
  one at a time in arrival order.
* Prompt reuse: the slot keeps the KV cache of its latest prompt and evaluates only the tokens
  after the longest common prefix; the host-memory prompt cache (``cache_ram_mib``,
  ``$COOPEVAL_LLAMA_CACHE_MIB``) keeps the KV cache of earlier prompts and restores the one
  sharing the longest prefix (seats of one game part at the seat line). ``usage.
  prompt_tokens_details.cached_tokens`` says how many prompt tokens came from either.
* Determinism: the same requests in the same order from a fresh runtime give the same texts.
  With reuse, a seeded request's text can depend on what came before (a reused prefix changes
  how the remaining tokens are batched, which moves logits in their last bits); a request sent
  with ``cache_prompt = False`` is evaluated in full and gives the same text whatever came before.
  A rerun reads every answer from the response cache and is identical (docs/measurements.md#
  embedded-runtime gives what reuse saves).
* Errors come back as ``{"error": {...}}``: a prompt longer than the window raises
  :class:`~coopeval.agents.local.errors.LocalContextWindowError` with the project's message, a
  grammar llama.cpp cannot parse :class:`~coopeval.agents.local.errors.GrammarError`, anything
  else :class:`~coopeval.agents.local.errors.LocalProviderError`.
"""

from __future__ import annotations

import json
import platform
import threading
import urllib.request
from pathlib import Path
from typing import Any

from coopeval.agents.local.errors import (
    GrammarError,
    LocalContextWindowError,
    LocalModelFileError,
    LocalProviderError,
)

__all__ = ["LocalRuntime", "check_cpu", "context_window_message"]


def check_cpu() -> None:
    """Refuse, in one line, a CPU the prebuilt runtime cannot run on (x86-64 without AVX2).

    Raises
    ------
    LocalModelFileError
        On Linux x86-64 when ``/proc/cpuinfo`` lists no ``avx2`` flag.
    """
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            flags = next((line for line in handle if line.startswith("flags")), "")
    except OSError:
        return
    if flags and "avx2" not in flags.split():
        raise LocalModelFileError(
            "this CPU has no AVX2, which the prebuilt llama.cpp runtime (xllamacpp) needs; run the "
            "embedded model on a CPU with AVX2 (x86-64 since 2013), or use an API model"
        )


def context_window_message(prompt_tokens: int, max_tokens: int | None, n_ctx: int) -> str:
    """The project's message for a request that does not fit the context window ``n_ctx``."""
    budget = f" and max_tokens = {max_tokens}" if max_tokens else ""
    return (
        f"the prompt has {prompt_tokens} tokens{budget}: more than the context window n_ctx = "
        f"{n_ctx} of the embedded model; shorten the prompt (e.g. a shorter history window or "
        "log_cap), lower max_tokens (or max_reasoning_chars for CoT), or raise COOPEVAL_LLAMA_CTX"
    )


class LocalRuntime:
    """One GGUF model served in process by ``xllamacpp.Server`` (see the module docstring).

    Parameters
    ----------
    path:
        The GGUF file.
    n_ctx:
        Context window of a request, tokens (prompt plus ``max_tokens``).
    n_threads:
        Compute threads for prompt evaluation and decoding.
    cache_mib:
        Host-memory prompt cache, MiB (0: only the slot's own KV cache is reused).
    gpu_layers:
        Layers offloaded to a GPU (0 on the CPU wheel).
    """

    def __init__(self, path: Path, n_ctx: int, n_threads: int, cache_mib: int, gpu_layers: int = 0) -> None:
        import xllamacpp

        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        params.n_ctx = n_ctx
        params.n_parallel = 1
        params.cpuparams.n_threads = n_threads
        params.cpuparams_batch.n_threads = n_threads
        params.cache_ram_mib = cache_mib
        params.n_gpu_layers = gpu_layers
        params.warmup = False
        params.verbosity = 0  # llama.cpp logs every request at INFO; errors come back in the reply
        self.n_ctx = n_ctx
        self.path = path
        try:
            self._server: Any = xllamacpp.Server(params)
        except Exception as exc:  # the wheel raises RuntimeError/ValueError on a bad file
            raise LocalModelFileError(
                f"{path}: llama.cpp could not load the model ({exc}); the file may be truncated or damaged: "
                "download it again, or convert the model with llama.cpp's convert_hf_to_gguf.py"
            ) from exc
        self._lock = threading.Lock()

    def chat(self, request: dict[str, Any]) -> dict[str, Any]:
        """One OpenAI chat completion (``messages``, ``max_tokens``, ``seed``, ``grammar`` or
        ``response_format``, sampling parameters, ``cache_prompt``); the OpenAI-shaped reply
        with llama.cpp's ``timings``.

        Raises
        ------
        LocalContextWindowError
            The prompt plus ``max_tokens`` exceed :attr:`n_ctx` (checked by llama.cpp for the
            prompt, here for the answer budget: llama.cpp would end the answer at the window).
        GrammarError
            llama.cpp cannot parse the request's GBNF grammar.
        LocalProviderError
            Any other error the runtime reports.
        """
        server = self._server
        if server is None:
            raise LocalProviderError(f"{self.path}: the runtime was closed")
        reply: dict[str, Any] = server.handle_chat_completions(request)
        error = reply.get("error") if isinstance(reply, dict) else None
        if error is not None:
            raise _runtime_error(error, request.get("max_tokens"), self.n_ctx)
        usage = reply.get("usage") or {}
        budget = request.get("max_tokens")
        prompt_tokens = int(usage.get("prompt_tokens") or 0)
        if budget and prompt_tokens + int(budget) > self.n_ctx:
            raise LocalContextWindowError(context_window_message(prompt_tokens, int(budget), self.n_ctx))
        return reply

    def prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        """Prompt tokens of the chat ``messages`` as :meth:`chat` would evaluate them, without
        evaluating them: the model's chat template applied and the text tokenized with its
        special tokens (the ``/apply-template`` and ``/tokenize`` routes of llama.cpp's server,
        which ``xllamacpp.Server`` listens on at a loopback address). Equals the reply's
        ``usage.prompt_tokens`` (every call of the default main job's store, docs/estimate.md).

        Raises
        ------
        LocalProviderError
            The runtime was closed or a route answered with an error.
        """
        server = self._server
        if server is None:
            raise LocalProviderError(f"{self.path}: the runtime was closed")
        address = str(server.listening_address)
        templated = _post(address, "/apply-template", {"messages": messages})["prompt"]
        tokens = _post(address, "/tokenize", {"content": templated, "add_special": True, "parse_special": True})["tokens"]
        return len(tokens)

    def grammar_error(self, grammar: str) -> str | None:
        """Why llama.cpp's GBNF parser rejects ``grammar`` (start symbol ``root``), or ``None``
        when it parses: one token is sampled under it from an empty prompt."""
        try:
            self.chat({"messages": [{"role": "user", "content": ""}], "max_tokens": 1, "grammar": grammar})
        except GrammarError as exc:
            return str(exc)
        return None

    def close(self) -> None:
        """Stop the server loop and free the model (idempotent)."""
        with self._lock:
            server, self._server = self._server, None
        del server


_LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))
"""An opener that ignores ``$http_proxy``: the runtime listens on this machine only."""


def _post(address: str, route: str, body: dict[str, Any]) -> dict[str, Any]:
    """JSON ``body`` posted to ``route`` of the runtime's loopback listener; its JSON answer."""
    request = urllib.request.Request(address + route, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    try:
        with _LOOPBACK.open(request, timeout=60) as answer:
            reply: dict[str, Any] = json.loads(answer.read())
    except OSError as exc:  # urllib's HTTPError and URLError are OSErrors
        raise LocalProviderError(f"the embedded runtime's {route} route failed: {exc}") from exc
    return reply


def _runtime_error(error: Any, max_tokens: Any, n_ctx: int) -> LocalProviderError:
    """The project's exception for the runtime's ``{"error": …}`` object."""
    fields = error if isinstance(error, dict) else {"message": str(error)}
    message = str(fields.get("message", ""))
    if fields.get("type") == "exceed_context_size_error":
        prompt = int(fields.get("n_prompt_tokens") or 0)
        return LocalContextWindowError(context_window_message(prompt, max_tokens, int(fields.get("n_ctx") or n_ctx)))
    if "grammar" in message:
        return GrammarError(f"llama.cpp could not parse the GBNF grammar ({message})")
    return LocalProviderError(f"the embedded runtime refused the request: {message}")
