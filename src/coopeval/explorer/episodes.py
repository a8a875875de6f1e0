"""One cell's decisions grouped into episodes, with every attempt and the judge's labels.

An episode is one ``matchup_id`` of a cell: a CoopEval match-up, a gossip run, an evolution
game (``g<generation>/<context>/game<k>``); decisions without a match-up (CoopEval's design
proposals) form the cell's ``(pre-play)`` episode. Each decision carries its attempts from
``llm_calls`` in order: attempt 0 with the prompt messages as sent, later attempts with only
the messages added to it (the model's rejected reply and the re-ask text).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

PRE_PLAY = "(pre-play)"
"""Episode label of a cell's decisions that belong to no match-up."""

LEFT_OUT = "[left out of this site: built with --no-raw-replies]"

DECISION_FIELDS = (
    "decision_id", "matchup_id", "match_id", "round", "seat", "agent", "kind", "status", "parsed", "draw",
    "action", "action_token", "points", "base_points", "mediated", "n_attempts", "response", "error",
    "finish_reason", "truncated",
)  # fmt: skip
JUDGE_FIELDS = ("status", "labels", "confidence", "reasoning", "judge_model", "error")
ATTEMPT_FIELDS = (
    "attempt", "model", "response", "error", "finish_reason", "truncated", "prompt_tokens", "completion_tokens",
    "cost_usd", "latency_s", "cache_hit", "reasoning",
)  # fmt: skip


WORD = re.compile(r"[^\W_]{3,}")
"""A searchable word: three or more letters or digits (the page's search uses the same pattern)."""


def reply_words(decisions: list[dict[str, Any]]) -> set[str]:
    """The lower-cased words of the replies (every attempt's and the decision's own) of ``decisions``."""
    words: set[str] = set()
    for d in decisions:
        texts = [d.get("response") or ""] + [a.get("response") or "" for a in d["attempts"]]
        words.update(WORD.findall("\n".join(texts).lower()))
    return words


def episode_key(cell_id: str, matchup: str) -> str:
    """File-safe key of an episode (16 hex digits of SHA-1 over cell and match-up)."""
    return hashlib.sha1(f"{cell_id}\0{matchup}".encode()).hexdigest()[:16]


def _messages(prompt: Any) -> list[dict[str, str]]:
    if prompt is None or prompt == "":
        return []
    try:
        value = json.loads(prompt)
    except (TypeError, ValueError):
        return [{"role": "user", "content": str(prompt)}]
    if isinstance(value, list) and all(isinstance(m, dict) for m in value):
        return [{"role": str(m.get("role", "")), "content": m.get("content") if isinstance(m.get("content"), str) else json.dumps(m.get("content"))} for m in value]
    return [{"role": "user", "content": str(prompt)}]


def _attempts(calls: list[dict[str, Any]], raw_replies: bool) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    first: list[dict[str, str]] = []
    for call in calls:
        messages = _messages(call.get("prompt"))
        entry: dict[str, Any] = {k: call.get(k) for k in ATTEMPT_FIELDS}
        if not out:
            first = messages
            entry["messages"], entry["added"] = messages, False
        elif messages[: len(first)] == first:
            entry["messages"], entry["added"] = messages[len(first) :], True
        else:
            entry["messages"], entry["added"] = messages, False
        if not raw_replies:
            entry["response"] = LEFT_OUT if entry.get("response") else entry.get("response")
            entry["reasoning"] = None
            kept = messages[len(first) :] if entry["added"] else messages
            entry["messages"] = [m if m["role"] != "assistant" else {"role": "assistant", "content": LEFT_OUT} for m in kept]
        out.append(entry)
    return out


@dataclass
class Episode:
    """The decisions of one match-up of a cell, in play order, split into parts of bounded size."""

    cell_id: str
    matchup: str
    key: str
    decisions: list[dict[str, Any]] = field(default_factory=list)

    def summary(self, n_parts: int) -> dict[str, Any]:
        """What the cell page lists about this episode."""
        agents: list[str] = []
        for d in sorted(self.decisions, key=lambda d: (d.get("seat") or 0)):
            if d["agent"] not in agents:
                agents.append(d["agent"])
        rounds = [d["round"] for d in self.decisions if d.get("round") is not None]
        return {
            "key": self.key,
            "matchup": self.matchup,
            "parts": n_parts,
            "agents": agents,
            "rounds": [min(rounds), max(rounds)] if rounds else None,
            "decisions": len(self.decisions),
            "failed": sum(d["status"] == "failed" for d in self.decisions),
            "reasked": sum((d.get("n_attempts") or 0) > 1 for d in self.decisions),
            "truncated": sum(bool(d.get("truncated")) for d in self.decisions),
            "kinds": sorted({str(d["kind"]) for d in self.decisions}),
        }


def cell_episodes(
    cell_id: str, found: list[dict[str, Any]], calls: list[dict[str, Any]], judgements: list[dict[str, Any]], *, raw_replies: bool
) -> Iterator[Episode]:
    """The episodes of ``cell_id``, each decision with ``attempts`` and (if judged) ``judge``.

    ``found`` are the cell's ``decisions`` rows in play order (match-up, round, seat), ``calls``
    its ``llm_calls`` rows ordered by decision and attempt, ``judgements`` its judge rows.
    """
    by_decision: dict[str, list[dict[str, Any]]] = {}
    for call in calls:
        by_decision.setdefault(str(call["decision_id"]), []).append(call)
    labels = {str(j["decision_id"]): {k: j.get(k) for k in JUDGE_FIELDS} for j in judgements}
    if not raw_replies:
        for judged in labels.values():
            judged["reasoning"] = LEFT_OUT if judged.get("reasoning") else judged.get("reasoning")
    episode: Episode | None = None
    for row in found:
        matchup = row.get("matchup_id") or PRE_PLAY
        if episode is None or episode.matchup != matchup:
            if episode is not None:
                yield episode
            episode = Episode(cell_id, matchup, episode_key(cell_id, matchup))
        decision = {k: row.get(k) for k in DECISION_FIELDS}
        if not raw_replies and decision.get("response"):
            decision["response"] = LEFT_OUT
        decision["attempts"] = _attempts(by_decision.pop(str(row["decision_id"]), []), raw_replies)
        if decision["attempts"] and decision["attempts"][-1]["response"] == decision["response"]:
            decision["response"] = None  # stored once, in its attempt
        decision["judge"] = labels.get(str(row["decision_id"]))
        episode.decisions.append(decision)
    if episode is not None:
        yield episode
