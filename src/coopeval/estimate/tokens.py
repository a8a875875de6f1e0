"""Token counts and prices of the models an estimate covers.

Tokens: :func:`tokens_per_char` counts a sample of a model's simulated prompts of each (study,
decision kind) with :func:`count_tokens` (an embedded ``local/`` model with its GGUF file's own
chat template and tokenizer; any other model with ``litellm.token_counter``, the model's own
tokenizer where litellm knows it: tiktoken for OpenAI models, Hugging Face tokenizers for the
families it ships; else its default ``cl100k_base``, an approximation) and the estimate scales
each row's prompt characters by its kind's ratio (:meth:`ModelFacts.ratio`).

Prices (US dollars per token): the project's pinned table (:mod:`coopeval.agents.prices`, which
overrides) first, then litellm's bundled price map, read offline
(``LITELLM_LOCAL_MODEL_COST_MAP``, :func:`coopeval.core.environment.use_offline_litellm`);
an OpenRouter model the map lacks at its vendor's own entry (:data:`OPENROUTER_UPSTREAM`);
bots and the embedded model cost nothing; any other model without a price (litellm lists some
models with 0 and 0: they count as unpriced too) is *unpriced* (``None``), never free.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from coopeval.agents.litellm_client import import_litellm
from coopeval.agents.prices import load_prices
from coopeval.agents.registry import is_scripted, routing_error, uses_local_llm
from coopeval.core.errors import ConfigError

__all__ = ["OPENAI_FAMILIES", "OPENROUTER_UPSTREAM", "FactsWorker", "ModelFacts", "Price", "count_tokens", "litellm_model_info", "max_output_tokens", "model_facts", "price_of", "tokenizer_of", "tokens_per_char", "upstream_of", "warm"]


@dataclass(frozen=True)
class Price:
    """US dollars per input and per output token, and where the price comes from
    (``free``, ``prices.yaml`` or ``litellm``)."""

    input_usd: float
    output_usd: float
    source: str

    def usd(self, input_tokens: float, output_tokens: float) -> float:
        """Dollars of ``input_tokens`` prompt and ``output_tokens`` completion tokens."""
        return input_tokens * self.input_usd + output_tokens * self.output_usd


_ASKS_THE_SERVER = ("ollama/", "ollama_chat/")
"""Providers whose model info litellm fetches from the model's server (``/api/show``): the
estimate makes no network call, so they count as unknown to the map (unpriced, no output cap)."""


def litellm_model_info(model: str) -> dict[str, Any] | None:
    """litellm's bundled map entry of ``model`` (offline), None when unknown or an Ollama model
    (litellm would ask its server)."""
    if model.startswith(_ASKS_THE_SERVER):
        return None
    litellm = import_litellm()
    try:
        info = litellm.get_model_info(model)
    except Exception:  # litellm raises when its map does not know the model
        return None
    return dict(info) if info else None


OPENROUTER_UPSTREAM: dict[str, str] = {
    "openai": "openai",
    "anthropic": "anthropic",
    "google": "gemini",
    "deepseek": "deepseek",
    "mistralai": "mistral",
    "x-ai": "xai",
    "moonshotai": "moonshot",
}
"""OpenRouter's vendor prefix → litellm's provider of that vendor's own API. OpenRouter passes
the underlying providers' prices through (openrouter.ai/docs/faq, "Getting started"), so an
``openrouter/<vendor>/<model>`` that litellm's map lacks is priced at ``<provider>/<model>``'s
entry, with the exact model name (``openrouter/openai/o4-mini`` → ``openai/o4-mini``); other
vendors, and names the vendor's API spells otherwise, stay unpriced."""


def _litellm_price(model: str) -> tuple[float, float] | None:
    info = litellm_model_info(model) or {}
    per_in, per_out = float(info.get("input_cost_per_token") or 0), float(info.get("output_cost_per_token") or 0)
    return (per_in, per_out) if per_in > 0 or per_out > 0 else None  # litellm lists some models it cannot price at 0 and 0


