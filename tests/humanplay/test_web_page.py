"""The seat page driven in a real headless Chromium (Debian's ``chromium``) by a scripted person.

The person plays a full Repetition match against tit-for-tat (and the self-play match-up) with the
sliders and the "100 % on" buttons, gives one answer the parser refuses (sliders summing to 90) and
reads the parser's own message on the page, then plays one Contracting round: designs a contract
in the number fields, votes with the yes/no buttons and signs. The cell runs through the real
decision loop in a background thread; its tables hold exactly what the person clicked.
Screenshots of a question, the refusal and the contract design go to ``results/human/screenshots/``
(``COOPEVAL_SCREENSHOTS`` overrides).

Skipped when ``/usr/bin/chromium`` is absent, except under ``COOPEVAL_REQUIRE_BROWSER=1``.
"""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from coopeval.agents.human import HumanAgent, SeatFolder
from coopeval.core.environment import env_value
from coopeval.decisions.formats import ActionDistribution
from coopeval.decisions.parsing import check_answer
from coopeval.humanplay.web import SeatServer
from tests.explorer.browser import (
    WAIT_S,
    BrowserError,
    Chromium,
    require_chromium,
)
from tests.helpers import make_cell, play_spec

SCREENSHOTS = Path(env_value("COOPEVAL_SCREENSHOTS") or Path(__file__).resolve().parents[2] / "results" / "human" / "screenshots")
REFUSED = {"A0": 60, "A1": 30}


class LocalChromium(Chromium):
    """Chromium that reaches 127.0.0.1 (the seat server) and still resolves no other host."""

    host_rules = "MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    require_chromium()
    with LocalChromium(tmp_path_factory.mktemp("profile"), size=(1100, 1000)) as chromium:
        yield chromium


class Game(threading.Thread):
    """Plays one cell in the background; ``tables`` when done, ``error`` if it raised."""

    def __init__(self, spec: dict[str, Any], players: list[Any]) -> None:
        super().__init__(daemon=True)
        self.spec, self.players = spec, players
        self.tables: dict[str, pl.DataFrame] = {}
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.tables = play_spec(self.spec, self.players)[0]
        except BaseException as exc:  # reported by the test
            self.error = exc


def next_question(browser: Chromium, last: str | None, game: Game) -> dict[str, Any] | None:
    """The question the page shows once it differs from ``last`` (its seat and id), or None when
    the game ended."""
    started = time.monotonic()
    while time.monotonic() - started < WAIT_S:
        shown = browser.evaluate("current && !document.getElementById('question').hidden ? JSON.stringify(current) : ''")
        if shown:
            question = json.loads(shown)
            if f"{question['seat']}/{question['id']}" != last:
                return question
        elif not game.is_alive():
            return None
        time.sleep(0.05)
    raise BrowserError(f"the page showed no new question after {last}")


def set_slider(browser: Chromium, key: str, value: int) -> None:
    browser.evaluate(
        f"(function(){{var s=document.getElementById('w-{key}'); s.value='{value}';"
        "s.dispatchEvent(new Event('input', {bubbles: true})); return true;})()"
    )


def type_into(browser: Chromium, key: str, text: str) -> None:
    browser.evaluate(
        f"(function(){{var e=document.getElementById({json.dumps('f-' + key)}); e.value={json.dumps(text)};"
        "e.dispatchEvent(new Event('input', {bubbles: true})); return true;})()"
    )


def play_contracting_round(
    browser: Any, game: Any, design: tuple[str, str], vote: tuple[str, str], inspect: Callable[[dict[str, Any]], None]
) -> list[str]:
    """Answer every question of one Contracting round on the page: the contract ``design``
    (transfers for A0 and A1), the approval ``vote`` on C1 and C2, sign, then play A0. ``inspect``
    sees each question after its answer is filled in and before it is sent. Returns the kinds
    of the questions answered, in order."""
    last, kinds = None, []
    while (question := next_question(browser, last, game)) is not None:
        last = f"{question['seat']}/{question['id']}"
        kinds.append(question["kind"])
        if question["kind"] == "contract_design":
            type_into(browser, "A0", design[0])
            type_into(browser, "A1", design[1])
        elif question["kind"] == "contract_vote":
            browser.click(f'button.choice[data-key="C1"][data-value="{vote[0]}"]')
            browser.click(f'button.choice[data-key="C2"][data-value="{vote[1]}"]')
        elif question["kind"] == "sign":
            browser.click('button.choice[data-key="sign"][data-value="true"]')
        else:
            browser.click('button.pure[data-key="A0"]')
        inspect(question)
        browser.click("#send")
    return kinds


