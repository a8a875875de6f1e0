"""The seat protocol: how a question reaches a person and the person's answer comes back.

One folder per run (``COOPEVAL_HUMAN_SEATS``, default ``results/.human``) holds one sub-folder per
human agent (``human/alice`` → ``alice/``) with three kinds of JSON file, each named by the
question's id and written atomically (a temporary file moved into place):

``questions/<id>.json``
    written by the agent (:class:`~coopeval.agents.human.agent.HumanAgent`, inside the play job):
    the messages exactly as a model in that seat receives them, the form
    (:func:`coopeval.agents.human.form.form_for`), the decision kind, position and attempt, the
    wall time it was asked, and the process that asked it (``pid``, its process group
    ``group``). A question is open while that process lives: a question of a stopped run is
    withdrawn, since no run will read its answer (the resumed run asks it again).
``answers/<id>.json``
    written by a front end (the web page or the terminal, :mod:`coopeval.humanplay`): the raw
    answer text and the wall time it was given. It is created once (a hard link of a complete
    temporary file, which fails when the answer exists): of two answers sent at once, one wins
    and the other is refused.
``refusals/<place>.json``
    written by the agent when the parser refuses an answer (the answer and the parser's message),
    per decision (a hash of its position): the re-ask shows it, also when a restarted run posts
    the re-ask after replaying the refused attempt from the response cache.
``verdicts/<id>.json``
    written by the agent when it reads an answer: the real parser's verdict
    (:func:`coopeval.decisions.parsing.check_answer`), so the front end shows the person exactly
    the message a model would get in its re-ask.

Files survive a restart: a question asked again with the same id (same messages, position and
attempt) takes an answer already given, so a person is never asked twice even when the job was
killed before the response cache stored the answer. Front ends and play jobs may run in different
processes; nothing but these files is shared.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from coopeval.core.environment import env_value

__all__ = ["Question", "SeatFolder", "process_alive", "seats_root"]

POLL_S = 0.1
"""How often a waiting side looks for the other side's file, seconds."""

NAME_LIMIT = 200
"""Longest seat name or question id a front end may send, bytes (ids are 24 hex digits; a file
name may hold 255 bytes)."""


def seats_root(environ: Mapping[str, str] | None = None) -> Path:
    """The folder of every human seat of a run (``COOPEVAL_HUMAN_SEATS``, default ``results/.human``)."""
    return Path(str(env_value("COOPEVAL_HUMAN_SEATS", environ)))


def _write_json(path: Path, value: Mapping[str, Any]) -> None:
    """Write ``value`` as JSON to ``path`` atomically (a reader never sees half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(value, handle, ensure_ascii=False)
    os.replace(tmp, path)


def _create_json(path: Path, value: Mapping[str, Any]) -> bool:
    """Write ``value`` as JSON to ``path`` atomically unless ``path`` exists; whether it was written
    (of writers racing for one path exactly one wins)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(value, handle, ensure_ascii=False)
        os.link(tmp, path)
    except FileExistsError:
        return False
    finally:
        os.unlink(tmp)
    return True


def process_alive(pid: object) -> bool:
    """Whether ``pid`` (an int) names a live process on this machine (False for anything else)."""
    if not isinstance(pid, int) or isinstance(pid, bool) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        return dict(json.loads(path.read_text(encoding="utf-8")))
    except FileNotFoundError:
        return None


@dataclass(frozen=True)
class Question:
    """One question waiting for (or answered by) a person.

    Attributes
    ----------
    seat:
        The seat folder's name (the part of ``human/<name>`` after the prefix).
    id:
        The question id (a hash of model, messages, position and attempt).
    data:
        The question file's content: ``agent``, ``model``, ``kind``, ``messages`` (list of
        ``{"role", "content"}``), ``form``, ``position``, ``attempt`` (0-based), ``asked_at``
        (Unix seconds), ``pid`` and ``group`` (the asking process and its process group),
        ``context`` (:func:`coopeval.agents.human.context.seat_context`: where the question is
        from, what its keys mean, the points so far) and ``refused`` (on a re-ask: the refused
        answer's ``text`` and the parser's ``error``; else None).
    """

    seat: str
    id: str
    data: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        """``{"seat", "id", **data}`` for a front end."""
        return {"seat": self.seat, "id": self.id, **self.data}


