"""Real calls to the embedded model ``local/smollm2-135m`` (xllamacpp, grammar-constrained).

Every decision kind must come back valid under the project's parser; a request evaluated in full
(``cache_prompt=False``) gives the text of the same request on an empty cache; the prompt cache
restores a seat's earlier prompt. All calls run in one event loop
(docs/protocol/engineering.md#litellm: one ``asyncio.run`` per process).
"""

from __future__ import annotations

import asyncio
import os
import re
from typing import Any

import pytest

pytestmark = pytest.mark.local_llm

os.environ.setdefault("LITELLM_OFFLINE_MODE", "true")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
pytest.importorskip("xllamacpp")
pytest.importorskip("litellm")

from coopeval.agents.llm_agent import LiteLLMAgent  # noqa: E402
from coopeval.agents.local import (  # noqa: E402
    LocalContextWindowError,
    LocalModelMissingError,
    last_call_stats,
    local_model_path,
)
from coopeval.agents.protocol import DecisionRequest, Reply  # noqa: E402
from coopeval.agents.retry import generate_with_retry  # noqa: E402
from coopeval.decisions.formats import (  # noqa: E402
    ActionDistribution,
    AnswerFormat,
    ContractDesign,
    ContractVote,
    JudgeLabels,
    MediatorDesign,
    MediatorVote,
    Signature,
)
from coopeval.decisions.parsing import parse_answer  # noqa: E402

MODEL = "local/smollm2-135m"
LABELS = (
    "Individual utility maximization",
    "Strategic equilibrium focus",
    "Social welfare maximization",
    "Inequity aversion",
    "Reciprocity",
    "Strategic influence",
    "Trust evaluation",
    "Competitiveness",
    "Uncertainty evaluation",
    "Social norm conformity",
    "Rule misunderstanding",
    "Exploration-exploitation trade-off",
    "Risk aversion",
    "Strategy legibility",
    "Multidimensional reasoning",
)
GAME = (
    "You play a decision game with one other player and want as many points as possible. "
    "Actions: A0 (cooperate) and A1 (defect). Both A0: 3 points each. Both A1: 1 point each. "
    "If one plays A1 and the other A0, the A1 player gets 5 and the A0 player 0. You are Player 1. "
)
A2 = ActionDistribution(("A0", "A1"))
A5 = ActionDistribution(tuple(f"A{i}" for i in range(5)))

CASES: dict[str, tuple[str, AnswerFormat, str, int]] = {
    # name: (style, format, prompt, seed)
    "action2_io": (
        "IO",
        A2,
        GAME + "Give integer percentages for A0 and A1 summing to 100 as JSON.",
        11,
    ),
    "action5_io": (
        "IO",
        A5,
        "Travellers' dilemma. Claims A0..A3, A4 delegates to the mediator. "
        "Give integer percentages for all of A0..A4 summing to 100 as JSON.",
        12,
    ),
    "action2_cot": (
        "CoT",
        A2,
        GAME + "Think step by step, then end with the JSON distribution.",
        13,
    ),
    "action5_cot": (
        "CoT",
        A5,
        "Choose percentages for A0..A4 (sum 100). Think first, then JSON.",
        14,
    ),
    "mediator_design": (
        "IO",
        MediatorDesign.for_players(2, ("A0", "A1")),
        GAME + "Design a mediator: for 1 and 2 delegating players, which action should it play?",
        15,
    ),
    "mediator_vote": (
        "IO",
        MediatorVote.over(2),
        GAME + "Approve mediators M1 and M2? JSON booleans.",
        16,
    ),
    "contract_design": (
        "IO",
        ContractDesign(("A0", "A1")),
        GAME + "Propose a side payment (integer) for each action.",
        17,
    ),
    "contract_vote": ("IO", ContractVote.over(2), GAME + "Approve contracts C1 and C2?", 18),
    "sign": ("IO", Signature(), GAME + "Do you sign the contract?", 19),
    "judge": (
        "IO",
        JudgeLabels(LABELS),
        "Classify the strategy in this text: 'I defect because "
        "defection always pays more, whatever the other player does.' Answer with JSON.",
        20,
    ),
}


