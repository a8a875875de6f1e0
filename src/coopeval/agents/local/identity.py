"""Which weights answer a ``local/`` model (the part of its response-cache key that names them),
and what else decides its texts (recorded with every run).

A ``local/`` model string names a file, not weights: ``local/smollm2-135m`` is served as Q8_0 or
Q4_0 or as shipped (``$COOPEVAL_LOCAL_ENCODING``), and ``local/file:<path>`` serves whatever file
lies at the path today. :func:`weights_key` is ``<encoding>:<sha256 of the file's content>``, so
a run with another encoding, or another file behind the same path, asks the model again and
never reads another model's answers from the response cache
(:func:`coopeval.cache.response_cache.call_key`, as the ``endpoint`` of the call).

Hashing reads the whole file (about 0.2 s for the packaged 94 MiB model, ~1 s per GiB); the
digest is kept per process and on disk beside the re-encoded weights
(``$COOPEVAL_MODEL_CACHE_DIR/sha256/``), keyed by the file's path, size, modification time and
inode, so a file changed or replaced in place is hashed again.

Importing this module imports neither llama.cpp nor litellm.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path

from coopeval.agents.local.catalogue import resolve_local_model
from coopeval.agents.local.encoding import FORMAT_VERSION, model_cache_dir, sha256_of
from coopeval.core.environment import env_value

__all__ = ["SIMD_FLAGS", "file_sha256", "runtime_facts", "served_encoding", "weights_key"]


def served_encoding(shipped: str) -> str:
    """The encoding a model whose file is ``shipped``-encoded is served in: the shipped Q4_1
    weights are re-encoded to ``$COOPEVAL_LOCAL_ENCODING`` (``Q8_0/v1``: encoding and the
    re-encoder's format version, which together with the source decide the written file), any
    other file and ``shipped`` are served as they are (``Q4_1``, ``file``).

    Raises
    ------
    coopeval.core.environment.EnvironmentSettingError
        ``$COOPEVAL_LOCAL_ENCODING`` is not one of the accepted encodings.
    """
    wanted = str(env_value("COOPEVAL_LOCAL_ENCODING"))
    if wanted == "shipped" or shipped != "Q4_1":
        return shipped
    return f"{wanted}/v{FORMAT_VERSION}"


def weights_key(name: str) -> str:
    """``<encoding>:<sha256>`` of ``local/<name>``: how its weights are served
    (:func:`served_encoding`) and the full hex sha256 of the file the model string names.

    Raises
    ------
    LocalModelMissingError, LocalModelFileError
        As :func:`~coopeval.agents.local.catalogue.resolve_local_model`.
    """
    source, shipped = resolve_local_model(name)
    return f"{served_encoding(shipped)}:{file_sha256(source)}"


def file_sha256(path: Path) -> str:
    """Hex sha256 of the file at ``path``, reused while its path, size, modification time and
    inode are unchanged (in this process, and across processes through a small record in
    ``$COOPEVAL_MODEL_CACHE_DIR/sha256/``; a folder that cannot be written only costs the
    hashing again).

    Raises
    ------
    OSError
        The file cannot be read.
    """
    real = Path(path).resolve()
    stat = real.stat()
    return _sha256_for(str(real), stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_dev)


@functools.cache
def _sha256_for(path: str, size: int, mtime_ns: int, inode: int, device: int) -> str:
    identity = json.dumps([path, size, mtime_ns, inode, device])
    record = model_cache_dir() / "sha256" / f"{hashlib.sha256(identity.encode()).hexdigest()[:32]}.json"
    try:
        kept = json.loads(record.read_text(encoding="utf-8"))
        if kept.get("identity") == identity and isinstance(kept.get("sha256"), str):
            return str(kept["sha256"])
    except (OSError, ValueError, AttributeError):
        pass
    digest = sha256_of(Path(path))
    temporary = ""
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=record.parent, prefix=f".{record.name}.", suffix=".part")
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump({"identity": identity, "sha256": digest}, out)
        os.replace(temporary, record)
    except OSError:  # an unwritable cache folder costs only the hashing next time
        if temporary:
            Path(temporary).unlink(missing_ok=True)
    return digest


SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vnni", "avx_vnni", "amx_tile")
"""``/proc/cpuinfo`` flags that choose which of llama.cpp's CPU kernels run (x86-64); on other
machines the architecture alone is recorded."""


def runtime_facts() -> dict[str, str]:
    """What decides the embedded model's texts besides its weights and the requests, as recorded
    in the store's ``provenance`` table (docs/providers.md#reproducible-texts): the llama.cpp
    runtime's version (``xllamacpp``), the CPU and the instruction-set flags its kernels use, the
    compute threads of an embedded-model job (``$COOPEVAL_LLAMA_THREADS`` when set, else the
    workflow's one thread per play and judge job), the served encoding of the packaged model,
    and the context window and prompt-cache size. Values are strings; an unknown one is ``""``.
    """
    import os
    import platform
    from importlib.metadata import PackageNotFoundError, version

    try:
        runtime = f"xllamacpp {version('xllamacpp')}"
    except PackageNotFoundError:
        runtime = ""
    from coopeval.agents.local.model import cpu_info

    cpu, flags = cpu_info()
    threads = os.environ.get("COOPEVAL_LLAMA_THREADS") or "1"
    return {
        "local_runtime": runtime,
        "local_cpu": f"{platform.machine()} {cpu}".strip(),
        "local_cpu_flags": " ".join(f for f in SIMD_FLAGS if f in flags),
        "local_threads": threads,
        "local_encoding": served_encoding("Q4_1"),
        "local_n_ctx": str(env_value("COOPEVAL_LLAMA_CTX")),
        "local_prompt_cache_mib": str(env_value("COOPEVAL_LLAMA_CACHE_MIB")),
    }