class SeatFolder:
    """The files of every human seat below ``root`` (see the module docstring).

    Parameters
    ----------
    root:
        The run's seats folder (:func:`seats_root`).
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def _path(self, seat: str, kind: str, qid: str) -> Path:
        return self.root / seat / kind / f"{qid}.json"

    # -- the agent's side ------------------------------------------------------------------------

    def ask(self, seat: str, qid: str, question: Mapping[str, Any]) -> None:
        """Post a question (``asked_at`` is set to now, ``pid`` and ``group`` to this process and
        its process group, unless given)."""
        owner = {"asked_at": time.time(), "pid": os.getpid(), "group": os.getpgrp()}
        _write_json(self._path(seat, "questions", qid), {**owner, **question})

    def answer_of(self, seat: str, qid: str) -> dict[str, Any] | None:
        """The answer given to question ``qid`` (``{"text", "answered_at"}``), or None yet."""
        return _read_json(self._path(seat, "answers", qid))

    def note_refusal(self, seat: str, place: str, refusal: Mapping[str, Any] | None) -> None:
        """Keep (or, with None, drop) the last refused answer at decision ``place`` (``{"text",
        "error"}``), so a re-ask posted by a restarted run still shows it."""
        path = self._path(seat, "refusals", place)
        if refusal is None:
            path.unlink(missing_ok=True)
        else:
            _write_json(path, refusal)

    def refusal(self, seat: str, place: str) -> dict[str, Any] | None:
        """The last refused answer kept for decision ``place`` (:meth:`note_refusal`), or None."""
        return _read_json(self._path(seat, "refusals", place))

    def close(self, seat: str, qid: str, verdict: Mapping[str, Any]) -> None:
        """Record the parser's verdict of an answer and take the question off the list."""
        _write_json(self._path(seat, "verdicts", qid), verdict)
        self._path(seat, "questions", qid).unlink(missing_ok=True)

    # -- a front end's side ----------------------------------------------------------------------

    def _posted(self) -> list[Question]:
        found: list[Question] = []
        for path in self.root.glob("*/questions/*.json"):
            data = _read_json(path)
            if data is not None:
                found.append(Question(path.parent.parent.name, path.stem, data))
        return found

    def pending(self) -> list[Question]:
        """Open questions (without an answer, their asking process alive), oldest first (every seat)."""
        found = [q for q in self._posted() if process_alive(q.data.get("pid")) and not self._path(q.seat, "answers", q.id).exists()]
        return sorted(found, key=lambda q: (float(q.data.get("asked_at", 0.0)), q.seat, q.id))

    def withdraw_stale(self) -> int:
        """Delete the questions whose asking process has ended (no run will read their answers; a
        resumed run asks them again); the number withdrawn."""
        stale = [q for q in self._posted() if not process_alive(q.data.get("pid"))]
        for question in stale:
            self._path(question.seat, "questions", question.id).unlink(missing_ok=True)
        return len(stale)

    def submit(self, seat: str, qid: str, text: str) -> None:
        """Give the answer ``text`` to question ``qid`` of ``seat``; of answers sent at once exactly
        one is taken.

        Raises
        ------
        KeyError
            There is no such open question: answered already (by this or another answer), never
            asked, or asked by a run that has stopped (nobody would read the answer).
        ValueError
            ``seat`` or ``qid`` cannot name a file of the seat folder (empty, longer than
            :data:`NAME_LIMIT` bytes, a NUL, a slash or a backslash, ``.`` or ``..``).
        """
        for name, value in (("seat", seat), ("id", qid)):
            if not value or len(value.encode("utf-8", "surrogatepass")) > NAME_LIMIT or any(c in value for c in "\0/\\") or value in (".", ".."):
                raise ValueError(f"{name} {value[:40]!r}{'…' if len(value) > 40 else ''} is not a seat or question name "
                                 f"(1 to {NAME_LIMIT} bytes, no NUL, slash or backslash)")
        question = _read_json(self._path(seat, "questions", qid))
        if question is None:
            raise KeyError(f"no open question {qid} for human/{seat}: it was answered already or never asked")
        if not process_alive(question.get("pid")):
            raise KeyError(f"question {qid} for human/{seat} belongs to a run that has stopped; nobody will read "
                           "the answer (run play-human again: the resumed run asks what is still open)")
        if not _create_json(self._path(seat, "answers", qid), {"text": text, "answered_at": time.time()}):
            raise KeyError(f"no open question {qid} for human/{seat}: another answer to it was taken first")

    def verdict(self, seat: str, qid: str, wait_s: float = 0.0) -> dict[str, Any] | None:
        """The parser's verdict of the answer to ``qid`` (``{"valid", "error", "parsed"}``), waiting
        up to ``wait_s`` seconds for the play job to read the answer; None if it has not yet."""
        deadline = time.monotonic() + wait_s
        while True:
            found = _read_json(self._path(seat, "verdicts", qid))
            if found is not None or time.monotonic() >= deadline:
                return found
            time.sleep(POLL_S)

    # -- the run's status, written by coopeval play-human -----------------------------------------

    def set_status(self, status: Mapping[str, Any]) -> None:
        """Record the run's status (``{"state": "running" | "finished" | "failed" | "stopped",
        "message"}``), stamped with the time written (``at``, Unix seconds)."""
        _write_json(self.root / "run.json", {**status, "at": time.time()})

    def status(self) -> dict[str, Any]:
        """The run's status (``{}`` when no run wrote one)."""
        return _read_json(self.root / "run.json") or {}
