"""litellm's facts of the estimated models, computed in the process or in a child beside the
simulation (:class:`coopeval.estimate.tokens.FactsWorker`), are the same."""

from __future__ import annotations

import json

import pytest

from coopeval.agents.litellm_client import import_litellm
from coopeval.agents.prices import load_prices
from coopeval.estimate.tokens import FactsWorker, count_tokens, model_facts

PROMPTS = [json.dumps([{"role": "user", "content": "You and another player each choose to cooperate or defect. " * k}]) for k in (3, 20)]


def test_the_child_process_gives_the_facts_of_the_process():
    samples = {"openai/gpt-4o-mini": {("coopeval", "action"): PROMPTS}, "bot/always-defect": {}, "openai/no-such-model-xyz": {("coopeval", "action"): PROMPTS[:1]}}
    here = model_facts(samples)
    assert FactsWorker().facts(samples) == here
    mini = here["openai/gpt-4o-mini"]
    litellm = import_litellm()
    counted = [litellm.token_counter(model="openai/gpt-4o-mini", messages=json.loads(p)) for p in PROMPTS]
    assert mini.tokens_per_char == sum(counted) / sum(len(p) for p in PROMPTS)
    assert [count_tokens("openai/gpt-4o-mini", p) for p in PROMPTS] == counted
    assert mini.price is not None and mini.price.input_usd == load_prices().cost_usd("openai/gpt-4o-mini", 1, 0)
    assert here["bot/always-defect"].tokens_per_char == 0.0 and here["openai/no-such-model-xyz"].price is None


# What the facts child runs: a fresh Python that reads the table in its own process and checks
# that its environment is restored. A fresh process because the table read in-process depends on
# the state of the process's litellm, which earlier tests in a long pytest run may have changed.
_READ_HERE = """
import json, os
from coopeval.agents import litellm_client
environ = dict(os.environ)
table = litellm_client.read_key_table_here()
assert dict(os.environ) == environ, "read_key_table_here left the environment changed"
print(json.dumps({provider: list(names) for provider, names in table.items()}))
"""


def test_the_key_table_read_in_the_facts_child_is_litellms_table(monkeypatch):
    """The facts child reads litellm's API-key table in its own process (the environment
    emptied to litellm's offline settings while it reads, then restored): the same table the
    child Python of ``litellm_key_table`` reads, handed to this process, which then starts no
    child Python of its own."""
    import os
    import subprocess
    import sys

    from coopeval.agents import litellm_client

    litellm_client.litellm_key_table.cache_clear()
    monkeypatch.setattr(litellm_client, "_PRESET_KEY_TABLE", {})
    monkeypatch.setenv("OPENROUTER_API_KEY", "set-here")  # a set key is still named in the table
    child = subprocess.run([sys.executable, "-c", _READ_HERE], capture_output=True, text=True, env=dict(os.environ), timeout=300)
    assert child.returncode == 0, child.stderr[-2000:]
    here = {provider: tuple(names) for provider, names in json.loads(child.stdout.strip().splitlines()[-1]).items()}
    expected = litellm_client.litellm_key_table()
    assert here == expected and here["openrouter"] == ("OPENROUTER_API_KEY",) and here["gemini"] == ("GEMINI_API_KEY",)
    litellm_client.litellm_key_table.cache_clear()
    worker = FactsWorker()
    worker.facts({"bot/always-defect": {}})
    monkeypatch.setattr(litellm_client.subprocess, "run", None)  # no child Python from here on
    assert litellm_client.litellm_key_table() == expected
    litellm_client.litellm_key_table.cache_clear()


def test_prompts_counted_early_in_the_child_give_the_facts_of_the_process():
    """:meth:`FactsWorker.warm` and :meth:`FactsWorker.count` sent before the samples are
    complete change nothing in the facts; the child has ended once they are given."""
    samples = {"openai/gpt-4o-mini": {("coopeval", "action"): PROMPTS}, "bot/always-defect": {}, "openai/no-such-model-xyz": {("coopeval", "action"): PROMPTS[:1]}}
    worker = FactsWorker()
    worker.warm(["openai/gpt-4o-mini", "openai/no-such-model-xyz"])
    worker.count({"openai/gpt-4o-mini": PROMPTS[:1]})
    assert worker.facts(samples) == model_facts(samples)
    assert not worker._process.is_alive()


def test_a_closed_worker_ends_its_child_and_gives_no_facts():
    worker = FactsWorker()
    worker.close()
    assert not worker._process.is_alive()
    with pytest.raises(RuntimeError, match="ended without an answer"):
        worker.facts({"openai/gpt-4o-mini": {("coopeval", "action"): PROMPTS}})


def test_each_decision_kind_has_its_own_tokens_per_character():
    """A model's ratio is counted per (study, decision kind) of its sampled prompts, and a kind
    without a sampled prompt takes the ratio of all of them."""
    litellm = import_litellm()
    numbers = json.dumps([{"role": "user", "content": "0.25 0.75 1.0 12 37 4.5 " * 40}])
    facts = model_facts({"openai/gpt-4o-mini": {("coopeval", "action"): PROMPTS, ("gossip", "gossip"): [numbers]}})["openai/gpt-4o-mini"]

    def ratio(prompts: list[str]) -> float:
        return sum(litellm.token_counter(model="openai/gpt-4o-mini", messages=json.loads(p)) for p in prompts) / sum(len(p) for p in prompts)

    assert facts.ratio("coopeval", "action") == ratio(PROMPTS)
    assert facts.ratio("gossip", "gossip") == ratio([numbers])
    assert facts.ratio("evolution", "donation") == facts.tokens_per_char == ratio([*PROMPTS, numbers])
    assert abs(facts.ratio("gossip", "gossip") - facts.ratio("coopeval", "action")) > 0.05
