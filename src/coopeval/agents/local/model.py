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
  The decision loop therefore sends a job's requests in an order fixed by the program
  (:mod:`coopeval.agents.turn`), and the compute threads change the texts too (one per job in
  the workflow; docs/providers.md#reproducible-texts). A rerun reads every answer from the response cache and is identical (docs/measurements.md#
  embedded-runtime gives what reuse saves).
* The prompt is counted before anything is generated (:meth:`LocalRuntime.prompt_token_ids`, the
  model's own template and tokenizer): a prompt whose tokens plus ``max_tokens`` exceed ``n_ctx``
  is refused at once, naming ``n_ctx - P``, instead of after a whole answer was decoded.
* Text is never read as a control token: the template's own markers (``<|im_start|>``…) are
  control tokens, but a message's text that spells one (a player's gossip message, a person's
  field) is tokenized as the text it is (:meth:`LocalRuntime.prompt_token_ids`), for every model:
  such a prompt is sent as token ids to llama.cpp's completion route. A prompt whose messages
  spell no control token (every prompt of the default run) goes through the chat route as before.
* The loopback listener that ``xllamacpp.Server`` opens (llama.cpp's HTTP API, used here for
  ``/tokenize`` and ``/apply-template``) requires a per-runtime random API key that only this
  object holds, and allows no cross-origin caller: another process or a web page gets 401.
* Errors come back as ``{"error": {...}}``: a prompt longer than the window raises
  :class:`~coopeval.agents.local.errors.LocalContextWindowError` with the project's message, a
  grammar llama.cpp cannot parse :class:`~coopeval.agents.local.errors.GrammarError`, anything
  else :class:`~coopeval.agents.local.errors.LocalProviderError`.
