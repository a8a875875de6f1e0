"""The seat protocol: how a question reaches a person and the person's answer comes back.

One folder per run (``COOPEVAL_HUMAN_SEATS``, default ``results/.human``) holds one sub-folder per
human agent (``human/alice`` → ``alice/``) with three kinds of JSON file, each named by the
question's id and written atomically (a temporary file moved into place):

``questions/<id>.json``
    written by the agent (:class:`~coopeval.agents.human.agent.HumanAgent`, inside the play job):
    the messages exactly as a model in that seat receives them, the form
    (:func:`coopeval.agents.human.form.form_for`), the decision kind, position and attempt, and the
    wall time it was asked.
``answers/<id>.json``
    written by a front end (the web page or the terminal, :mod:`coopeval.humanplay`): the raw
    answer text and the wall time it was given.
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

__all__ = ["Question", "SeatFolder", "seats_root"]

POLL_S = 0.1
"""How often a waiting side looks for the other side's file, seconds."""


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
        (Unix seconds).
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
        """Post a question (``asked_at`` is set to now unless given)."""
        _write_json(self._path(seat, "questions", qid), {"asked_at": time.time(), **question})

    def answer_of(self, seat: str, qid: str) -> dict[str, Any] | None:
        """The answer given to question ``qid`` (``{"text", "answered_at"}``), or None yet."""
        return _read_json(self._path(seat, "answers", qid))

    def close(self, seat: str, qid: str, verdict: Mapping[str, Any]) -> None:
        """Record the parser's verdict of an answer and take the question off the list."""
        _write_json(self._path(seat, "verdicts", qid), verdict)
        self._path(seat, "questions", qid).unlink(missing_ok=True)

    # -- a front end's side ----------------------------------------------------------------------

    def pending(self) -> list[Question]:
        """Questions without an answer, oldest first (every seat)."""
        found: list[Question] = []
        for path in self.root.glob("*/questions/*.json"):
            seat, qid = path.parent.parent.name, path.stem
            data = _read_json(path)
            if data is not None and not self._path(seat, "answers", qid).exists():
                found.append(Question(seat, qid, data))
        return sorted(found, key=lambda q: (float(q.data.get("asked_at", 0.0)), q.seat, q.id))

    def submit(self, seat: str, qid: str, text: str) -> None:
        """Give the answer ``text`` to question ``qid`` of ``seat``.

        Raises
        ------
        KeyError
            There is no such open question (already answered, or never asked).
        """
        if not self._path(seat, "questions", qid).exists() or self._path(seat, "answers", qid).exists():
            raise KeyError(f"no open question {qid} for human/{seat}: it was answered already or never asked")
        _write_json(self._path(seat, "answers", qid), {"text": text, "answered_at": time.time()})

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