def upstream_of(model: str) -> str | None:
    """The vendor-API model string whose price stands for OpenRouter model ``model``
    (:data:`OPENROUTER_UPSTREAM`), None for other models and vendors.

    >>> upstream_of("openrouter/google/gemini-2.5-flash"), upstream_of("openai/gpt-4o")
    ('gemini/gemini-2.5-flash', None)
    """
    provider, _, rest = model.partition("/")
    vendor, _, name = rest.partition("/")
    upstream = OPENROUTER_UPSTREAM.get(vendor) if provider == "openrouter" and name else None
    return f"{upstream}/{name}" if upstream else None


def price_of(model: str) -> Price | None:
    """The price of ``model`` (see the module docstring), or ``None`` when unpriced: source
    ``free``, ``prices.yaml``, ``litellm``, or ``litellm upstream <model>`` for an OpenRouter
    model priced at its vendor's own entry (:func:`upstream_of`)."""
    if is_scripted(model) or uses_local_llm(model):
        return Price(0.0, 0.0, "free")
    table = load_prices()
    if table.known(model):
        return Price(table.cost_usd(model, 1, 0), table.cost_usd(model, 0, 1), "prices.yaml")
    found = _litellm_price(model)
    if found is not None:
        return Price(*found, "litellm")
    upstream = upstream_of(model)
    found = _litellm_price(upstream) if upstream else None
    return Price(*found, f"litellm upstream {upstream}") if found is not None else None


def max_output_tokens(model: str) -> int | None:
    """The most tokens ``model`` may answer with, from litellm's map (``max_output_tokens``;
    an OpenRouter model the map lacks: its vendor's entry, :func:`upstream_of`), when a call
    sends no ``max_tokens``; ``None`` if unknown. An embedded ``local/`` model answers at most
    to the end of its context window (``COOPEVAL_LLAMA_CTX``, :func:`coopeval.agents.local.catalogue.n_ctx`)."""
    if is_scripted(model):
        return 0
    if uses_local_llm(model):
        from coopeval.agents.local.catalogue import n_ctx

        return n_ctx()
    upstream = upstream_of(model)
    for name in (model, upstream) if upstream else (model,):
        info = litellm_model_info(name) or {}
        value = info.get("max_output_tokens") or info.get("max_tokens")
        if value:
            return int(value)
    return None


OPENAI_FAMILIES = ("gpt-", "chatgpt", "o1", "o3", "o4")
"""Model names (after the provider prefixes) counted exactly by tiktoken: OpenAI's."""


def tokenizer_of(model: str) -> str:
    """The tokenizer ``model`` is counted with: an embedded ``local/`` model's own
    (:data:`~coopeval.agents.local.tokenizer.TOKENIZER_LABEL`, where llama.cpp runs here), else
    litellm's: ``huggingface`` (a tokenizer litellm ships for the model's family), ``tiktoken``
    (an OpenAI model, :data:`OPENAI_FAMILIES`), else ``cl100k_base (approximation)``: litellm's
    default for models it has no tokenizer of."""
    if uses_local_llm(model):
        from coopeval.agents.local.tokenizer import TOKENIZER_LABEL, can_count

        if can_count(model):
            return TOKENIZER_LABEL
    import_litellm()  # offline mode before litellm.utils is imported
    from litellm.utils import _select_tokenizer

    if str(_select_tokenizer(model)["type"]).startswith("huggingface"):
        return "huggingface"
    return "tiktoken" if model.rsplit("/", 1)[-1].startswith(OPENAI_FAMILIES) else "cl100k_base (approximation)"


_COUNTED: dict[tuple[str, str], int] = {}
"""(model, message-list JSON) → its token count: a prompt is counted once per model."""


def count_tokens(model: str, prompt: str) -> int:
    """Prompt tokens of ``prompt`` (a JSON message list, as in ``llm_calls.prompt``) for
    ``model``: an embedded ``local/`` model's with its own chat template and tokenizer
    (:func:`coopeval.agents.local.tokenizer.local_prompt_tokens`, exactly the tokens the runtime
    evaluates), any other model's (or a local one where llama.cpp cannot run) by
    ``litellm.token_counter``; memoized per model and prompt."""
    key = (model, prompt)
    if key not in _COUNTED:
        counted = None
        if uses_local_llm(model):
            from coopeval.agents.local import LocalModelFileError
            from coopeval.agents.local.tokenizer import local_prompt_tokens

            try:
                counted = local_prompt_tokens(model, json.loads(prompt))
            except LocalModelFileError as exc:  # e.g. a truncated GGUF file: no run could use it
                raise ConfigError(str(exc) if str(exc).startswith(f"{model}:") else f"{model}: {exc}") from exc
        if counted is None:
            counted = int(import_litellm().token_counter(model=model, messages=json.loads(prompt)))
        _COUNTED[key] = counted
    return _COUNTED[key]