"""

from __future__ import annotations

import json
import platform
import secrets
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

__all__ = ["LocalRuntime", "check_cpu", "context_window_message", "cpu_info"]


def cpu_info() -> tuple[str, frozenset[str]]:
    """(model name, instruction-set flags) of the first CPU in ``/proc/cpuinfo``; ``("",
    frozenset())`` where the file is missing or unreadable (not Linux)."""
    name, flags = "", frozenset[str]()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and not name:
                    name = value.strip()
                elif key.strip() == "flags" and not flags:
                    flags = frozenset(value.split())
    except OSError:
        pass
    return name, flags


def check_cpu() -> None:
    """Refuse, in one line, a CPU the prebuilt runtime cannot run on (x86-64 without AVX2).

    Raises
    ------
    LocalModelFileError
        On Linux x86-64 when ``/proc/cpuinfo`` lists no ``avx2`` flag.
    """
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return
    _, flags = cpu_info()
    if flags and "avx2" not in flags:
        raise LocalModelFileError(
            "this CPU has no AVX2, which the prebuilt llama.cpp runtime (xllamacpp) needs; run the "
            "embedded model on a CPU with AVX2 (x86-64 since 2013), or use an API model"
        )


def context_window_message(prompt_tokens: int, max_tokens: int | None, n_ctx: int) -> str:
    """The project's message for a request that does not fit the context window ``n_ctx``: the
    prompt's tokens P, ``max_tokens``, ``n_ctx`` and what is left for the answer (``n_ctx - P``)."""
    budget = f" and max_tokens = {max_tokens}" if max_tokens else ""
    room = n_ctx - prompt_tokens
    left = f"n_ctx - {prompt_tokens} = {room} tokens are left for the answer" if room > 0 else "no token is left for the answer"
    return (
        f"the prompt has {prompt_tokens} tokens{budget}: more than the context window n_ctx = "
        f"{n_ctx} of the embedded model ({left}); shorten the prompt (e.g. a shorter history window or "
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
        self._key = secrets.token_hex(32)  # the loopback listener answers only this object
        params.api_keys = [self._key]
        params.cors_origins = "http://127.0.0.1"  # no browser origin of another page is allowed
        params.cors_origins_explicit = True
        params.cors_credentials = False
        self.n_ctx = n_ctx
        self.path = path
        self._parts: dict[str, list[str | int]] = {}  # template text → its text runs and control tokens
        self._control: dict[str, bool] = {}  # a token's text → whether it is a control token
        self._affixes: tuple[list[int], list[int]] | None = None
        try:
            self._server: Any = xllamacpp.Server(params)
        except Exception as exc:  # the wheel raises RuntimeError/ValueError on a bad file
            raise LocalModelFileError(
                f"{path}: llama.cpp could not load the model ({exc}); check the file with gguf-dump (a re-encoded file "
                "in COOPEVAL_MODEL_CACHE_DIR: delete it, it is made again) or convert the model again with llama.cpp's "
                "convert_hf_to_gguf.py"
            ) from exc
        self._lock = threading.Lock()

    def chat(self, request: dict[str, Any]) -> dict[str, Any]:
        """One OpenAI chat completion (``messages``, ``max_tokens``, ``seed``, ``grammar`` or
        ``response_format``, sampling parameters, ``cache_prompt``); the OpenAI-shaped reply
        with llama.cpp's ``timings``.

        The prompt is counted first (:meth:`prompt_token_ids`); a prompt whose messages spell a
        control token is sent as those token ids (llama.cpp's completion route, the same sampling
        parameters and grammar; the reply is given the chat route's shape).

        Raises
        ------
        LocalContextWindowError
            The prompt's tokens plus ``max_tokens`` exceed :attr:`n_ctx`, before any token is
            generated (the message names ``n_ctx - P``).
        GrammarError
            llama.cpp cannot parse the request's GBNF grammar.
        LocalProviderError
            Any other error the runtime reports.
        """
        server = self._live()
        ids, apart = self._prompt(list(request.get("messages") or []))
        budget = request.get("max_tokens")
        if len(ids) + int(budget or 0) > self.n_ctx or len(ids) >= self.n_ctx:
            raise LocalContextWindowError(context_window_message(len(ids), int(budget) if budget else None, self.n_ctx))
        if apart:
            reply = _as_chat(server.handle_completions(_completion_request(request, ids)))
        else:
            reply = server.handle_chat_completions(request)
        error = reply.get("error") if isinstance(reply, dict) else None
        if error is not None:
            raise _runtime_error(error, budget, self.n_ctx)
        return reply

    def prompt_tokens(self, messages: list[dict[str, Any]]) -> int:
        """Prompt tokens of the chat ``messages`` as :meth:`chat` evaluates them, without
        evaluating them (the length of :meth:`prompt_token_ids`). Equals the reply's
        ``usage.prompt_tokens`` (every call of the default main job's store, docs/estimate.md).

        Raises
        ------
        LocalProviderError
            The runtime was closed or a route answered with an error.
        """
        return len(self._prompt(messages)[0])

    def prompt_token_ids(self, messages: list[dict[str, Any]]) -> list[int]:
        """The token ids :meth:`chat` evaluates for ``messages``: the model's chat template
        applied (llama.cpp's ``/apply-template``), its own markers as control tokens, every
        message's text as text.

        When no message's text spells a control token (its tokens are the same with and without
        special-token parsing), these are the tokens of the whole templated prompt with special
        tokens parsed, as the chat route evaluates it. Otherwise the templated prompt is cut at
        the template's own control tokens (found in the text around the messages), and each run
        of text between them, message text included, is tokenized with no special-token parsing:
        for a prompt with no such text this gives the same tokens (llama.cpp tokenizes exactly
        these runs), and a message that spells ``<|im_end|>`` stays ordinary text tokens.

        Raises
        ------
        LocalProviderError
            The runtime was closed, a route answered with an error, or the template changes a
            message's text (so the message cannot be found in the prompt to keep it apart).
        """
        return self._prompt(messages)[0]

    def _live(self) -> Any:
        server = self._server
        if server is None:
            raise LocalProviderError(f"{self.path}: the runtime was closed")
        return server

    def _prompt(self, messages: list[dict[str, Any]]) -> tuple[list[int], bool]:
        """(token ids, whether some message spells a control token) of the templated ``messages``."""
        templated = str(self._route("/apply-template", {"messages": messages})["prompt"])
        texts = [str(m.get("content") or "") for m in messages]
        joined = "\n".join(texts)
        if self._tokenize(joined, special=True) == self._tokenize(joined, special=False):
            return self._tokenize(templated, special=True, add_special=True), False
        return self._prompt_apart(templated, texts), True

    def _prompt_apart(self, templated: str, texts: list[str]) -> list[int]:
        """Token ids of ``templated`` cut at the template's control tokens (outside the message
        ``texts``), each run of text between them tokenized with no special-token parsing."""
        spans: list[tuple[int, int]] = []
        cursor = 0
        for text in filter(None, texts):
            at = templated.find(text, cursor)
            if at < 0:
                raise LocalProviderError(
                    f"{self.path}: the model's chat template changes a message's text, so text that spells one of its "
                    "special tokens cannot be kept apart from the template's own; remove the special token from the text"
                )
            spans.append((at, at + len(text)))
            cursor = at + len(text)
        prefix, suffix = self._special_affixes()
        ids, run, position = list(prefix), "", 0
        for begin, end in [*spans, (len(templated), len(templated))]:
            for part in self._template_parts(templated[position:begin]):
                if isinstance(part, int):  # a control token of the template: the run before it ends
                    ids += (self._tokenize(run, special=False) if run else []) + [part]
                    run = ""
                else:
                    run += part
            run += templated[begin:end]  # the message's text joins the run, never parsed for markers
            position = end
        return ids + (self._tokenize(run, special=False) if run else []) + suffix

    def _template_parts(self, text: str) -> list[str | int]:
        """``text`` (template text only) cut at its control tokens: text runs and token ids."""
        if text not in self._parts:
            parts: list[str | int] = []
            position = 0
            for token in self._route("/tokenize", {"content": text, "add_special": False, "parse_special": True, "with_pieces": True})["tokens"]:
                piece = token.get("piece")
                if not isinstance(piece, str) or not self._is_control(piece):
                    continue  # an ordinary token: its text stays in the run
                at = text.find(piece, position)
                if at < 0:
                    continue
                parts += [text[position:at], int(token["id"])]
                position = at + len(piece)
            self._parts[text] = [*parts, text[position:]]
        return self._parts[text]

    def _is_control(self, piece: str) -> bool:
        """Whether ``piece`` reads differently with special-token parsing (a control token's text)."""
        if piece not in self._control:
            self._control[piece] = bool(piece) and self._tokenize(piece, special=True) != self._tokenize(piece, special=False)
        return self._control[piece]

    def _special_affixes(self) -> tuple[list[int], list[int]]:
        """The tokens the model adds before and after a prompt (BOS, EOS), as tokenizing adds them."""
        if self._affixes is None:
            bare = self._tokenize("x", special=False)
            full = self._tokenize("x", special=True, add_special=True)
            at = next(i for i in range(len(full) - len(bare) + 1) if full[i : i + len(bare)] == bare)
            self._affixes = (full[:at], full[at + len(bare) :])
        return self._affixes

    def _tokenize(self, text: str, special: bool, add_special: bool = False) -> list[int]:
        tokens = self._route("/tokenize", {"content": text, "add_special": add_special, "parse_special": special})["tokens"]
        return [int(t) for t in tokens]

    def _route(self, route: str, body: dict[str, Any]) -> dict[str, Any]:
        return _post(str(self._live().listening_address), route, body, self._key)

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


def _post(address: str, route: str, body: dict[str, Any], key: str) -> dict[str, Any]:
    """JSON ``body`` posted to ``route`` of the runtime's loopback listener with its API ``key``;
    its JSON answer."""
    headers = {"Content-Type": "application/json", "Authorization": f"Bearer {key}"}
    request = urllib.request.Request(address + route, data=json.dumps(body).encode(), headers=headers)
    try:
        with _LOOPBACK.open(request, timeout=60) as answer:
            reply: dict[str, Any] = json.loads(answer.read())
    except OSError as exc:  # urllib's HTTPError and URLError are OSErrors
        raise LocalProviderError(f"the embedded runtime's {route} route failed: {exc}") from exc
    return reply


def _completion_request(request: dict[str, Any], ids: list[int]) -> dict[str, Any]:
    """The completion-route request of chat ``request`` with its prompt as token ``ids``: the same
    sampling parameters, seed, ``cache_prompt`` and grammar (a ``response_format`` schema as
    llama.cpp's ``json_schema``)."""
    out = {k: v for k, v in request.items() if k not in ("messages", "response_format")}
    response_format = request.get("response_format")
    if isinstance(response_format, dict) and "grammar" not in out:
        schema = (response_format.get("json_schema") or {}).get("schema")
        out["json_schema"] = schema if isinstance(schema, dict) else {"type": "object"}
    out["prompt"] = ids
    return out


def _as_chat(reply: Any) -> Any:
    """A completion-route reply in the chat route's shape (``choices[0].message.content``)."""
    if not isinstance(reply, dict) or "error" in reply or not reply.get("choices"):
        return reply
    choice = reply["choices"][0]
    message = {"role": "assistant", "content": choice.get("text", "")}
    return {**reply, "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": choice.get("finish_reason")}]}


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
