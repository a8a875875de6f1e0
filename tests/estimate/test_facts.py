"""litellm's facts of the estimated models, computed in the process or in a child beside the
simulation (:class:`coopeval.estimate.tokens.FactsWorker`), are the same."""

from __future__ import annotations

import json

from coopeval.agents.litellm_client import import_litellm
from coopeval.agents.prices import load_prices
from coopeval.estimate.tokens import FactsWorker, count_tokens, model_facts

PROMPTS = [json.dumps([{"role": "user", "content": "You and another player each choose to cooperate or defect. " * k}]) for k in (3, 20)]


def test_the_child_process_gives_the_facts_of_the_process():
    samples = {"openai/gpt-4o-mini": PROMPTS, "bot/always-defect": [], "openai/no-such-model-xyz": PROMPTS[:1]}
    here = model_facts(samples)
    assert FactsWorker().facts(samples) == here
    mini = here["openai/gpt-4o-mini"]
    litellm = import_litellm()
    counted = [litellm.token_counter(model="openai/gpt-4o-mini", messages=json.loads(p)) for p in PROMPTS]
    assert mini.tokens_per_char == sum(counted) / sum(len(p) for p in PROMPTS)
    assert [count_tokens("openai/gpt-4o-mini", p) for p in PROMPTS] == counted
    assert mini.price is not None and mini.price.input_usd == load_prices().cost_usd("openai/gpt-4o-mini", 1, 0)
    assert here["bot/always-defect"].tokens_per_char == 0.0 and here["openai/no-such-model-xyz"].price is None


def test_the_key_table_read_in_the_facts_child_is_litellms_table(monkeypatch):
    """The facts child reads litellm's API-key table in its own process (the environment
    emptied to litellm's offline settings while it reads, then restored): the same table the
    child Python of ``litellm_key_table`` reads, handed to this process, which then starts no
    child Python of its own."""
    import os

    from coopeval.agents import litellm_client

    litellm_client.litellm_key_table.cache_clear()
    monkeypatch.setattr(litellm_client, "_PRESET_KEY_TABLE", {})
    monkeypatch.setenv("OPENROUTER_API_KEY", "set-here")  # a set key is still named in the table
    environ = dict(os.environ)
    here = litellm_client.read_key_table_here()
    assert dict(os.environ) == environ
    expected = litellm_client.litellm_key_table()
    assert here == expected and here["openrouter"] == ("OPENROUTER_API_KEY",) and here["gemini"] == ("GEMINI_API_KEY",)
    litellm_client.litellm_key_table.cache_clear()
    worker = FactsWorker()
    worker.facts({"bot/always-defect": []})
    monkeypatch.setattr(litellm_client.subprocess, "run", None)  # no child Python from here on
    assert litellm_client.litellm_key_table() == expected
    litellm_client.litellm_key_table.cache_clear()
