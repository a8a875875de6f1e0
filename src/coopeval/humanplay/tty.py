"""The terminal front end of the human seats (``coopeval play-human --tty``, e.g. over ssh).

Shows each open question's messages as a model receives them, then asks for the answer field by
field as the form spec says (:mod:`coopeval.agents.human.form`): a distribution as one
percentage per action (or one action's token for 100 % on it), a choice by its value, yes/no
for a boolean, a number or a line of text. Typing ``:text`` instead gives the whole answer as raw
text, as a model would (ended by a line holding only ``.``). The play job's parser judges every
answer; a refusal is printed with the parser's message and the re-ask follows.

Any terminal encoding works for what is shown: what the terminal cannot show is replaced (the
separator falls back to ASCII). What the person types is read as bytes and decoded with the
terminal's encoding, strictly: a line the encoding cannot read (a byte above 127 on an ASCII
terminal), or UTF-8 typed into a terminal whose locale says another encoding (Latin-1 would read
``Très`` as ``TrÃ¨s``), is refused with how to fix the locale, nothing is stored, and the field is
asked again.
"""

from __future__ import annotations

import codecs
import json
import time
from collections.abc import Callable
from typing import Any, TextIO

from coopeval.agents.human.seat import POLL_S, Question
from coopeval.humanplay.service import SeatDesk

__all__ = ["RAW", "play_in_terminal"]

RAW = ":text"
"""What a person types at any field to give the whole answer as text instead."""

RULE = "─" * 72
ASCII_RULE = "-" * 72


def _shows(stream: TextIO, text: str) -> bool:
    """Whether ``stream``'s encoding can write ``text``."""
    try:
        text.encode(getattr(stream, "encoding", None) or "utf-8")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


