"""What both front ends (the web page and the terminal) do with the seat folder.

The front ends only show questions and hand answers over; the play job's agent runs the parser
(:mod:`coopeval.agents.human.seat`). :class:`SeatDesk` is the small API they share.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from coopeval.agents.human.seat import Question, SeatFolder

__all__ = ["VERDICT_WAIT_S", "SeatDesk"]

VERDICT_WAIT_S = 30.0
"""How long a front end waits for the play job's verdict on an answer, seconds (the job reads
answers every 0.1 s; a loaded machine may be slower)."""


class SeatDesk:
    """The front ends' view of a run's seat folder.

    Parameters
    ----------
    root:
        The seats folder (``COOPEVAL_HUMAN_SEATS``).
    """

    def __init__(self, root: str | Path) -> None:
        self.folder = SeatFolder(root)
        self.asked_by: set[int] = set()
        """Process groups of the runs whose questions this desk has shown (a run's processes)."""

    def _shown(self, question: Question | None) -> Question | None:
        if question is not None and isinstance(question.data.get("group"), int):
            self.asked_by.add(int(question.data["group"]))
        return question

    def next_question(self) -> Question | None:
        """The oldest open question of any seat, or None."""
        pending = self.folder.pending()
        return self._shown(pending[0] if pending else None)

    def state(self) -> dict[str, Any]:
        """``{"question": the oldest open question or None, "open": how many are open, "run": the
        run's status}`` (JSON)."""
        pending = self.folder.pending()
        self._shown(pending[0] if pending else None)
        return {
            "question": pending[0].to_json() if pending else None,
            "open": len(pending),
            "run": self.folder.status(),
        }

    def answer(self, seat: str, qid: str, text: str, wait_s: float = VERDICT_WAIT_S) -> dict[str, Any]:
        """Hand ``text`` to the open question and return the parser's verdict.

        Returns
        -------
        dict
            ``{"valid": bool, "error": str, "parsed": answer or None}`` as the play job's parser
            judged it, or ``{"valid": None, "error": "", "parsed": None}`` when the job has not read
            the answer within ``wait_s`` seconds (it is kept and read when the job runs).

        Raises
        ------
        KeyError
            No such open question (answered already, or never asked).
        """
        self.folder.submit(seat, qid, text)
        verdict = self.folder.verdict(seat, qid, wait_s)
        return verdict if verdict is not None else {"valid": None, "error": "", "parsed": None}