def test_a_person_plays_a_repetition_match_with_a_refusal_and_a_contracting_round(browser, tmp_path):
    seats = tmp_path / "seats"
    human = HumanAgent("human/alice", seats=SeatFolder(seats))
    with SeatServer(seats, port=0) as server:
        browser.open(server.url)
        browser.wait("document.getElementById('status') && document.getElementById('status').textContent.indexOf('open questions') >= 0", "the status line")

        # -- a full Repetition match (2 rounds) against tit-for-tat, plus the self-play match-up --
        game = Game(make_cell("Repetition", "prisoners_dilemma", [human, "tit-for-tat"], num_rounds=2), [human, "tit-for-tat"])
        game.start()
        last, answered, refusal_shown = None, 0, ""
        while (question := next_question(browser, last, game)) is not None:
            last = f"{question['seat']}/{question['id']}"
            assert question["form"] == {"type": "distribution", "keys": ["A0", "A1"]} and question["kind"] == "action"
            prompt = browser.evaluate("document.querySelector('pre.msg').textContent")
            assert prompt == question["messages"][0]["content"] and "Choose a probability distribution" in prompt
            position = question["position"]
            if position["agents"] == ["human/alice(IO)", "bot/tit-for-tat"] and position["round"] == 1 and question["attempt"] == 0:
                set_slider(browser, "A0", REFUSED["A0"])
                set_slider(browser, "A1", REFUSED["A1"])
                assert browser.evaluate("document.getElementById('preview').textContent") == json.dumps(REFUSED)
                assert "Total: 90 %" in browser.evaluate("document.getElementById('total').textContent")
                browser.click("#send")
                browser.wait("!document.getElementById('refusal').hidden", "the parser's refusal")
                refusal_shown = browser.evaluate("document.getElementById('refusal-text').textContent")
                continue
            if question["attempt"] == 1:  # the re-ask keeps the refusal in view
                browser.wait("!document.getElementById('refusal').hidden", "the refusal above the re-ask")
                browser.screenshot(SCREENSHOTS / "human-refused.png")
            if answered == 0:
                browser.screenshot(SCREENSHOTS / "human-question.png")
            browser.click('button.pure[data-key="A1"]')  # defect: 100 % on A1
            assert browser.evaluate("document.getElementById('preview').textContent") == '{"A0": 0, "A1": 100}'
            browser.click("#send")
            answered += 1
        assert game.error is None, game.error
        expected = check_answer(ActionDistribution(("A0", "A1")), json.dumps(REFUSED)).error
        assert refusal_shown == expected and "sum" in expected
        mine = game.tables["decisions"].filter(pl.col("agent") == "human/alice(IO)")
        assert answered == mine.height == 8 and set(mine["parsed"]) == {'{"A0": 0, "A1": 100}'}
        against_bot = mine.filter(pl.col("matchup_id").str.starts_with("human/alice(IO)|bot/")).sort("round")
        assert against_bot["points"].to_list() == [3.0, 1.0] and against_bot["n_attempts"].to_list() == [2, 1]
        refused = game.tables["llm_calls"].filter(pl.col("error") != "")
        assert refused["response"].to_list() == [json.dumps(REFUSED)] and refused["error"].to_list() == [expected]

        # -- one Contracting round: design, vote, sign, play --
        game = Game(make_cell("Contracting", "prisoners_dilemma", [human, "tit-for-tat"]), [human, "tit-for-tat"])
        game.start()

        def design_shot(question: dict[str, Any]) -> None:
            if question["kind"] == "contract_design":
                browser.screenshot(SCREENSHOTS / "human-contract-design.png")

        kinds = play_contracting_round(browser, game, ("0", "-3"), ("true", "false"), design_shot)
        assert game.error is None, game.error
        assert {"contract_design", "contract_vote", "sign", "action"} == set(kinds)
        mine = game.tables["decisions"].filter(pl.col("agent") == "human/alice(IO)")
        assert mine.height == len(kinds) and set(mine["status"]) == {"ok"}
        by_kind = {k: [json.loads(p) for p in mine.filter(pl.col("kind") == k)["parsed"]] for k in set(kinds)}
        assert by_kind["contract_design"] and all(d == {"A0": 0, "A1": -3} for d in by_kind["contract_design"])
        assert all(v == {"C1": True, "C2": False} for v in by_kind["contract_vote"])
        assert all(s == {"sign": True} for s in by_kind["sign"])
        browser.wait("document.getElementById('waiting').hidden === false", "the waiting note after the last answer")


