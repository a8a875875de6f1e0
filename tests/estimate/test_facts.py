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
