"""The terminal front end (``coopeval play-human --tty``) driven through a pseudo-terminal.

``coopeval play-human --tty --no-run`` runs in a child process on a pty, as over ssh; cells with
a ``human/alice`` seat are played in this process against the same seat folder. The scripted
person types a distribution that sums to 90 (the parser's refusal is printed in its own words and
the re-ask follows), then plays with action tokens, and goes through a Contracting round (numbers,
yes/no). When the run is marked finished the command exits 0.
"""

from __future__ import annotations

import io
import json
import os
import re
import select
import subprocess
import sys
import threading
import time

import polars as pl

from coopeval.agents.human import HumanAgent, SeatFolder
from coopeval.decisions.formats import ActionDistribution
from coopeval.decisions.parsing import check_answer
from tests.helpers import make_cell, play_spec

WAIT_S = 60.0
"""Longest wait for the terminal to print what is expected (a hang guard, not a timing)."""

PROMPTS = re.compile(r"(percentages> |\(a number\)> |\(yes/no\)> |The run finished)")


class Terminal:
    """The child's pseudo-terminal: what it printed so far, and typing into it."""

    def __init__(self, command: list[str], env: dict[str, str]) -> None:
        self.master, slave = os.openpty()
        self.process = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, env=env, close_fds=True)
        os.close(slave)
        self.output = ""
        self.read_upto = 0

    def expect(self, pattern: re.Pattern[str]) -> re.Match[str]:
        """Read until ``pattern`` matches the output after the last match; return the match."""
        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            match = pattern.search(self.output, self.read_upto)
            if match:
                self.read_upto = match.end()
                return match
            ready, _, _ = select.select([self.master], [], [], 0.1)
            if ready:
                try:
                    self.output += os.read(self.master, 65536).decode("utf-8", "replace")
                except OSError:  # the child closed the terminal
                    break
        raise AssertionError(f"the terminal never printed {pattern.pattern!r}; it printed:\n{self.output[-3000:]}")

    def type(self, line: str) -> None:
        os.write(self.master, (line + "\n").encode())

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait(timeout=30)
        os.close(self.master)


def test_a_person_plays_in_the_terminal(tmp_path):
    seats = tmp_path / "seats"
    seats.mkdir()
    human = HumanAgent("human/alice", seats=SeatFolder(seats))
    env = {**os.environ, "COLUMNS": "120"}
    command = [sys.executable, "-m", "coopeval.cli", "play-human", "--tty", "--no-run", "--seats", str(seats)]
    terminal = Terminal(command, env)
    results: dict[str, dict[str, pl.DataFrame]] = {}

    def play() -> None:
        for mechanism in ("NoMechanism", "Contracting"):
            results[mechanism] = play_spec(make_cell(mechanism, "prisoners_dilemma", [human, "tit-for-tat"]), [human, "tit-for-tat"])[0]
        SeatFolder(seats).set_status({"state": "finished", "message": "done"})

    game = threading.Thread(target=play, daemon=True)
    game.start()
    try:
        terminal.expect(re.compile(r"percentages> "))
        assert "Choose a probability distribution over the actions A0, A1" in terminal.output
        terminal.type("60 30")
        refusal = terminal.expect(re.compile(r"Refused by the parser: (.*)\r?\n"))
        expected = check_answer(ActionDistribution(("A0", "A1")), '{"A0": 60, "A1": 30}').error
        assert refusal.group(1).strip() == expected
        typed: list[str] = []
        while True:
            prompt = terminal.expect(PROMPTS).group(1)
            if prompt.startswith("The run finished"):
                break
            answer = {"percentages> ": "A1", "(a number)> ": "-2", "(yes/no)> ": "yes"}[prompt]
            typed.append(answer)
            terminal.type(answer)
        game.join()
        assert terminal.process.wait(timeout=WAIT_S) == 0
        # what a contract's numbers mean, above their fields, and the contract above the signature
        shown = terminal.output.replace("\r\n", "\n")
        assert ("A0: Points X (a whole number) attached to Cooperate (A0): a player who plays it receives X points, paid by the "
                "other player, if X is above 0; pays |X| points, which go to the other player, if X is below 0") in shown
        assert "A1: Points X (a whole number) attached to Defect (A1): " in shown
        assert ("The contract to sign (proposed by Player 1):\n- A0 (Cooperate): the player who plays it pays 2 points, which go "
                "to the other player\n- A1 (Defect): the player who plays it pays 2 points") in shown
        assert "sign: yes: sign this contract; it comes into force only if every player signs it" in shown
    finally:
        terminal.close()
    plain = results["NoMechanism"]["decisions"].filter(pl.col("agent") == "human/alice(IO)")
    # two seats of the self-play match-up and one in each match-up with the bot
    assert plain.height == 4 and set(plain["parsed"]) == {json.dumps({"A0": 0, "A1": 100})}
    assert sorted(plain["n_attempts"].to_list()) == [1, 1, 1, 2]
    contract = results["Contracting"]["decisions"].filter(pl.col("agent") == "human/alice(IO)")
    by_kind = {k: set(contract.filter(pl.col("kind") == k)["parsed"]) for k in set(contract["kind"])}
    assert by_kind["contract_design"] == {json.dumps({"A0": -2, "A1": -2})}
    assert by_kind["contract_vote"] == {json.dumps({"C1": True, "C2": True})} and by_kind["sign"] == {json.dumps({"sign": True})}
    assert set(contract["status"]) == {"ok"} and set(contract["n_attempts"]) == {1}
    fields = {"action": 1, "contract_design": 2, "contract_vote": 2, "sign": 1}  # one line typed per field
    assert len(typed) == 4 + sum(fields[k] for k in contract["kind"])  # NoMechanism after the refusal: its re-ask and 3 more


def test_a_latin1_or_ascii_terminal_plays_and_the_typed_text_is_stored_exactly(tmp_path):
    from coopeval.humanplay.service import SeatDesk
    from coopeval.humanplay.tty import play_in_terminal

    folder = SeatFolder(tmp_path)
    folder.ask("alice", "q", {"agent": "human/alice(IO)", "model": "human/alice", "kind": "donation", "attempt": 0,
                              "messages": [{"role": "user", "content": "Donate — say how much (×0.5 kept)"}],
                              "form": {"type": "text"}, "position": {"round": 1}})  # fmt: skip

    def judge() -> None:  # the play job's side
        while folder.answer_of("alice", "q") is None:
            time.sleep(0.02)
        folder.close("alice", "q", {"valid": True, "error": "", "parsed": "ok"})

    job = threading.Thread(target=judge)
    job.start()
    stdin = io.TextIOWrapper(io.BytesIO("café 50 %\n.\n".encode("latin-1")), encoding="latin-1")
    stdout = io.TextIOWrapper(io.BytesIO(), encoding="ascii")
    answered = lambda: folder.answer_of("alice", "q") is not None  # noqa: E731
    assert play_in_terminal(SeatDesk(tmp_path), stdin, stdout, answered) == 0
    job.join()
    assert folder.answer_of("alice", "q")["text"] == "café 50 %"
    stdout.flush()
    shown = stdout.buffer.getvalue().decode("ascii")  # type: ignore[attr-defined]
    assert "-" * 72 in shown and "Donate ? say how much (?0.5 kept)" in shown and "Accepted" in shown
