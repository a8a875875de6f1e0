"""One chunk of decisions (rows of :func:`coopeval.explorer.decision_sql.decision_query`) grouped
into episodes and split into parts of bounded size.

An episode is one ``matchup_id`` of a cell: a CoopEval match-up, a gossip run, an evolution
game (``g<generation>/<context>/game<k>``); decisions without a match-up (CoopEval's design
proposals) form the cell's ``(pre-play)`` episode.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from coopeval.explorer.decision_sql import LEFT_OUT, PRE_PLAY

__all__ = ["LEFT_OUT", "PRE_PLAY", "Decision", "Episode", "ascii_json", "chunk_episodes", "episode_key"]

ROW_FIELDS = ("cell_id", "matchup", "decision_id", "round", "seat", "agent", "kind", "status", "n_attempts", "truncated", "payload", "words")
"""The columns of a decision row, in the order :class:`Decision` takes them."""

NON_ASCII = re.compile(r"[^\x00-\x7f]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def ascii_json(text: str) -> str:
    """``text`` (JSON) with every non-ASCII character written as a ``\\uXXXX`` escape (UTF-16)."""
    return text if text.isascii() else NON_ASCII.sub(_escape, text)


def episode_key(cell_id: str, matchup: str) -> str:
    """File-safe key of an episode (16 hex digits of SHA-1 over cell and match-up)."""
    return hashlib.sha1(f"{cell_id}\0{matchup}".encode()).hexdigest()[:16]


@dataclass(slots=True)
class Decision:
    """One decision row: the fields the builder reads, its JSON and its replies' words."""

    cell_id: str
    matchup: str
    decision_id: str
    round: int | None
    seat: int | None
    agent: str
    kind: str
    status: str
    n_attempts: int | None
    truncated: bool
    payload: str
    words: list[str]

    @property
    def flagged(self) -> bool:
        """Failed, re-asked or truncated (listed on the run-wide flag pages)."""
        return self.status == "failed" or (self.n_attempts or 0) > 1 or self.truncated


@dataclass
class Episode:
    """The decisions of one match-up of a cell, in play order."""

    cell_id: str
    matchup: str
    key: str
    decisions: list[Decision] = field(default_factory=list)

    def parts(self, part_bytes: int) -> list[list[Decision]]:
        """The decisions in parts whose JSON reaches at most ``part_bytes`` (a larger decision alone)."""
        parts: list[list[Decision]] = [[]]
        size = 0
        for decision in self.decisions:
            if parts[-1] and size + len(decision.payload) > part_bytes:
                parts.append([])
                size = 0
            parts[-1].append(decision)
            size += len(decision.payload) + 1
        return parts

    def summary(self, n_parts: int) -> dict[str, Any]:
        """What the cell page lists about this episode."""
        agents: list[str] = []
        for d in sorted(self.decisions, key=lambda d: d.seat or 0):
            if d.agent not in agents:
                agents.append(d.agent)
        rounds = [d.round for d in self.decisions if d.round is not None]
        return {
            "key": self.key,
            "matchup": self.matchup,
            "parts": n_parts,
            "agents": agents,
            "rounds": [min(rounds), max(rounds)] if rounds else None,
            "decisions": len(self.decisions),
            "failed": sum(d.status == "failed" for d in self.decisions),
            "reasked": sum((d.n_attempts or 0) > 1 for d in self.decisions),
            "truncated": sum(d.truncated for d in self.decisions),
            "kinds": sorted({str(d.kind) for d in self.decisions}),
        }


def chunk_episodes(found: pa.Table) -> Iterator[Episode]:
    """The episodes of a chunk's decision rows (sorted by cell and match-up), in order."""
    columns = [found.column(name).to_pylist() for name in ROW_FIELDS]
    episode: Episode | None = None
    for values in zip(*columns, strict=True):
        decision = Decision(*values)
        decision.payload = ascii_json(decision.payload)
        if episode is None or episode.matchup != decision.matchup or episode.cell_id != decision.cell_id:
            if episode is not None:
                yield episode
            episode = Episode(decision.cell_id, decision.matchup, episode_key(decision.cell_id, decision.matchup))
        episode.decisions.append(decision)
    if episode is not None:
        yield episode
