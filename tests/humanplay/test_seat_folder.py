"""The seat protocol under a person's mistakes and races: answers sent at once (one wins, the
others get 409), questions of a run that has stopped (withdrawn, refused at once instead of waiting
for a verdict nobody will write), and requests the page's server must refuse in one status code."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from coopeval.agents.human.seat import SeatFolder
from coopeval.cli import main
from coopeval.humanplay.service import SeatDesk
from coopeval.humanplay.web import SeatServer

QUESTION = {"agent": "human/alice(IO)", "model": "human/alice", "kind": "action", "messages": [],
            "form": {"type": "text"}, "position": {"round": 1}, "attempt": 0}  # fmt: skip


def test_of_answers_sent_at_once_exactly_one_is_taken(tmp_path):
    folder = SeatFolder(tmp_path)
    senders = 6
    for n in range(30):
        qid = f"q{n}"
        folder.ask("alice", qid, QUESTION)
        barrier = threading.Barrier(senders)
        taken: list[str] = []

        def send(text: str, qid: str = qid, barrier: threading.Barrier = barrier, taken: list[str] = taken) -> None:
            barrier.wait()
            try:
                folder.submit("alice", qid, text)
            except KeyError:
                return
            taken.append(text)

        threads = [threading.Thread(target=send, args=(f"answer {i}",)) for i in range(senders)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(taken) == 1, f"question {qid}: {len(taken)} answers taken"
        assert folder.answer_of("alice", qid)["text"] == taken[0]  # the one told "taken" is the one stored
    assert not list(tmp_path.glob("alice/answers/.*.tmp"))  # no temporary file left behind


def _post(url: str, body: dict[str, str]) -> tuple[int, dict[str, object]]:
    request = urllib.request.Request(url + "api/answer", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json"})  # fmt: skip
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_page_tells_every_later_sender_409(tmp_path):
    folder = SeatFolder(tmp_path)
    folder.ask("alice", "q", QUESTION)

    def judge() -> None:  # the play job's side: read the answer, write the verdict
        while folder.answer_of("alice", "q") is None:
            threading.Event().wait(0.02)
        folder.close("alice", "q", {"valid": True, "error": "", "parsed": "yes"})

    job = threading.Thread(target=judge)
    job.start()
    results: list[tuple[int, dict[str, object]]] = []
    with SeatServer(tmp_path, port=0) as server:
        senders = [threading.Thread(target=lambda i=i: results.append(_post(server.url, {"seat": "alice", "id": "q", "text": f"a{i}"})))
                   for i in range(6)]  # fmt: skip
        for sender in senders:
            sender.start()
        for sender in senders:
            sender.join()
    job.join()
    assert sorted(code for code, _ in results) == [200, 409, 409, 409, 409, 409]
    assert [body for code, body in results if code == 200] == [{"valid": True, "error": "", "parsed": "yes"}]


def _ask_and_exit(root: Path, qid: str) -> None:
    """A play job that posts a question and ends (a stopped run)."""
    code = (f"from coopeval.agents.human.seat import SeatFolder; "
            f"SeatFolder({str(root)!r}).ask('alice', {qid!r}, {QUESTION!r})")  # fmt: skip
    subprocess.run([sys.executable, "-c", code], check=True)


def test_questions_of_a_stopped_run_are_withdrawn_and_refused_at_once(tmp_path):
    _ask_and_exit(tmp_path, "old")
    folder = SeatFolder(tmp_path)
    folder.ask("alice", "new", QUESTION)  # asked by a live run (this process)
    assert [q.id for q in folder.pending()] == ["new"]
    with pytest.raises(KeyError, match="belongs to a run that has stopped"):
        SeatDesk(tmp_path).answer("alice", "old", "yes", wait_s=30.0)  # refused at once, not after 30 s
    assert folder.answer_of("alice", "old") is None
    assert folder.withdraw_stale() == 1
    assert sorted(p.stem for p in (tmp_path / "alice" / "questions").iterdir()) == ["new"]


def _raw_request(url: str, head: str) -> str:
    port = int(url.rstrip("/").rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port), timeout=30) as conn:
        conn.sendall(head.encode())
        received = b""
        while chunk := conn.recv(65536):  # the server closes the connection after its reply
            received += chunk
        return received.decode("utf-8", "replace")


@pytest.mark.parametrize("length", ["abc", "-5", "1e3"])
def test_a_malformed_content_length_gets_400(tmp_path, length, capfd):
    with SeatServer(tmp_path, port=0) as server:
        reply = _raw_request(server.url, f"POST /api/answer HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                                         f"Content-Length: {length}\r\n\r\n")  # fmt: skip
    assert reply.startswith(("HTTP/1.0 400", "HTTP/1.1 400")), reply
    assert "Content-Length" in reply.split("\r\n\r\n", 1)[1]
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize("host", ["LOCALHOST", "LocalHost:8765", "127.0.0.1"])
def test_local_host_names_compare_case_insensitively(tmp_path, host):
    with SeatServer(tmp_path, port=0) as server:
        request = urllib.request.Request(server.url + "api/state", headers={"Host": host})
        with urllib.request.urlopen(request) as response:
            assert response.status == 200 and json.loads(response.read())["open"] == 0


@pytest.mark.parametrize(("option", "value", "expected"), [
    ("--port", "70000", "--port 70000: give a TCP port from 0 to 65535"),
    ("--port", "-1", "--port -1: give a TCP port from 0 to 65535"),
    ("--cores", "0", "--cores 0: give 1 or more cores"),
])  # fmt: skip
def test_option_values_out_of_range_exit_2_in_one_line(tmp_path, capsys, option, value, expected):
    assert main(["play-human", "--no-run", "--tty", option, value, "--seats", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.strip().count("\n") == 0


class _Person(io.StringIO):
    """A person at ``--tty``: notes the run's state shown when asked, then types ``lines``."""

    def __init__(self, root: Path, lines: str) -> None:
        super().__init__(lines)
        self.root = root
        self.states_seen: list[str] = []

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        self.states_seen.append(SeatDesk(self.root).state()["run"].get("state", ""))
        return super().readline()


def test_no_run_ends_by_itself_when_the_run_it_serves_has_ended(tmp_path, monkeypatch, capsys):
    folder = SeatFolder(tmp_path)
    folder.set_status({"state": "failed", "message": "snakemake exited 1"})  # left by an earlier run
    # a run started otherwise: one play job, in its own process group, asks, reads the answer, ends
    code = (f"import time; from coopeval.agents.human.seat import SeatFolder; f = SeatFolder({str(tmp_path)!r}); "
            f"f.ask('alice', 'q', {QUESTION!r})\n"
            "while f.answer_of('alice', 'q') is None: time.sleep(0.02)\n"
            "f.close('alice', 'q', {'valid': True, 'error': '', 'parsed': 'yes'})")  # fmt: skip
    job = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    threading.Thread(target=job.wait, daemon=True).start()  # reaped when it ends
    person = _Person(tmp_path, "yes\n.\n")
    monkeypatch.setattr(sys, "stdin", person)
    codes: list[int] = []
    session = threading.Thread(target=lambda: codes.append(main(["play-human", "--no-run", "--tty", "--seats", str(tmp_path)])),
                               daemon=True)  # fmt: skip
    session.start()
    session.join(timeout=120.0)  # hang guard: before the fix it never ended
    assert codes == [0]
    assert person.states_seen and "failed" not in person.states_seen  # the earlier run's failure is not shown
    assert folder.answer_of("alice", "q")["text"] == "yes"
    assert folder.status()["state"] == "ended"