TWIST = (
    "Twist: the game is repeated with the same player. After each round another round follows "
    "with probability 80%. The actions drawn for you are shown to the other player in later "
    "rounds and may change how they play. "
)


def _seat_request(seat: int, round_: int) -> DecisionRequest:
    prompt = (
        GAME.replace("You are Player 1. ", f"You are Player {seat}. ")
        + TWIST
        + f"Rounds played so far: {round_ - 1}. Give percentages for A0 and A1 as JSON."
    )
    return DecisionRequest(({"role": "user", "content": prompt},), A2, seed=30 + seat)


def _request(style_fmt_prompt_seed: tuple[str, AnswerFormat, str, int]) -> DecisionRequest:
    _, fmt, prompt, seed = style_fmt_prompt_seed
    return DecisionRequest(({"role": "user", "content": prompt},), fmt, seed=seed)


@pytest.fixture(scope="module")
def replies() -> dict[str, Any]:
    try:
        local_model_path("smollm2-135m")
    except LocalModelMissingError as exc:
        pytest.skip(str(exc))

    async def play() -> dict[str, Any]:
        agents = {
            "IO": LiteLLMAgent(MODEL, "IO"),
            "CoT": LiteLLMAgent(MODEL, "CoT", {"max_reasoning_chars": 200}),
        }
        out: dict[str, Any] = {}
        for name, case in CASES.items():
            out[name] = await generate_with_retry(agents[case[0]], _request(case))
        out["stats_first"] = dict(last_call_stats())  # the judge case: a prompt after others
        # forced full evaluation after other prompts: the text of the first call of the process
        # (action2_io, evaluated on an empty cache); CoT: a long text, where any difference in
        # the logits would show
        fresh = LiteLLMAgent(MODEL, "IO", {"cache_prompt": False})
        out["action2_io_fresh"] = await fresh.generate(_request(CASES["action2_io"]))
        out["stats_fresh"] = dict(last_call_stats())
        # two seats alternate: seat 1's second prompt shares its long twist with seat 1's first
        # prompt only, so the runtime's prompt cache restores that first prompt
        for label, seat, round_ in (("s1r1", 1, 1), ("s2r1", 2, 1), ("s1r2", 1, 2)):
            out[f"reply_{label}"] = await agents["CoT"].generate(_seat_request(seat, round_))
            out[f"stats_{label}"] = dict(last_call_stats())
        # last (they leave other prompts in the KV cache): a prompt that fits n_ctx only
        # without its answer budget, and an answer cut at max_tokens
        near_full = DecisionRequest(({"role": "user", "content": "apple " * 3800},), A2, seed=1)
        try:
            await LiteLLMAgent(MODEL, "IO", {"max_tokens": 400}).generate(near_full)
        except Exception as exc:
            out["window_error"] = exc
        too_long = DecisionRequest(({"role": "user", "content": "apple " * 5000},), A2, seed=1)
        try:
            await LiteLLMAgent(MODEL, "IO").generate(too_long)
        except Exception as exc:
            out["too_long_error"] = exc
        cut = LiteLLMAgent(MODEL, "CoT", {"max_tokens": 5})
        out["cut"] = await cut.generate(_request(CASES["action2_cot"]))
        return out

    return asyncio.run(play())