def _tolerate(stream: TextIO) -> None:
    """Let ``stream`` replace what its encoding cannot hold instead of raising."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")


class _RawRequested(Exception):
    """The person typed :data:`RAW`."""


class TerminalSeat:
    """One person at a terminal: reads from ``stdin``, writes to ``stdout`` (both switched to
    replace what their encoding cannot hold, e.g. on a Latin-1 or ASCII terminal)."""

    def __init__(self, desk: SeatDesk, stdin: TextIO, stdout: TextIO) -> None:
        self.desk = desk
        self.stdin = stdin
        self.stdout = stdout
        _tolerate(stdin)
        _tolerate(stdout)
        self.rule = RULE if _shows(stdout, RULE) else ASCII_RULE
        self.ellipsis = "…" if _shows(stdout, "…") else "..."

    def say(self, text: str = "") -> None:
        self.stdout.write(text + "\n")
        self.stdout.flush()

    def readline(self) -> str:
        """One line typed by the person, decoded strictly with the terminal's encoding; a line it
        cannot read is refused (one message naming the encoding and the locale fix) and read again."""
        while True:
            raw = getattr(self.stdin, "buffer", None)
            if raw is None:  # a text stream with no bytes below it (tests, pipes set up so)
                return self.stdin.readline()
            line = raw.readline()
            problem = _unreadable(line, getattr(self.stdin, "encoding", None) or "utf-8")
            if problem is None:
                return str(line.decode(getattr(self.stdin, "encoding", None) or "utf-8"))
            self.say(problem)

    def ask(self, prompt: str) -> str:
        """One line from the person (EOF ends the session)."""
        self.stdout.write(prompt)
        self.stdout.flush()
        line = self.readline()
        if not line:
            raise EOFError
        value = line.rstrip("\n")
        if value.strip() == RAW:
            raise _RawRequested
        return value

    def raw_text(self) -> str:
        """Lines until one holding only ``.``; the answer is the lines between, joined."""
        self.say("Type the whole answer; end it with a line holding only '.'")
        lines: list[str] = []
        while True:
            line = self.readline()
            if not line or line.rstrip("\n") == ".":
                return "\n".join(lines)
            lines.append(line.rstrip("\n"))

    def distribution(self, keys: list[str], labels: dict[str, str]) -> dict[str, Any]:
        """Percentages for ``keys``: ``60 40`` (one number per action, in order) or a token (100 % on it)."""
        named = ", ".join(f"{k} = {labels[k]}" if k in labels else k for k in keys)
        self.say(f"Actions: {named}. Type one percentage per action in this order (e.g. "
                 f"{' '.join(['100'] + ['0'] * (len(keys) - 1))}), or one action's token for 100 % on it.")
        line = self.ask("percentages> ").strip()
        if line in keys:
            return {k: 100 if k == line else 0 for k in keys}
        parts = line.replace(",", " ").split()
        # A count or a number that does not fit is sent as typed: the parser words the refusal.
        return {k: _json_number(parts[i]) if i < len(parts) else None for i, k in enumerate(keys)}

    def field(self, spec: dict[str, Any], labels: dict[str, str], hints: dict[str, str] | None = None) -> Any:
        """One field's value, as the web form would send it (a key's meaning, e.g. a contract's
        terms, and what its value means, e.g. who pays whom for a contract's number, shown above it)."""
        key, widget = spec["key"], spec["widget"]
        if key in labels:
            self.say(labels[key])
        if hints and key in hints:
            self.say(f"{key}: {hints[key]}")
        if widget == "choice":
            options = spec["options"]
            shown = " | ".join(json.dumps(o) for o in options)
            typed = self.ask(f"{key} ({shown})> ").strip()
            by_text = {str(o): o for o in options} | {json.dumps(o): o for o in options}
            return by_text.get(typed, typed)
        if widget == "boolean":
            typed = self.ask(f"{key} (yes/no)> ").strip().lower()
            return {"yes": True, "y": True, "true": True, "no": False, "n": False, "false": False}.get(typed, typed)
        if widget in ("integer", "number"):
            typed = self.ask(f"{key} (a number)> ")
            return _json_number(typed) if typed.strip() else None
        return self.ask(f"{key}> ")

    def answer_text(self, question: Question) -> str:
        """The answer text the form builds from the person's input."""
        form = question.data["form"]
        labels = dict((question.data.get("context") or {}).get("labels") or {})
        hints = dict((question.data.get("context") or {}).get("hints") or {})
        try:
            if form["type"] == "distribution":
                return json.dumps(self.distribution(list(form["keys"]), labels))
            if form["type"] == "fields":
                return json.dumps({f["key"]: self.field(f, labels, hints) for f in form["fields"]}, ensure_ascii=False)
        except _RawRequested:
            pass
        return self.raw_text()

    def show(self, question: Question) -> None:
        data = question.data
        self.say(self.rule)
        context = data.get("context") or {}
        if context.get("where"):
            self.say(str(context["where"]))
        if context.get("points") is not None:
            self.say(f"Your points so far in this match-up: {context['points']:g}")
        self.say(f"{data['agent']} · decision: {data['kind']} · attempt {int(data['attempt']) + 1}")
        for message in data["messages"]:
            self.say(f"[{message['role']}]")
            self.say(str(message["content"]))
        self.say(self.rule)
        refused = data.get("refused") or {}
        if int(data["attempt"]) > 0 and refused.get("error"):
            self.say(f"Your last answer here was refused by the parser: {refused['error']}")
        self.say(f"(type {RAW} at any field to give the whole answer as text)")

    def play(self, finished: Callable[[], bool]) -> int:
        """Answer open questions until ``finished()`` is true and none is open; 0, or 1 on EOF."""
        waiting_said = False
        while True:
            question = self.desk.next_question()
            if question is None:
                if finished():
                    self.say("The run finished: no question is open.")
                    return 0
                if not waiting_said:
                    self.say(f"Waiting for the next question{self.ellipsis}")
                    waiting_said = True
                time.sleep(POLL_S)
                continue
            waiting_said = False
            self.show(question)
            try:
                text = self.answer_text(question)
            except EOFError:
                self.say("\nInput closed; the question stays open (run play-human again to answer it).")
                return 1
            try:
                verdict = self.desk.answer(question.seat, question.id, text)
            except KeyError as exc:
                self.say(str(exc.args[0]))
                continue
            if verdict["valid"] is True:
                self.say(f"Accepted: {json.dumps(verdict['parsed'], ensure_ascii=False)}")
            elif verdict["valid"] is False:
                self.say(f"Refused by the parser: {verdict['error']}")
            else:
                self.say("Answer handed over; the run has not read it yet.")


def _unreadable(line: bytes, encoding: str) -> str | None:
    """Why a typed ``line`` cannot be read as text in the terminal's ``encoding`` (one message
    with the fix; nothing typed is stored), or ``None``."""
    name = codecs.lookup(encoding).name
    fix = ("set a UTF-8 locale and run play-human again (e.g. export LANG=C.UTF-8 LC_ALL=C.UTF-8, and a terminal "
           "set to UTF-8); nothing was stored, type the field again")
    try:
        line.decode(name)
    except UnicodeDecodeError:
        return f"This terminal's encoding ({name}) cannot read what was typed; {fix}"
    if name != "utf-8" and not line.isascii():
        try:
            line.decode("utf-8")
        except UnicodeDecodeError:
            return None  # bytes of the terminal's own encoding
        return f"What was typed is UTF-8, but this terminal's encoding is {name}: it would be stored wrongly; {fix}"
    return None


def _json_number(text: str) -> Any:
    """``text`` as a JSON number if it reads as one, else the text itself (the parser judges it)."""
    try:
        value = json.loads(text.strip())
    except ValueError:
        return text
    return value if isinstance(value, int | float) and not isinstance(value, bool) else text


def play_in_terminal(desk: SeatDesk, stdin: TextIO, stdout: TextIO, finished: Callable[[], bool]) -> int:
    """Play the open questions of ``desk`` at a terminal until the run is ``finished()``.

    Returns
    -------
    int
        0 when the run finished with no open question, 1 when the input closed first.
    """
    return TerminalSeat(desk, stdin, stdout).play(finished)
