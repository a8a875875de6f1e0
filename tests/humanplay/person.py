"""A scripted person: answers the open questions of a seat folder from a background thread,
through the same desk the front ends use (:class:`coopeval.humanplay.service.SeatDesk`)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from coopeval.agents.human.seat import Question
from coopeval.humanplay.service import SeatDesk

Answerer = Callable[[Question], str]


def first_choice(question: Question) -> str:
    """A valid answer to any JSON form: 100 % on the first action; the first option, ``true``,
    ``0`` or a short text per field; a text form gets ``"yes"``."""
    form = question.data["form"]
    if form["type"] == "distribution":
        return json.dumps({k: 100 if i == 0 else 0 for i, k in enumerate(form["keys"])})
    if form["type"] == "fields":
        values = {"boolean": True, "integer": 0, "number": 0, "text": "fair enough"}
        return json.dumps({f["key"]: f["options"][0] if f["widget"] == "choice" else values[f["widget"]] for f in form["fields"]})
    return "yes"


class ScriptedPerson:
    """Answers every question ``answer(question)`` says, after ``delay_s`` seconds, until it has
    given ``max_answers`` answers (None: no limit); keeps each question and the verdict the desk
    returned (``log``: ``(question, text, verdict)``)."""

    def __init__(self, root: Path, answer: Answerer = first_choice, delay_s: float = 0.0, max_answers: int | None = None) -> None:
        self.desk = SeatDesk(root)
        self.answer = answer
        self.delay_s = delay_s
        self.max_answers = max_answers
        self.log: list[tuple[Question, str, dict[str, Any]]] = []
        self._stop = threading.Event()

    def _run(self) -> None:
        while not self._stop.is_set():
            question = self.desk.next_question() if self.max_answers is None or len(self.log) < self.max_answers else None
            if question is None:
                time.sleep(0.02)
                continue
            time.sleep(self.delay_s)
            text = self.answer(question)
            self.log.append((question, text, self.desk.answer(question.seat, question.id, text)))

    @contextmanager
    def sitting(self) -> Iterator[ScriptedPerson]:
        """Answer in a background thread while the block runs."""
        thread = threading.Thread(target=self._run, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self._stop.set()
            thread.join()
