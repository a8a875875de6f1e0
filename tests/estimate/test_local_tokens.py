"""The estimate counts an embedded ``local/`` model's prompts with the GGUF file's own chat
template and tokenizer: exactly the prompt tokens the runtime evaluates (issue 40 item 13)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("xllamacpp")

from coopeval.agents.local import LocalModelMissingError
from coopeval.agents.local import tokenizer as local_tokenizer
from coopeval.estimate import tokens

MODEL = "local/smollm2-135m"

MESSAGES = [
    [{"role": "user", "content": "Choose C or D."}],
    [
        {"role": "system", "content": "You play a repeated game."},
        {
            "role": "user",
            "content": 'Round 3 of 15. History: C/C, D/C. Answer in JSON {"C": p, "D": 1 - p}.',
        },
    ],
    [
        {"role": "user", "content": "Donate 0.25 or 0.75 of 10.0 units to the recipient. " * 60}
    ],  # longer than the counter's 512-token window
]


@pytest.fixture(scope="module")
def runtime():
    """The packaged file served as a run serves it: the default 4,096-token window."""
    from coopeval.agents.local.model import LocalRuntime

    served = LocalRuntime(
        local_tokenizer.resolve_local_model("smollm2-135m")[0], n_ctx=4096, n_threads=1, cache_mib=0
    )
    yield served
    served.close()


@pytest.fixture(scope="module", autouse=True)
def installed():
    try:
        local_tokenizer.resolve_local_model("smollm2-135m")
    except LocalModelMissingError as exc:
        pytest.skip(str(exc))


@pytest.mark.parametrize("messages", MESSAGES, ids=["user", "system+user", "long"])
def test_the_count_is_the_prompt_tokens_the_runtime_evaluates(runtime, messages):
    reply = runtime.chat({"messages": messages, "max_tokens": 1, "cache_prompt": False})
    evaluated = reply["usage"]["prompt_tokens"]
    assert runtime.prompt_tokens(messages) == evaluated
    assert tokens.count_tokens(MODEL, json.dumps(messages)) == evaluated
    assert evaluated > (512 if len(json.dumps(messages)) > 2000 else 10)


def test_the_estimate_names_the_models_own_tokenizer():
    assert tokens.tokenizer_of(MODEL) == local_tokenizer.TOKENIZER_LABEL
    facts = tokens.model_facts(
        {MODEL: {("coopeval", "action"): [json.dumps(m) for m in MESSAGES]}}
    )[MODEL]
    assert (
        facts.tokenizer == local_tokenizer.TOKENIZER_LABEL
        and facts.price is not None
        and facts.price.source == "free"
    )
    counted = [local_tokenizer.local_prompt_tokens(MODEL, m) for m in MESSAGES]
    assert facts.ratio("coopeval", "action") == sum(counted) / sum(
        len(json.dumps(m)) for m in MESSAGES
    )


def test_where_llama_cpp_cannot_run_litellms_counter_stands_in(monkeypatch):
    """On a CPU without AVX2 the prebuilt runtime cannot load: the estimate counts with litellm's
    default tokenizer and says so."""
    from coopeval.agents.local.errors import LocalModelFileError

    def no_avx2() -> None:
        raise LocalModelFileError("this CPU lacks AVX2")

    model = "local/file:" + str(
        local_tokenizer.resolve_local_model("smollm2-135m")[0]
    )  # a model not counted yet in this process
    monkeypatch.setattr(local_tokenizer, "check_cpu", no_avx2)
    monkeypatch.setattr(local_tokenizer, "_COUNTERS", {})
    assert local_tokenizer.local_prompt_tokens(model, MESSAGES[0]) is None
    assert tokens.tokenizer_of(model) == "cl100k_base (approximation)"
    litellm = tokens.import_litellm()
    prompt = json.dumps(MESSAGES[1])
    monkeypatch.setattr(tokens, "_COUNTED", {})
    assert tokens.count_tokens(model, prompt) == litellm.token_counter(
        model=model, messages=MESSAGES[1]
    )


def test_a_gguf_file_llama_cpp_cannot_load_is_a_config_error_naming_the_model(tmp_path):
    """A file that starts as GGUF but is cut short passes the magic check; counting its prompts
    loads it, and the estimate says in one line which model cannot be used and why."""
    from coopeval.core.errors import ConfigError
    from coopeval.estimate.tokens import FactsWorker

    shipped = local_tokenizer.resolve_local_model("smollm2-135m")[0]
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(shipped.read_bytes()[:100_000])
    model = f"local/file:{cut}"
    with pytest.raises(ConfigError, match=r"cut\.gguf: the GGUF header of .*cut\.gguf is cut short or malformed .*; the file is truncated"):
        tokens.count_tokens(model, json.dumps(MESSAGES[0]))
    with pytest.raises(ConfigError, match=rf"^{model}: the GGUF header .*the file is truncated"):
        FactsWorker().facts({model: {("coopeval", "action"): [json.dumps(MESSAGES[0])]}})


@pytest.mark.parametrize(("make", "said"), [(lambda p: p.mkdir(), "is a folder"), (lambda p: p.write_bytes(b""), "is empty")], ids=["folder", "empty"])
def test_a_folder_or_an_empty_file_is_named_as_such(tmp_path, make, said):
    from coopeval.agents.local.catalogue import local_model_error

    target = tmp_path / "m.gguf"
    make(target)
    assert said in (local_model_error(f"local/file:{target}") or "")


def test_an_embedded_model_answers_at_most_to_the_end_of_its_window(monkeypatch):
    """Without ``max_tokens`` llama.cpp stops at the context window: the estimate's output bound
    per call (the default config sets none for the embedded model, so the total had no bound)."""
    assert tokens.max_output_tokens(MODEL) == 4096
    monkeypatch.setenv("COOPEVAL_LLAMA_CTX", "2048")
    assert tokens.max_output_tokens(MODEL) == 2048