def test_the_server_refuses_foreign_hosts_and_form_posts(tmp_path):
    with SeatServer(tmp_path / "seats", port=0) as server:
        foreign = urllib.request.Request(server.url + "api/state", headers={"Host": "evil.example"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(foreign)
        assert refused.value.code == 403
        form = urllib.request.Request(server.url + "api/answer", data=b"seat=alice&id=x&text=1", method="POST",
                                      headers={"Content-Type": "application/x-www-form-urlencoded"})
        with pytest.raises(urllib.error.HTTPError) as unsupported:
            urllib.request.urlopen(form)
        assert unsupported.value.code == 415
        stale = urllib.request.Request(server.url + "api/answer", data=json.dumps({"seat": "alice", "id": "x", "text": "{}"}).encode(),
                                       method="POST", headers={"Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as conflict:
            urllib.request.urlopen(stale)
        assert conflict.value.code == 409 and "no open question x" in conflict.value.read().decode()
        with urllib.request.urlopen(server.url) as page:
            html = page.read().decode()
        assert "<script>" in html and "http://" not in html and "https://" not in html  # nothing fetched from the network


def type_percent(browser: Chromium, key: str, text: str) -> None:
    browser.evaluate(
        f"(function(){{var e=document.getElementById('p-{key}'); e.value={json.dumps(text)};"
        "e.dispatchEvent(new Event('input', {bubbles: true})); return true;})()"
    )


def text_of(browser: Chromium, selector: str) -> str:
    return str(browser.evaluate(f"document.querySelector({json.dumps(selector)}).textContent"))


def test_the_page_names_the_actions_the_match_up_the_points_and_sends_what_it_shows(browser, tmp_path):
    seats = tmp_path / "seats"
    human = HumanAgent("human/alice", seats=SeatFolder(seats))
    expected = check_answer(ActionDistribution(("A0", "A1")), json.dumps(REFUSED)).error
    with SeatServer(seats, port=0) as server:
        browser.open(server.url)
        game = Game(make_cell("Repetition", "prisoners_dilemma", [human, "tit-for-tat"], num_rounds=2), [human, "tit-for-tat"])
        game.start()
        last, reopened = None, False
        while (question := next_question(browser, last, game)) is not None:
            last = f"{question['seat']}/{question['id']}"
            position = question["position"]
            assert text_of(browser, 'label[for="w-A0"]') == "Cooperate (A0)" and text_of(browser, 'label[for="w-A1"]') == "Defect (A1)"
            assert text_of(browser, 'button.pure[data-key="A1"]') == "100 % on Defect (A1)"
            where = text_of(browser, "#where")
            assert f"round {position['round']}" in where and "Prisoner's Dilemma under Repetition" in where
            against_bot = position["agents"] == ["human/alice(IO)", "bot/tit-for-tat"]
            if against_bot and position["round"] == 2:  # D vs C in round 1: 3 points
                assert where.endswith("against seat 2: bot/tit-for-tat · round 2 · your points so far in this match-up: 3")
            if against_bot and position["round"] == 1 and question["attempt"] == 0:
                # what the boxes show is what is sent: an empty box is null, -5 is -5 (never 50 or 0)
                type_percent(browser, "A0", "")
                assert text_of(browser, "#preview") == '{"A0": null, "A1": 0}'
                assert "Cannot be accepted: Cooperate (A0) is empty" in text_of(browser, "#total")
                type_percent(browser, "A0", "-5")
                assert text_of(browser, "#preview") == '{"A0": -5, "A1": 0}'
                assert "Cooperate (A0) is -5, not a whole number from 0 to 100" in text_of(browser, "#total")
                set_slider(browser, "A0", REFUSED["A0"])
                set_slider(browser, "A1", REFUSED["A1"])
                assert text_of(browser, "#preview") == json.dumps(REFUSED)
                browser.click("#send")
                browser.wait("!document.getElementById('refusal').hidden", "the parser's refusal")
                continue
            if question["attempt"] == 1 and not reopened:  # the page is closed and opened again
                reopened = True
                browser.open(server.url)
                browser.wait("typeof current !== 'undefined' && current && current.attempt === 1 && !document.getElementById('refusal').hidden", "the refusal on the reopened page")
                assert text_of(browser, "#refusal-text") == expected
            browser.click('button.pure[data-key="A1"]')
            browser.click("#send")
        assert game.error is None, game.error
        assert reopened

        game = Game(make_cell("Contracting", "prisoners_dilemma", [human, "tit-for-tat"]), [human, "tit-for-tat"])
        game.start()

        def vote_terms(question: dict[str, Any]) -> None:
            if question["kind"] != "contract_vote":
                return
            terms = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('pre.option'), function (e) { return e.textContent; })")
            assert terms == [question["context"]["labels"]["C1"], question["context"]["labels"]["C2"]]
            assert terms[0].startswith("C1 (proposed by Player ") and "- A1 (Defect): " in terms[0]
            assert text_of(browser, 'button.choice[data-key="C1"][data-value="true"]') == "yes"
            browser.screenshot(SCREENSHOTS / "human-contract-vote.png")

        kinds = play_contracting_round(browser, game, ("0", "0"), ("true", "true"), vote_terms)
        assert game.error is None, game.error
        assert "contract_vote" in kinds


CONTRACT_HINT = (
    "Points X (a whole number) attached to {label} ({key}): a player who plays it receives X points, paid by the other "
    "player, if X is above 0; pays |X| points, which go to the other player, if X is below 0; nothing if X is 0. Paid "
    "only if every player signs the contract."
)
"""What a contract's number means on the design form of a two-player game (Contracting's rules:
the player who plays the action gets +X, the other player -X)."""

SIGN_HINT = "yes: sign this contract; it comes into force only if every player signs it, otherwise the game is played without any payments"


def test_the_contract_forms_say_what_each_number_means_and_show_the_contract_to_sign(browser, tmp_path):
    """Issue 46 (the page): the design form's number boxes say what they are (who pays whom, in
    points, for which action), its header names the seat the contract is proposed for (never
    "seat 1 of 1"), and the sign form shows the contract being signed, as the sign prompt words it."""
    seats = tmp_path / "seats"
    human = HumanAgent("human/alice", seats=SeatFolder(seats))
    seen: dict[str, list[dict[str, Any]]] = {"contract_design": [], "sign": []}
    with SeatServer(seats, port=0) as server:
        browser.open(server.url)
        game = Game(make_cell("Contracting", "prisoners_dilemma", [human, "tit-for-tat"]), [human, "tit-for-tat"])
        game.start()

        def check(question: dict[str, Any]) -> None:
            kind, position = question["kind"], question["position"]
            if kind == "contract_design":
                seat = position["seat"] + 1
                assert text_of(browser, "#where") == (
                    f"Prisoner's Dilemma under Contracting · your contract proposal for seat {seat} of 2, used in every "
                    f"match-up where you sit in seat {seat} · before play"
                )
                for key, label in (("A0", "Cooperate"), ("A1", "Defect")):
                    assert text_of(browser, f'label[for="f-{key}"]') == f"{label} ({key})"
                    assert text_of(browser, f"#h-{key}") == CONTRACT_HINT.format(label=label, key=key)
                    assert browser.evaluate(f"document.getElementById('f-{key}').getAttribute('aria-describedby')") == f"h-{key}"
                seen[kind].append(question)
            elif kind == "sign":
                (terms,) = browser.evaluate("Array.prototype.map.call(document.querySelectorAll('pre.option'), function (e) { return e.textContent; })")
                head, contract = terms.split("\n", 1)
                proposer = head.removeprefix("The contract to sign (proposed by Player ").removesuffix("):")
                prompt = question["messages"][0]["content"]
                assert f"The vote has selected the contract proposed by Player {proposer}:\n{contract}\n" in prompt
                if position["agents"] == ["human/alice(IO)", "human/alice(IO)"]:  # both proposals are the person's: 2 and -3
                    assert contract == (
                        "- A0 (Cooperate): the player who plays it receives 2 points, paid by the other player\n"
                        "- A1 (Defect): the player who plays it pays 3 points, which go to the other player"
                    )
                assert text_of(browser, "#h-sign") == SIGN_HINT
                assert text_of(browser, 'button.choice[data-key="sign"][data-value="true"]') == "yes"
                seen[kind].append(question)

        kinds = play_contracting_round(browser, game, ("2", "-3"), ("true", "true"), check)
        assert game.error is None, game.error
    assert len(seen["contract_design"]) == 2 and len(seen["sign"]) == kinds.count("sign") == 4
    signed = game.tables["decisions"].filter((pl.col("agent") == "human/alice(IO)") & (pl.col("kind") == "sign"))
    assert signed.height == 4 and set(signed["parsed"]) == {'{"sign": true}'}