KindSamples = Mapping[tuple[str, str], Sequence[str]]
"""(study, decision kind) → sampled prompts (JSON message lists) of one model."""


def tokens_per_char(model: str, prompts: Sequence[str]) -> float:
    """Prompt tokens per character of JSON message-list text for ``model``, counted with
    ``litellm.token_counter`` over ``prompts`` (each a JSON message list, as recorded in
    ``llm_calls.prompt``; each distinct prompt counted once, :func:`count_tokens`). 0.25 (4
    characters per token) when ``prompts`` is empty."""
    chars = sum(len(p) for p in prompts)
    if not chars:
        return 0.25
    return sum(count_tokens(model, p) for p in prompts) / chars


@dataclass(frozen=True)
class ModelFacts:
    """What the estimate knows of one model: ``tokens_per_char`` of all its sampled prompts (0
    for bots) and ``by_kind``, (study, decision kind) → the ratio of that kind's sampled prompts
    (:meth:`ratio`), its ``price`` (None: unpriced), ``max_output`` tokens when a call sends no
    ``max_tokens`` (None: unknown), the ``tokenizer`` that counted it and why its provider cannot
    route it (``routing``, :func:`coopeval.agents.registry.routing_error`; None: it can)."""

    tokens_per_char: float
    price: Price | None
    max_output: int | None
    tokenizer: str
    routing: str | None = None
    by_kind: Mapping[tuple[str, str], float] = field(default_factory=dict)

    def ratio(self, study: str, kind: str) -> float:
        """Tokens per character of ``study``'s ``kind`` prompts; the model's overall ratio for a
        kind without a sampled prompt."""
        return self.by_kind.get((study, kind), self.tokens_per_char)


def model_facts(samples: Mapping[str, KindSamples]) -> dict[str, ModelFacts]:
    """:class:`ModelFacts` of every model of ``samples`` (model → (study, decision kind) → its
    sampled prompts, JSON message lists)."""
    out = {}
    for model, kinds in samples.items():
        scripted = is_scripted(model)
        everything = [p for prompts in kinds.values() for p in prompts]
        out[model] = ModelFacts(
            0.0 if scripted else tokens_per_char(model, everything),
            price_of(model),
            max_output_tokens(model),
            "none (scripted)" if scripted else tokenizer_of(model),
            routing_error(model),
            {} if scripted else {key: tokens_per_char(model, prompts) for key, prompts in kinds.items() if prompts},
        )
    return out


def warm(models: Sequence[str]) -> None:
    """Load what :func:`model_facts` of ``models`` needs (litellm's price map entries and each
    model's tokenizer) so that the later counts start at once; the results are not kept, only
    litellm's and :func:`count_tokens`' caches filled."""
    for model in models:
        if is_scripted(model):
            continue
        price_of(model)
        max_output_tokens(model)
        tokenizer_of(model)
        count_tokens(model, _WARM_PROMPT)


_WARM_PROMPT = json.dumps([{"role": "user", "content": "cooperate"}])
"""A one-word prompt whose count loads a model's tokenizer (:func:`warm`)."""


