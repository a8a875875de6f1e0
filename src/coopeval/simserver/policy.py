"""The simulated model's answer to one chat request, derived from the prompt alone.

The gossip study's prompts end with the verbatim JSON shape after ``Answer with a JSON object
of exactly this form:``; the evolution study's ask for ``Strategy: …``, ``My strategy will be
…`` or ``Justification: …`` / ``Answer: <number>`` (``Donate, x`` under costly punishment).
Every CoopEval prompt states its answer's shape (``resources/prompts/*.txt``): an example JSON
object after ``for example`` (actions, mediator and contract designs, votes), the literal
``{"sign": <true or false>}`` of a signature, or the judge's ``Shape of the reply:`` with its
numbered categories. :func:`answer` reads that shape from the **first** user message (a re-ask
repeats it; its later messages hold our error text) and fills it by the model's policy:

* ``cooperative``: all probability on the first listed action, approve and sign everything,
  contract payments 0, a mediator playing the first action for every delegator;
* ``defecting``: all probability on the last listed action, approve nothing, never sign, a
  mediator playing the last action;
* ``random``: a random valid answer (integer percents summing to 100, random booleans, random
  mediator actions; contract payments stay 0).

Randomness is seeded by the request's content (model, messages, seed), so the same request
always gets the same answer, whichever order requests arrive in. A CoT prompt (``step by
step``) gets two sentences of reasoning before the object, so its decisions are judged. With
probability ``malformed_rate`` (also content-seeded) the answer holds no JSON object.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

POLICIES = ("cooperative", "defecting", "random")

_REASONING = (
    "I compare what each action earns against what the other players are likely to do, "
    "weighing the immediate gain against the longer-run consequences. "
)
_JUDGE_CATEGORY = re.compile(r"^\s*\d+\.\s*([^:\n]+):", re.MULTILINE)
_FALLBACK = re.compile(r"pick ([A-Za-z][\w /-]*?)\.", re.MULTILINE)


@dataclass(frozen=True)
class Policy:
    """How one simulated model answers.

    ``kind`` is one of :data:`POLICIES`; ``malformed_rate`` in [0, 1] is the share of answers
    without a JSON object (exercising re-asks and failed decisions).

    Raises
    ------
    ValueError
        Unknown ``kind`` or a rate outside [0, 1].
    """

    kind: str = "random"
    malformed_rate: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in POLICIES:
            raise ValueError(f"policy {self.kind!r} is unknown; use one of {list(POLICIES)}")
        if not 0.0 <= self.malformed_rate <= 1.0:
            raise ValueError(f"malformed_rate {self.malformed_rate} must lie in [0, 1]")


_PLACEHOLDERS = {"<INT>": "0", "<true or false>": "true"}
_MEDIATOR_TOKENS = re.compile(r"can play the actions ([^.\n]+)\.")


def _example_object(text: str) -> dict[str, Any] | None:
    """The example object following the last ``for example`` in ``text``, or None.

    Our prompts write examples with placeholders (``{"A0": <INT>, "A1": <INT>}``,
    ``<true or false>``, ``"<ACTION>"``); they are read as 0, true and the string
    ``"<ACTION>"`` so that the value types tell the answer's shape.
    """
    at = text.rfind("for example ")
    if at < 0:
        return None
    start = text.find("{", at)
    if start < 0:
        return None
    end = text.find("}", start)
    snippet = text[start : end + 1] if end > 0 else text[start:]
    for placeholder, value in _PLACEHOLDERS.items():
        snippet = snippet.replace(placeholder, value)
    try:
        obj = json.loads(snippet)
    except json.JSONDecodeError:
        return None
    return obj if isinstance(obj, dict) else None


def _distribution(keys: Sequence[str], policy: str, rng: random.Random) -> dict[str, int]:
    if policy == "cooperative":
        return {k: 100 if i == 0 else 0 for i, k in enumerate(keys)}
    if policy == "defecting":
        return {k: 100 if i == len(keys) - 1 else 0 for i, k in enumerate(keys)}
    cuts = sorted(rng.randint(0, 100) for _ in range(len(keys) - 1))
    bounds = [0, *cuts, 100]
    return {k: bounds[i + 1] - bounds[i] for i, k in enumerate(keys)}


def _judge_answer(text: str, policy: str, rng: random.Random) -> dict[str, Any]:
    categories = [c.strip() for c in _JUDGE_CATEGORY.findall(text.split("Categories:", 1)[-1].split("Reply with", 1)[0])]
    fallback = _FALLBACK.search(text)
    names = [c for c in categories if c] or ([fallback.group(1)] if fallback else ["Other"])
    if policy == "random":
        picked = rng.sample(names, k=min(len(names), rng.randint(1, 2)))
    else:
        picked = [fallback.group(1) if fallback else names[-1]]
    return {
        "reasoning": "The answer weighs the payoffs of the actions.",
        "confidence": round(rng.uniform(0.5, 1.0), 2),
        "justification_type": ", ".join(picked),
    }


def answer_object(prompt: str, policy: str, rng: random.Random) -> dict[str, Any]:
    """The JSON answer to ``prompt`` (the first user message) under ``policy``.

    Raises
    ------
    ValueError
        The prompt states no answer shape this module knows (the message quotes its start).
    """
    if "Shape of the reply:" in prompt and "justification_type" in prompt:
        return _judge_answer(prompt, policy, rng)
    if '{"sign": <true or false>}' in prompt:
        sign = {"cooperative": True, "defecting": False}.get(policy, rng.random() < 0.5)
        return {"sign": sign}
    example = _example_object(prompt)
    if example is None:
        raise ValueError(f"no answer shape found in the prompt starting {prompt[:120]!r}")
    values = list(example.values())
    keys = list(example)
    if all(isinstance(v, bool) for v in values):  # approval votes
        if policy == "random":
            return {k: rng.random() < 0.5 for k in keys}
        return dict.fromkeys(keys, policy == "cooperative")
    if all(isinstance(v, int) for v in values):
        if "sum to exactly 100" in prompt:  # an action distribution
            return _distribution(keys, policy, rng)
        return dict.fromkeys(keys, 0)  # contract payments: 0 lies within every bound
    if all(isinstance(v, str) for v in values):  # mediator design: action tokens
        found = _MEDIATOR_TOKENS.search(prompt)
        if found is None:
            raise ValueError("a mediator design prompt without 'can play the actions ...'")
        tokens = [t.strip() for t in found.group(1).split(",")]
        if policy == "random":
            return {k: rng.choice(tokens) for k in keys}
        return dict.fromkeys(keys, tokens[0] if policy == "cooperative" else tokens[-1])
    raise ValueError(f"unsupported example answer {example!r}")


_GOSSIP_FORM = "Answer with a JSON object of exactly this form:"
_GOSSIP_MEMBER = re.compile(
    r'"(?P<key>\w+)": (?P<value>"<[^>]*>"|<number from (?P<low>[-\d.]+) to (?P<high>[-\d.]+)>'
    r'|(?:"[^"]*"|-?\d+)(?:\s*\|\s*(?:"[^"]*"|-?\d+))*)'
)
_EVO_RANGE = re.compile(r"between 0 and (\d+(?:\.\d+)?)")


def _gossip_answer(form: str, policy: str, rng: random.Random) -> dict[str, Any]:
    """Fill the gossip study's verbatim output shape (``{"justification": "<...>", "action":
    "cooperate" | "defect"}``, ``1 | 0``, ``<number from L to H>``): free text, the first
    (cooperative) or last (defecting) option, or the top / bottom of a range."""
    out: dict[str, Any] = {}
    for m in _GOSSIP_MEMBER.finditer(form):
        key, value = m.group("key"), m.group("value")
        if value.startswith('"<'):
            out[key] = "I keep my word and judge others by what they did."
        elif m.group("low") is not None:
            low, high = float(m.group("low")), float(m.group("high"))
            pick = {"cooperative": high, "defecting": low}.get(policy, round(rng.uniform(low, high), 1))
            out[key] = int(pick) if float(pick).is_integer() else pick
        else:
            options = [json.loads(o.strip()) for o in value.split("|")]
            out[key] = {"cooperative": options[0], "defecting": options[-1]}.get(policy, rng.choice(options))
    if not out:
        raise ValueError(f"no JSON members in the gossip output shape {form!r}")
    return out


def _evolution_text(prompt: str, policy: str, rng: random.Random) -> str | None:
    """The evolution study's text answers (strategies and donations), or None if not one."""
    if 'Reply with "Strategy:"' in prompt:
        return "Strategy: give half of my units to players who gave in their last round, and little to others."
    if 'begins with "My strategy will be"' in prompt:
        return "Reciprocity pays here. My strategy will be to give half to players who gave and little to others."
    if "Justification: <your short reasoning>" not in prompt:
        return None
    found = _EVO_RANGE.findall(prompt)
    top = float(found[-1]) if found else 0.0
    amount = {"cooperative": top / 2, "defecting": 0.0}.get(policy, rng.uniform(0, top))
    amount = round(amount, 1)
    number = f"{amount:g}"
    reply = f"Donate, {number}" if '"Donate, x"' in prompt else number
    return f"Justification: I match what my recipient gave before.\nAnswer: {reply}"


def answer(messages: Sequence[Mapping[str, Any]], policy: Policy, rng: random.Random) -> str:
    """The reply text to a chat request's ``messages`` (see the module docstring).

    Raises
    ------
    ValueError
        No user message, or a prompt without a known answer shape.
    """
    users = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    if not users:
        raise ValueError("the request has no user message")
    if rng.random() < policy.malformed_rate:
        return "I would rather not commit to an answer yet."
    prompt = "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "system") + users[0]
    evolution = _evolution_text(prompt, policy.kind, rng)
    if evolution is not None:
        return evolution
    if _GOSSIP_FORM in prompt:
        form = prompt.split(_GOSSIP_FORM, 1)[1].strip().splitlines()[0]
        return json.dumps(_gossip_answer(form, policy.kind, rng))
    obj = answer_object(prompt, policy.kind, rng)
    text = json.dumps(obj)
    if "step by step" in prompt and "Shape of the reply:" not in prompt:
        return _REASONING + "So my final answer is:\n" + text
    return text
