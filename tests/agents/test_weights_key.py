"""Issue 45 item 2: the response-cache key of a ``local/`` call names the weights that answer (the
served encoding and the sha256 of the file's content), so another encoding, or another file behind
the same ``local/file:`` path, asks the model again; API models' keys are unchanged."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from coopeval.agents.llm_agent import LiteLLMAgent
from coopeval.agents.local import identity
from coopeval.agents.local.identity import file_sha256, runtime_facts, served_encoding, weights_key
from coopeval.cache.response_cache import call_key
from tests.agents.test_local_files import _model as gguf_model

MESSAGES = [{"role": "user", "content": "Pick A0 or A1."}]


@pytest.fixture(autouse=True)
def _own_model_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COOPEVAL_MODEL_CACHE_DIR", str(tmp_path / "models"))
    identity._sha256_for.cache_clear()


def _gguf(path: Path, body: bytes) -> Path:
    """A small GGUF file that passes the checks made before loading; ``body`` sets its trained
    window, so different bodies give different bytes."""
    return gguf_model(path, window=8192 + len(body))


def _key(agent: LiteLLMAgent) -> str:
    return call_key(agent.model, MESSAGES, agent.params, {"round": 1}, 0, agent.endpoint)


def test_the_key_holds_the_encoding_and_the_files_sha256(tmp_path):
    model = _gguf(tmp_path / "m.gguf", b"weights one")
    agent = LiteLLMAgent(f"local/file:{model}", "IO")
    assert agent.endpoint == {"weights": "file:" + hashlib.sha256(model.read_bytes()).hexdigest()}


def test_another_file_behind_the_same_path_gets_another_key(tmp_path):
    model = _gguf(tmp_path / "m.gguf", b"weights one")
    first = _key(LiteLLMAgent(f"local/file:{model}", "IO"))
    assert _key(LiteLLMAgent(f"local/file:{model}", "IO")) == first  # same file: the cached answers
    replacement = _gguf(tmp_path / "other.gguf", b"weights two, longer")
    os.replace(replacement, model)  # a new file under the old name (new inode, size and time)
    assert _key(LiteLLMAgent(f"local/file:{model}", "IO")) != first


def test_the_same_bytes_at_another_path_name_the_same_weights(tmp_path):
    a = _gguf(tmp_path / "a.gguf", b"same weights")
    b = tmp_path / "b.gguf"
    b.write_bytes(a.read_bytes())
    first, second = LiteLLMAgent(f"local/file:{a}", "IO"), LiteLLMAgent(f"local/file:{b}", "IO")
    assert first.endpoint == second.endpoint
    assert _key(first) != _key(second)  # the model string (with its path) is in the key too


def test_another_encoding_of_the_packaged_model_gets_another_key(monkeypatch):
    keys = {}
    for encoding in ("Q8_0", "Q4_0", "shipped"):
        monkeypatch.setenv("COOPEVAL_LOCAL_ENCODING", encoding)
        agent = LiteLLMAgent("local/smollm2-135m", "IO")
        keys[encoding] = _key(agent)
        assert agent.endpoint["weights"].split(":")[0] == {"Q8_0": "Q8_0/v1", "Q4_0": "Q4_0/v1", "shipped": "Q4_1"}[encoding]
    assert len(set(keys.values())) == 3


def test_served_encoding_re_encodes_only_q4_1(monkeypatch):
    monkeypatch.setenv("COOPEVAL_LOCAL_ENCODING", "Q8_0")
    assert served_encoding("Q4_1") == "Q8_0/v1"
    assert served_encoding("file") == "file"
    monkeypatch.setenv("COOPEVAL_LOCAL_ENCODING", "shipped")
    assert served_encoding("Q4_1") == "Q4_1"


def test_the_digest_is_kept_on_disk_and_refreshed_when_the_file_changes(tmp_path):
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUFv1")
    assert file_sha256(model) == hashlib.sha256(b"GGUFv1").hexdigest()
    records = list((tmp_path / "models" / "sha256").glob("*.json"))
    assert len(records) == 1
    identity._sha256_for.cache_clear()
    model.write_bytes(b"GGUFv2 changed in place")
    assert file_sha256(model) == hashlib.sha256(b"GGUFv2 changed in place").hexdigest()


def test_an_unwritable_model_cache_only_costs_the_hashing(tmp_path, monkeypatch):
    blocker = tmp_path / "a_file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("COOPEVAL_MODEL_CACHE_DIR", str(blocker / "models"))
    model = _gguf(tmp_path / "m.gguf", b"x")
    assert weights_key(f"file:{model}") == "file:" + hashlib.sha256(model.read_bytes()).hexdigest()


def test_api_model_keys_do_not_change(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    agent = LiteLLMAgent("openai/gpt-4o-mini", "IO")
    assert "weights" not in agent.endpoint
    assert _key(agent) == call_key(agent.model, MESSAGES, agent.params, {"round": 1}, 0)


def test_runtime_facts_name_threads_encoding_and_cpu(monkeypatch):
    monkeypatch.setenv("COOPEVAL_LLAMA_THREADS", "3")
    monkeypatch.setenv("COOPEVAL_LOCAL_ENCODING", "Q4_0")
    monkeypatch.delenv("COOPEVAL_LLAMA_CTX", raising=False)
    monkeypatch.delenv("COOPEVAL_LLAMA_CACHE_MIB", raising=False)
    facts = runtime_facts()
    assert facts["local_threads"] == "3"
    assert facts["local_encoding"] == "Q4_0/v1"
    assert facts["local_n_ctx"] == "4096" and facts["local_prompt_cache_mib"] == "256"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file() and " avx2 " in f" {cpuinfo.read_text(errors='replace')} ":
        assert "avx2" in facts["local_cpu_flags"].split()
    monkeypatch.delenv("COOPEVAL_LLAMA_THREADS")
    assert runtime_facts()["local_threads"] == "1"  # the workflow's one thread per job
