"""One real judgement by the embedded model (local/smollm2-135m, grammar-constrained): the answer
is valid under our contract on the first attempt and its labels come from the taxonomy."""

from __future__ import annotations

import os

import pytest

pytestmark = pytest.mark.local_llm

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("xllamacpp")
pytest.importorskip("litellm")

from coopeval.agents.local import LocalModelMissingError, local_model_path  # noqa: E402
from coopeval.agents.maker import DecisionMaker  # noqa: E402
from coopeval.agents.registry import make_agent  # noqa: E402
from coopeval.core.prompts import PromptLibrary  # noqa: E402
from coopeval.decisions.taxonomy import load_taxonomy  # noqa: E402
from coopeval.studies.coopeval.judge.prompt import JudgePrompt  # noqa: E402
from coopeval.studies.coopeval.judge.stage import judge_decisions  # noqa: E402
from coopeval.studies.coopeval.play import style_instructions  # noqa: E402
from tests.fakes import decision_rows  # noqa: E402
from tests.shared_data import JUDGE_TEMPLATE, PROMPTS_DIR  # noqa: E402


def test_local_model_judges_one_decision():
    try:
        local_model_path("smollm2-135m")
    except LocalModelMissingError as exc:
        pytest.skip(str(exc))
    taxonomy = load_taxonomy()
    rows = decision_rows(
        [
            {
                "response": 'Defecting gives me 3 or 1, more than cooperating whatever the other does, so I defect. {"A0": 0, "A1": 100}'
            }
        ]
    )
    judge = make_agent({"model": "local/smollm2-135m", "style": "IO", "params": {"temperature": 0}})
    maker = DecisionMaker(None, style_instructions(PromptLibrary(PROMPTS_DIR)))
    judgements, calls = judge_decisions(rows, judge, maker, JudgePrompt(taxonomy, JUDGE_TEMPLATE), seed=1)
    row = judgements.row(0, named=True)
    assert row["status"] == "ok" and row["n_attempts"] == 1
    assert row["labels"] and set(row["labels"]) <= set(taxonomy.labels)
    assert 0 <= row["confidence"] <= 1
    assert calls.height == 1 and calls["prompt_tokens"][0] > 500
