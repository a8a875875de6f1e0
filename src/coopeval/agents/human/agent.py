"""A person in a seat: the ``human/<name>`` agent (docs/human-play.md).

:class:`HumanAgent` answers a request the way a model does, except that the answer comes from a
person: it posts the request's messages (exactly what a model in that seat receives) and a form
(:func:`coopeval.agents.human.form.form_for`) to the seat folder
(:class:`~coopeval.agents.human.seat.SeatFolder`) and waits until a front end
(:mod:`coopeval.humanplay`) writes the person's answer. The decision loop then treats the reply
like a model's: the parser checks it, an invalid answer is re-asked with the parser's message
(the person sees the re-ask prompt), after the last attempt the decision is recorded as failed,
and nothing is substituted. Every attempt is a row of ``llm_calls`` with ``latency_s`` the
person's time to answer (seconds from asking to answering); the ``decisions`` row has
``agent`` ``human/<name>(<style>)``, and the provider is the model prefix ``human``.

The agent is cacheable: answers are stored in the response cache like any model's, so a run
restarted after a stop replays them and asks the person only what is still open.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Mapping
from typing import Any

from coopeval.agents.human.context import seat_context
from coopeval.agents.human.form import form_for
from coopeval.agents.human.seat import POLL_S, SeatFolder, seats_root
from coopeval.agents.protocol import DecisionRequest, ErrorClass, Reply
from coopeval.agents.provider import Provider
from coopeval.core.hashing import content_hash
from coopeval.decisions.parsing import check_answer

__all__ = ["HUMAN", "HumanAgent", "make_human"]

PREFIX = "human/"
NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A person's name after ``human/`` (it names a folder): letters, digits, ``_ . -``."""


class HumanAgent:
    """The agent of one person (``human/<name>``).

    Parameters
    ----------
    model:
        ``human/<name>``.
    style:
        ``"IO"`` or ``"CoT"``: the style instruction appended to the prompt, as for a model.
    label:
        Display name instead of the model string (``label(style)``).
    seats:
        The seat folder (default :func:`~coopeval.agents.human.seat.seats_root`, read when the
        first question is asked).

    ``cacheable`` is True and ``is_local`` True (no provider slot, no adaptive limit: a person is
    no remote endpoint); ``params`` is empty (nothing is sampled).
    """

    cacheable = True
    is_local = True

    def __init__(self, model: str, style: str = "IO", label: str | None = None, seats: SeatFolder | None = None) -> None:
        self.model = model
        self.style = style
        self.name = f"{label or model}({style})"
        self.params: Mapping[str, Any] = {}
        self.seat = model.removeprefix(PREFIX)
        self._seats = seats
        self._refusals: dict[str, dict[str, str]] = {}  # position → the last refused answer there and why

    @property
    def seats(self) -> SeatFolder:
        """The seat folder questions are posted to."""
        if self._seats is None:
            self._seats = SeatFolder(seats_root())
        return self._seats

    def question_id(self, request: DecisionRequest) -> str:
        """The id of a request's question: a hash of the model, the messages, the position and the
        attempt (the response cache's key without the sampling parameters, which a person has none of)."""
        attempt = int(request.state.get("attempt", 0))
        payload = {"model": self.model, "messages": [dict(m) for m in request.messages], "position": dict(request.position), "attempt": attempt}
        return content_hash(payload, 24)

    async def generate(self, request: DecisionRequest) -> Reply:
        """Post the question, wait for the person's answer, record the parser's verdict for the
        front end and return the answer as the reply (``latency_s``: time to answer, seconds).

        An answer already on file for the same question (a restart) is taken without asking again.
        """
        qid = self.question_id(request)
        place = content_hash(dict(request.position), 16)
        attempt = int(request.state.get("attempt", 0))
        answer = self.seats.answer_of(self.seat, qid)
        if answer is None:
            asked_at = time.time()
            self.seats.ask(
                self.seat,
                qid,
                {
                    "asked_at": asked_at,
                    "agent": self.name,
                    "model": self.model,
                    "kind": str(request.answer_format.kind),
                    "messages": [dict(m) for m in request.messages],
                    "form": form_for(request.answer_format),
                    "position": dict(request.position),
                    "attempt": attempt,
                    "context": seat_context(request.position, request.state, self.name),
                    "refused": (self._refusals.get(place) or self.seats.refusal(self.seat, place)) if attempt > 0 else None,
                },
            )
            while (answer := self.seats.answer_of(self.seat, qid)) is None:
                await asyncio.sleep(POLL_S)
        else:
            asked_at = float(answer["answered_at"])
        text = str(answer["text"])
        verdict = check_answer(request.answer_format, text)
        if verdict.valid:
            self._refusals.pop(place, None)
            self.seats.note_refusal(self.seat, place, None)
        else:  # shown above the re-ask, also on a page opened later or after a restart
            self._refusals[place] = {"text": text, "error": verdict.error}
            self.seats.note_refusal(self.seat, place, self._refusals[place])
        self.seats.close(self.seat, qid, {"valid": verdict.valid, "error": verdict.error, "parsed": verdict.parsed})
        latency = max(float(answer["answered_at"]) - asked_at, 0.0)
        return Reply(text=text, latency_s=latency, model_resolved=self.model, finish_reason="stop")

    def classify_error(self, exc: BaseException) -> ErrorClass:
        """No transport: anything raised is a bug and stops the job."""
        return ErrorClass.FATAL


def _model_error(model: str) -> str | None:
    name = model.removeprefix(PREFIX)
    if NAME_PATTERN.fullmatch(name):
        return None
    return f"{model!r} needs a person's name after 'human/' (letters, digits, '_', '.', '-'), e.g. human/alice"


def make_human(spec: Mapping[str, Any]) -> HumanAgent:
    """The agent of a config entry (``model: human/<name>``, optional ``style``, ``label``)."""
    return HumanAgent(str(spec["model"]), str(spec.get("style", "IO")), spec.get("label"))


HUMAN = Provider(
    name="human",
    prefix=PREFIX,
    factory=make_human,
    model_kind="person",
    model_error=_model_error,
)
"""``human/<name>``: a person answering through ``coopeval play-human`` (no key, no options, never retried)."""
