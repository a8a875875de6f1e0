"""The seat page when an answer is not taken (issue 46, "the page"): the tab that loses a race
shows the server's reason in a notice, never in the green "accepted" box, and an answer sent after
``play-human`` stopped says the server is not answering instead of doing nothing visible."""

from __future__ import annotations

import os

from coopeval.agents.human import SeatFolder
from coopeval.humanplay.web import SeatServer
from tests.explorer.browser import require_chromium
from tests.humanplay.test_web_page import LocalChromium

VISIBLE = "(function(){var n=document.getElementById('notice'); return n && !n.hidden ? n.textContent : '';})()"


def _ask(folder: SeatFolder, qid: str) -> None:
    folder.ask("alice", qid, {
        "agent": "human/alice(IO)", "model": "human/alice", "kind": "action", "attempt": 0, "refused": None,
        "messages": [{"role": "user", "content": f"Question {qid}: choose A0 or A1."}],
        "form": {"type": "distribution", "keys": ["A0", "A1"]}, "position": {"round": 1, "seat": 0},
        "context": {"where": f"question {qid}"}, "pid": os.getpid(),
    })  # fmt: skip


def test_an_answer_not_taken_or_not_delivered_is_said_in_a_notice(tmp_path):
    require_chromium()
    seats = tmp_path / "seats"
    folder = SeatFolder(seats)
    _ask(folder, "q1")
    with LocalChromium(tmp_path / "profile", size=(1000, 800)) as browser, SeatServer(seats, port=0) as server:
        browser.open(server.url)
        browser.wait("typeof current !== 'undefined' && current && current.id === 'q1'", "the question shown")
        folder.submit("alice", "q1", '{"A0": 0, "A1": 100}')  # another tab answered first
        browser.evaluate("send('{\"A0\": 100, \"A1\": 0}'); true")
        browser.wait(VISIBLE + " !== ''", "the notice")
        assert browser.evaluate(VISIBLE) == "Your answer was not taken: no open question q1 for human/alice: another answer to it was taken first"
        assert browser.evaluate("document.getElementById('accepted').hidden") is True
        _ask(folder, "q2")
        browser.wait("typeof current !== 'undefined' && current && current.id === 'q2'", "the next question shown")
        server.stop()  # play-human stopped
        browser.evaluate("send('{\"A0\": 100, \"A1\": 0}'); true")
        browser.wait(VISIBLE + ".indexOf('not answering') >= 0", "the notice")
        assert browser.evaluate(VISIBLE).startswith("The seat server is not answering, so your answer was not delivered.")
        assert browser.evaluate("current.sent") is False  # it can be sent again
