"""The embedded model's weights: the Q4_1 → Q8_0/Q4_0 re-encoding (checked against independently
computed block quantizers), its cache (a corrupt or half-written file is made again), and the
checks of a ``local/file:`` model before any call."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from coopeval.agents.local import catalogue  # noqa: E402
from coopeval.agents.local.catalogue import (  # noqa: E402
    local_model_error,
    n_threads,
    resolve_local_model,
)
from coopeval.agents.local.encoding import encoded_model, reencode, sha256_of  # noqa: E402
from coopeval.agents.local.errors import LocalModelFileError  # noqa: E402


def _q4_1_blocks(values: np.ndarray) -> np.ndarray:
    """Independent Q4_1 quantizer (llama.cpp's block layout: f16 d, f16 m, 16 bytes of nibbles;
    d = (max - min) / 15, q = round((x - min) / d), low nibbles hold weights 0..15)."""
    rows = []
    for block in values.reshape(-1, 32):
        lo, hi = float(block.min()), float(block.max())
        d = (hi - lo) / 15
        q = np.clip(np.floor((block - lo) / d + 0.5), 0, 15).astype(np.uint8)
        packed = (q[:16] | (q[16:] << 4)).astype(np.uint8)
        rows.append(np.concatenate([np.array([d, lo], dtype=np.float16).view(np.uint8), packed]))
    return np.stack(rows)


def _dequantize_q4_1(raw: np.ndarray) -> np.ndarray:
    out = []
    for block in raw.reshape(-1, 20):
        d, m = block[:4].view(np.float16).astype(np.float32)
        q = np.concatenate([block[4:] & 0x0F, block[4:] >> 4]).astype(np.float32)
        out.append(q * d + m)
    return np.concatenate(out)


def _dequantize_q8_0(raw: np.ndarray) -> np.ndarray:
    out = []
    for block in raw.reshape(-1, 34):
        d = block[:2].view(np.float16).astype(np.float32)[0]
        out.append(block[2:].view(np.int8).astype(np.float32) * d)
    return np.concatenate(out)


@pytest.fixture(scope="module")
def q4_1_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-tensor GGUF file: one 4 x 64 Q4_1 matrix and one F32 norm vector."""
    rng = np.random.default_rng(7)
    weights = rng.normal(0, 0.05, size=(4, 64)).astype(np.float32)
    path = tmp_path_factory.mktemp("gguf") / "tiny.Q4_1.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    writer.add_name("tiny")
    writer.add_file_type(int(gguf.LlamaFileType.MOSTLY_Q4_1))
    writer.add_context_length(4096)  # what a served file needs besides tensors (catalogue.check_window)
    writer.add_token_list(["<|endoftext|>", "a"])
    writer.add_chat_template("{{ messages[0]['content'] }}")
    raw = _q4_1_blocks(weights).reshape(4, -1)
    writer.add_tensor("blk.0.ffn_up.weight", raw, raw_shape=raw.shape, raw_dtype=gguf.GGMLQuantizationType.Q4_1)
    writer.add_tensor("blk.0.attn_norm.weight", np.linspace(0.5, 1.5, 64, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_q8_0_moves_every_weight_by_at_most_half_its_step(q4_1_file: Path, tmp_path: Path) -> None:
    target = tmp_path / "tiny.Q8_0.gguf"
    reencode(q4_1_file, target, "Q8_0")
    source, result = gguf.GGUFReader(q4_1_file), gguf.GGUFReader(target)
    before = {t.name: t for t in source.tensors}
    after = {t.name: t for t in result.tensors}
    matrix = after["blk.0.ffn_up.weight"]
    assert matrix.tensor_type == gguf.GGMLQuantizationType.Q8_0
    shipped = _dequantize_q4_1(np.asarray(before["blk.0.ffn_up.weight"].data))
    recoded = _dequantize_q8_0(np.asarray(matrix.data))
    steps = np.repeat(np.abs(shipped.reshape(-1, 32)).max(axis=1) / 127, 32)
    assert np.all(np.abs(recoded - shipped) <= steps / 2 + 1e-6)
    q4_steps = np.repeat(np.ptp(shipped.reshape(-1, 32), axis=1) / 15, 32)
    assert np.all(steps <= q4_steps / 7.4)  # Q8_0's step is about a sixteenth of Q4_1's (>= 1/7.47)
    # the norm vector and the metadata are copied; the file type names the new encoding
    assert np.array_equal(after["blk.0.attn_norm.weight"].data, before["blk.0.attn_norm.weight"].data)
    assert result.get_field("general.name").contents() == "tiny"
    assert result.get_field("general.file_type").contents() == int(gguf.LlamaFileType.MOSTLY_Q8_0)


def test_the_cache_reuses_a_verified_file_and_remakes_a_corrupt_one(
    q4_1_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COOPEVAL_MODEL_CACHE_DIR", str(tmp_path))
    first = encoded_model(q4_1_file, "Q4_1")
    source_sha = sha256_of(q4_1_file)
    assert first.path == tmp_path / f"tiny.Q8_0.{source_sha[:16]}.gguf"
    record = json.loads((tmp_path / (first.path.name + ".json")).read_text())
    assert record["source_sha256"] == source_sha and record["sha256"][:16] == first.digest
    assert first.label == f"{first.path.name}@Q8_0:{first.digest}"
    stamp = first.path.stat().st_mtime_ns
    assert encoded_model(q4_1_file, "Q4_1").path.stat().st_mtime_ns == stamp  # not written again
    with first.path.open("r+b") as handle:  # corrupt one byte of the tensor data
        handle.seek(-3, 2)
        byte = handle.read(1)
        handle.seek(-3, 2)
        handle.write(bytes([byte[0] ^ 0xFF]))
    again = encoded_model(q4_1_file, "Q4_1")
    assert again.digest == first.digest and sha256_of(again.path)[:16] == first.digest
    first.path.write_bytes(first.path.read_bytes()[:100])  # a half-written file
    assert encoded_model(q4_1_file, "Q4_1").digest == first.digest
    assert not list(tmp_path.glob("*.part"))


def test_shipped_and_other_encodings_are_used_as_they_are(q4_1_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COOPEVAL_MODEL_CACHE_DIR", str(tmp_path))
    assert encoded_model(q4_1_file, "Q4_1", "shipped").path == q4_1_file
    assert encoded_model(q4_1_file, "file").path == q4_1_file
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(LocalModelFileError, match="COOPEVAL_LOCAL_ENCODING='Q2_K' is not one of Q8_0, Q4_0, shipped"):
        encoded_model(q4_1_file, "Q4_1", "Q2_K")


def test_a_file_model_is_checked_before_any_call(q4_1_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_local_model(f"file:{q4_1_file}") == (q4_1_file.resolve(), "file")
    assert local_model_error(f"local/file:{q4_1_file}") is None
    missing = tmp_path / "nope.gguf"
    assert local_model_error(f"local/file:{missing}") == (
        f"local/file:{missing}: no such file; give the path of a .gguf file (absolute, or relative to {Path.cwd()})"
    )
    text = tmp_path / "model.gguf"
    text.write_text("not a model")
    error = local_model_error(f"local/file:{text}")
    assert error is not None and error.startswith(f"local/file:{text}: not a GGUF file (it starts with b'not ', not b'GGUF')")
    monkeypatch.setattr(catalogue, "available_memory_bytes", lambda: 100 << 20)  # 100 MiB free
    error = local_model_error(f"local/file:{q4_1_file}")
    assert error is not None and "needs about 0.3 GiB of memory and 0.1 GiB is available" in error
    assert "\n" not in error
    unknown = local_model_error("local/gpt-9")
    assert unknown is not None and "local/file:<path to a .gguf file>" in unknown


def test_more_threads_than_cpus_are_capped_with_one_warning(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(catalogue, "usable_cpus", lambda: 2)
    monkeypatch.setenv("COOPEVAL_LLAMA_THREADS", "32")
    assert n_threads() == 2
    assert n_threads() == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "COOPEVAL_LLAMA_THREADS=32 is more than the 2 CPUs this process may use; using 2" in err
    monkeypatch.setenv("COOPEVAL_LLAMA_THREADS", "2")
    assert n_threads() == 2


def test_the_cache_folder_defaults_to_the_users_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    from coopeval.agents.local.encoding import model_cache_dir

    monkeypatch.delenv("COOPEVAL_MODEL_CACHE_DIR", raising=False)
    assert model_cache_dir() == Path.home() / ".cache" / "coopeval" / "models"
    monkeypatch.setenv("COOPEVAL_MODEL_CACHE_DIR", "~/models")
    assert model_cache_dir() == Path.home() / "models"