@pytest.mark.parametrize("name", list(CASES))
def test_every_decision_kind_validates(replies: dict[str, Reply], name: str) -> None:
    style, fmt, _, _ = CASES[name]
    reply = replies[name]
    parsed = parse_answer(fmt, reply.text)
    assert parsed
    # which weights answered: the shipped Q4_1 file re-encoded as Q8_0, with its sha256 prefix
    assert re.fullmatch(MODEL + r"@SmolLM2-135M-Instruct\.Q8_0\.[0-9a-f]{16}\.gguf@Q8_0:[0-9a-f]{16}", reply.model_resolved)
    assert reply.cost_usd == 0.0
    assert reply.prompt_tokens > 0 and reply.completion_tokens > 0
    assert reply.latency_s > 0
    if style == "IO":
        assert reply.text.startswith("{"), reply.text
    else:
        assert "\n{" in reply.text and reply.text.count("{") == 1


def test_five_action_distribution(replies: dict[str, Reply]) -> None:
    for name in ("action5_io", "action5_cot"):
        parsed = parse_answer(A5, replies[name].text)
        assert list(parsed) == ["A0", "A1", "A2", "A3", "A4"]
        assert sum(parsed.values()) == 100


def test_full_evaluation_gives_the_text_of_an_empty_cache(replies: dict[str, Any]) -> None:
    # action2_io was the process's first call (empty cache); the fresh call came after ten others
    assert replies["stats_fresh"]["cached_prompt_tokens"] == 0.0
    assert replies["action2_io_fresh"].text == replies["action2_io"].text
    assert replies["action2_io_fresh"].cached_prompt_tokens == 0


def test_prompt_cache_restores_the_seat_prefix(replies: dict[str, Any]) -> None:
    s2, s1 = replies["stats_s2r1"], replies["stats_s1r2"]
    # seat 1's second prompt reuses the game, seat line and twist, not just the game text
    assert s1["cached_prompt_tokens"] > s2["cached_prompt_tokens"] + 30
    reply = replies["reply_s1r2"]
    assert reply.cached_prompt_tokens == s1["cached_prompt_tokens"]
    assert reply.cached_prompt_tokens + s1["evaluated_prompt_tokens"] == reply.prompt_tokens


def test_cot_reasoning_is_capped(replies: dict[str, Reply]) -> None:
    for name in ("action2_cot", "action5_cot"):
        reasoning, _, _ = replies[name].text.rpartition("\n{")
        assert len(reasoning) <= 200
        # issue 13, 12(b): the reasoning, if any, ends with a sentence terminator
        assert reasoning == "" or reasoning[-1] in ".!?:", reasoning


def test_prompt_that_leaves_no_room_for_max_tokens_fails(
    replies: dict[str, Any],
) -> None:
    # llama.cpp would end the answer at the window without saying so; the call must fail instead.
    exc = replies["window_error"]
    assert isinstance(exc, LocalContextWindowError)  # unwrapped: the decision loop fails the decision
    assert LiteLLMAgent(MODEL, "IO").classify_error(exc).value == "fatal"
    match = re.search(r"the prompt has (\d+) tokens and max_tokens = 400: more than the context window n_ctx = 4096 .*COOPEVAL_LLAMA_CTX", str(exc))
    assert match is not None, str(exc)
    assert int(match.group(1)) < 4096 < int(match.group(1)) + 400


def test_prompt_longer_than_the_window_gets_the_projects_message(replies: dict[str, Any]) -> None:
    exc = replies["too_long_error"]
    assert isinstance(exc, LocalContextWindowError)
    match = re.search(r"the prompt has (\d+) tokens and max_tokens = \d+: more than the context window n_ctx = 4096 of the embedded model \(no token is left for the answer\); .*raise COOPEVAL_LLAMA_CTX", str(exc))
    assert match is not None, str(exc)
    assert int(match.group(1)) > 5000  # "apple " is at least one token per word


def test_answer_cut_at_max_tokens_is_flagged(replies: dict[str, Any]) -> None:
    cut = replies["cut"]
    assert (cut.finish_reason, cut.truncated, cut.max_tokens, cut.completion_tokens) == ("length", True, 5, 5)
    full = replies["action2_cot"]
    assert (full.finish_reason, full.truncated) == ("stop", False)