def _serve(conn: Any) -> None:
    """The loop of :class:`FactsWorker`'s child: first litellm's API-key table, sent at once
    (``(True, table)``, or ``(False, message)`` when it cannot be read), then one request at a
    time: ``("warm", models)`` and ``("count", samples)`` (no reply; a failure there is raised
    again by the ``facts`` request that needs it), ``("facts", samples)`` (replies ``(True,
    facts)`` or ``(False, message)``, then the child exits)."""
    from coopeval.agents.litellm_client import read_key_table_here

    try:
        conn.send((True, read_key_table_here()))
    except Exception as exc:  # this process then reads the table itself when it needs it
        conn.send((False, f"{type(exc).__name__}: {exc}"))
    while True:
        try:
            kind, payload = conn.recv()
        except EOFError:  # the estimate is gone
            return
        if kind == "facts":
            try:
                conn.send((True, model_facts(payload)))
            except Exception as exc:
                conn.send((False, (type(exc).__name__, str(exc))))
            return
        with contextlib.suppress(Exception):
            if kind == "warm":
                warm(payload)
            else:
                for model, prompts in payload.items():
                    tokens_per_char(model, prompts)


class FactsWorker:
    """:func:`model_facts` in a child process started at once, so that its import of litellm
    (2-5 s), the loading of the models' tokenizers and the token counts run beside the
    simulation; for a process that has not imported litellm yet (the ``coopeval estimate``
    command, which starts it before it loads the config). Requests are served in the order
    sent: :meth:`warm` as soon as the models are known, :meth:`count` for each part of the
    samples known early (counted prompts are memoized, :func:`count_tokens`), :meth:`facts` at
    the end. The child first reads litellm's API-key table
    (:func:`coopeval.agents.litellm_client.read_key_table_here`), so the command imports
    litellm once, there, not a second time in the child Python of
    :func:`~coopeval.agents.litellm_client.litellm_key_table`. The child is a daemon: it ends
    with this process, or at :meth:`close`."""

    def __init__(self) -> None:
        import multiprocessing

        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        self._process = context.Process(target=_serve, args=(child,), name="coopeval-estimate-facts", daemon=True)
        self._process.start()
        child.close()
        self._sender: threading.Thread | None = None

    def _send(self, request: tuple[str, Any]) -> None:
        """Send ``request`` from a thread, after the ones before it: a large request waits in
        the pipe until the busy child reads it, and this process goes on meanwhile."""
        before = self._sender

        def send() -> None:
            if before is not None:
                before.join()
            with contextlib.suppress(OSError):  # the child is gone: facts() reports it
                self._conn.send(request)

        self._sender = threading.Thread(target=send, name="coopeval-estimate-facts-send", daemon=True)
        self._sender.start()

    def warm(self, models: Sequence[str]) -> None:
        """Ask the child to load the price entries and tokenizers of ``models`` (:func:`warm`)."""
        self._send(("warm", list(models)))

    def count(self, samples: Mapping[str, Sequence[str]]) -> None:
        """Ask the child to count ``samples`` (model → prompts) now; :meth:`facts` of samples
        holding them then finds them counted."""
        self._send(("count", {m: list(p) for m, p in samples.items()}))

    def facts(self, samples: Mapping[str, KindSamples]) -> dict[str, ModelFacts]:
        """:func:`model_facts` of ``samples``, computed in the child (which then exits); the key
        table it read is handed to this process
        (:func:`~coopeval.agents.litellm_client.use_key_table`; if the child could not read it,
        this process reads it as usual when it is needed).

        Raises
        ------
        ConfigError
            A model no run could use (an embedded model's file llama.cpp cannot load), as
            :func:`model_facts` raises it.
        RuntimeError
            The child failed otherwise (its error in the message) or ended without an answer.
        """
        from coopeval.agents.litellm_client import use_key_table

        try:
            self._send(("facts", {m: {key: list(p) for key, p in kinds.items()} for m, kinds in samples.items()}))
            if self._sender is not None:
                self._sender.join()
            keys_read, keys = self._conn.recv()
            done, facts = self._conn.recv()
        except (EOFError, OSError) as exc:
            raise RuntimeError(f"coopeval estimate: the process counting tokens ended without an answer ({exc!r})") from exc
        finally:
            self.close()
        if keys_read:
            use_key_table(keys)
        if not done:
            kind, message = facts
            if kind == ConfigError.__name__:
                raise ConfigError(message)
            raise RuntimeError(f"coopeval estimate: counting tokens failed: {kind}: {message}")
        return dict(facts)

    def close(self) -> None:
        """End the child (if it still runs) and the pipe to it; idempotent."""
        if self._process.is_alive():
            self._process.terminate()
        self._process.join(timeout=5)
        self._conn.close()
