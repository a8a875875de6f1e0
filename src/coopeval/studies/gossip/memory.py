"""Private memory and the public log, rendered as clean numbered text (docs/protocol/gossip.md#memory).

Two channels:

* the **public log**: one entry per published assessment (round, author = witness, subject =
  the judged agent, tone or signal, message), shown to everyone with gossip on;
* **private memory**: first-person entries of each agent's own interactions, including its own
  justification (the paper's reflection memory) when reflection is on.

Both are rendered as numbered lines. A cap (``max_entries``, 0 = unlimited) keeps only the most
recent entries in a prompt and warns once per run when it truncates. Every word of a rendered
channel comes from the study's templates (``log_entry``, ``log_signal``, ``log_toned``,
``log_empty``, ``memory_empty``, ``older_entries``), so a reworded line changes the cell ids.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

from coopeval.core.prompts import PromptLibrary


@dataclass(frozen=True)
class LogEntry:
    """One public assessment: ``author`` judged ``subject`` in ``round``.

    ``tone`` is the tone token ("" for Max's "No comment" and for binary signals); ``signal`` 1/0
    for binary conditions (None otherwise).
    """

    round: int
    author: str
    subject: str
    message: str
    tone: str = ""
    signal: int | None = None

    def content(self, show_tone: bool, prompts: PromptLibrary) -> str:
        """What was published: ``[praising] Thanks!`` (tone hidden: the message only; binary:
        ``signal 1``)."""
        if self.signal is not None:
            return prompts.render("log_signal", signal=self.signal)
        if show_tone and self.tone:
            return prompts.render("log_toned", tone=self.tone, message=self.message)
        return self.message

    def render(self, show_tone: bool, prompts: PromptLibrary) -> str:
        """``Round 3, Kate about Jack: [praising] Thanks!`` (template ``log_entry``)."""
        return prompts.render(
            "log_entry", round=self.round, author=self.author, subject=self.subject, content=self.content(show_tone, prompts)
        )


@dataclass
class Gossip:
    """A published (or attempted) assessment; ``ok`` False when the call failed."""

    ok: bool
    entry: LogEntry | None = None
    justification: str = ""
    word_count: int | None = None
    over_word_limit: bool | None = None


@dataclass
class Channel:
    """An append-only list of text entries with a capped, numbered rendering; ``empty`` names
    the template shown while the channel is empty."""

    prompts: PromptLibrary
    empty: str
    max_entries: int = 0
    warned: bool = False
    entries: list[str] = field(default_factory=list)

    def add(self, text: str) -> None:
        self.entries.append(text)

    def render(self) -> str:
        """Numbered lines ``1. …``; the most recent ``max_entries`` only if capped."""
        shown = self.entries
        skipped = 0
        if self.max_entries and len(shown) > self.max_entries:
            skipped = len(shown) - self.max_entries
            shown = shown[-self.max_entries :]
            if not self.warned:
                self.warned = True
                warnings.warn(
                    f"gossip memory/log cap reached: showing the last {self.max_entries} of "
                    f"{len(self.entries)} entries",
                    stacklevel=2,
                )
        if not shown:
            return self.prompts.render(self.empty)
        lines = [f"{skipped + i}. {text}" for i, text in enumerate(shown, start=1)]
        if skipped:
            lines.insert(0, self.prompts.render("older_entries", skipped=skipped))
        return "\n".join(lines)


@dataclass
class PublicLog:
    """The community log (docs/protocol/gossip.md#memory), worded by the study's templates ``prompts``."""

    prompts: PromptLibrary
    show_tone: bool = True
    max_entries: int = 0
    entries: list[LogEntry] = field(default_factory=list)
    _channel: Channel = field(init=False)

    def __post_init__(self) -> None:
        self._channel = Channel(self.prompts, "log_empty", self.max_entries)

    def add(self, entry: LogEntry) -> None:
        self.entries.append(entry)
        self._channel.add(entry.render(self.show_tone, self.prompts))

    def render(self) -> str:
        return self._channel.render()

    def about(self, subject: str) -> list[LogEntry]:
        """Entries judging ``subject``."""
        return [e for e in self.entries if e.subject == subject]

    def state(self) -> list[dict[str, object]]:
        """Structured form for bots: exactly what :meth:`render` shows (issue 13 kind 12a) — the
        most recent ``max_entries`` entries if capped, and the tone only when it is shown."""
        shown = self.entries[-self.max_entries :] if self.max_entries else self.entries
        return [
            {"round": e.round, "author": e.author, "subject": e.subject, "tone": e.tone if self.show_tone else None, "signal": e.signal}
            for e in shown
        ]


def fmt_units(x: float) -> str:
    """Units without a trailing ``.0`` (``10``, ``2.5``)."""
    return f"{x:g}" if abs(x - round(x, 2)) < 1e-9 else f"{x:.2f}"


def percent(part: float, whole: float) -> str:
    """``part`` as a percentage of ``whole`` (``10%``); ``n/a`` when ``whole`` ≤ 0."""
    return f"{100 * part / whole:.0f}%" if whole > 0 else "n/a"
