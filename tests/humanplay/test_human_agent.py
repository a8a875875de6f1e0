"""The ``human/<name>`` agent through the real decision loop: a scripted person answers through the
seat folder and its answers are recorded like a model's (provider ``human``, time to answer, every
attempt); a refused answer carries the parser's own words and is re-asked, never substituted; a
restart replays the cache and asks nobody; every mechanism and game and gossip's donation testbed
seat a person."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from coopeval.agents.human import HUMAN, HumanAgent, SeatFolder, form_for
from coopeval.agents.human.seat import Question
from coopeval.agents.registry import agent_name, entry_error, make_agent, provider_for
from coopeval.cache.response_cache import ResponseCache
from coopeval.decisions.formats import ActionDistribution
from coopeval.decisions.formats.contract_design import ContractDesign
from coopeval.decisions.formats.mediator_design import MediatorDesign
from coopeval.decisions.formats.signature import Signature
from coopeval.decisions.formats.vote import ApprovalVote
from coopeval.decisions.parsing import check_answer
from coopeval.decisions.reask import MAX_ATTEMPTS
from coopeval.games import SHIPPED_GAMES
from coopeval.studies.coopeval.mechanisms.catalog import MECHANISMS
from coopeval.studies.evolution.formats import DonationFormat
from coopeval.studies.gossip.formats import GossipFormat
from tests.helpers import make_cell, play_spec, play_study_cell, study_cells
from tests.humanplay.person import ScriptedPerson, first_choice


def _human(root: Path, name: str = "alice") -> HumanAgent:
    return HumanAgent(f"human/{name}", seats=SeatFolder(root))


def test_the_provider_entry_builds_a_person_and_names_a_bad_name():
    agent = make_agent({"model": "human/alice", "style": "IO"})
    assert isinstance(agent, HumanAgent) and agent.name == "human/alice(IO)" and agent.cacheable
    assert provider_for("human/alice") is HUMAN and HUMAN.name == "human"
    assert agent_name({"model": "human/alice"}) == "human/alice(IO)"
    assert entry_error("human/alice", {}) is None
    problem = entry_error("human/", {})
    assert problem is not None and "e.g. human/alice" in problem
    assert "e.g. human/alice" in (entry_error("human/../x", {}) or "")


def test_forms_follow_the_answer_formats():
    assert form_for(ActionDistribution(("A0", "A1", "A2"))) == {"type": "distribution", "keys": ["A0", "A1", "A2"]}
    assert form_for(ContractDesign(("A0", "A1"))) == {
        "type": "fields", "fields": [{"key": "A0", "widget": "integer"}, {"key": "A1", "widget": "integer"}],
    }  # fmt: skip
    votes = form_for(ApprovalVote(("C1", "C2")))
    assert votes["fields"] == [{"key": "C1", "widget": "boolean"}, {"key": "C2", "widget": "boolean"}]
    assert form_for(Signature())["fields"] == [{"key": "sign", "widget": "boolean"}]
    design = form_for(MediatorDesign(("1", "2"), values=("A0", "A1")))
    assert design["fields"][0] == {"key": "1", "widget": "choice", "options": ["A0", "A1"]}
    gossip = form_for(GossipFormat(max_words=20))
    assert [(f["key"], f["widget"]) for f in gossip["fields"]] == [("justification", "text"), ("tone", "choice"), ("gossip", "text")]
    assert form_for(DonationFormat()) == {"type": "text"}


def _defect_first_refused(question: Question) -> str:
    """Always defect; the first answer of round 1 in seat 0 against the bot sums to 90 (refused)."""
    position = question.data["position"]
    if position["round"] == 1 and position["agents"][1] == "bot/tit-for-tat" and question.data["attempt"] == 0:
        return '{"A0": 60, "A1": 30}'
    return '{"A0": 0, "A1": 100}'


def test_a_repetition_match_is_recorded_like_a_models(tmp_path):
    human = _human(tmp_path / "seats")
    spec = make_cell("Repetition", "prisoners_dilemma", [human, "tit-for-tat"], num_rounds=2)
    with ScriptedPerson(tmp_path / "seats", _defect_first_refused, delay_s=0.2).sitting() as person:
        tables, stats = play_spec(spec, [human, "tit-for-tat"], cache=ResponseCache(tmp_path / "cache"))
    decisions = tables["decisions"].filter(pl.col("agent") == "human/alice(IO)")
    # 2 rounds × (2 seats of the self-play match-up + 1 seat in each match-up with the bot)
    assert decisions.height == 8 and set(decisions["status"]) == {"ok"}
    assert stats.calls_made == 9 and stats.failed_decisions == 0  # 8 decisions + 1 refused attempt
    # Against tit-for-tat from seat 0: D vs C (3 points), then D vs D (1 point); PD payoffs 2/0/3/1.
    against_bot = decisions.filter(pl.col("matchup_id").str.starts_with("human/alice(IO)|bot/")).sort("round")
    assert against_bot["points"].to_list() == [3.0, 1.0] and against_bot["n_attempts"].to_list() == [2, 1]
    calls = tables["llm_calls"].filter(pl.col("model") == "human/alice")
    assert calls.height == 9 and calls["model"].str.split("/").list.first().unique().to_list() == ["human"]
    assert calls["latency_s"].min() >= 0.2  # the time to answer: the person waited 0.2 s each time
    refused = calls.filter(pl.col("error") != "")
    expected = check_answer(ActionDistribution(("A0", "A1")), '{"A0": 60, "A1": 30}').error
    assert refused["response"].to_list() == ['{"A0": 60, "A1": 30}'] and refused["error"].to_list() == [expected]
    # the person saw the parser's words twice: as the verdict and in the re-ask prompt
    (verdict,) = [v for _, text, v in person.log if text == '{"A0": 60, "A1": 30}']
    assert verdict == {"valid": False, "error": expected, "parsed": None}
    (reask,) = [q for q, _, _ in person.log if q.data["attempt"] == 1]
    (prompt,) = reask.data["messages"]  # one user message: the question, the refused answer and why
    assert expected in prompt["content"] and '{"A0": 60, "A1": 30}' in prompt["content"]


def test_a_restart_replays_the_cache_and_asks_nobody(tmp_path):
    cache = ResponseCache(tmp_path / "cache")
    human = _human(tmp_path / "seats")
    spec = make_cell("Repetition", "prisoners_dilemma", [human, "tit-for-tat"], num_rounds=2)
    with ScriptedPerson(tmp_path / "seats", _defect_first_refused).sitting():
        first, _ = play_spec(spec, [human, "tit-for-tat"], cache=cache)
    fresh = _human(tmp_path / "other-seats")  # a new folder: any question would wait there
    with ScriptedPerson(tmp_path / "other-seats").sitting() as nobody:
        again, stats = play_spec(spec, [fresh, "tit-for-tat"], cache=ResponseCache(tmp_path / "cache"))
    assert nobody.log == [] and stats.calls_made == 0 and stats.cache_hits == 9
    columns = ["decision_id", "agent", "status", "parsed", "points", "n_attempts"]
    assert again["decisions"].select(columns).sort("decision_id").equals(first["decisions"].select(columns).sort("decision_id"))


def test_an_answer_on_file_is_not_asked_again(tmp_path):
    """A job killed after the person answered but before the cache stored it takes the answer
    from the seat folder (same question id)."""
    human = _human(tmp_path / "seats")
    spec = make_cell("NoMechanism", "prisoners_dilemma", [human, "tit-for-tat"])
    with ScriptedPerson(tmp_path / "seats").sitting() as person:
        play_spec(spec, [human, "tit-for-tat"])
    assert len(person.log) == 4
    with ScriptedPerson(tmp_path / "seats").sitting() as again:
        tables, _ = play_spec(spec, [_human(tmp_path / "seats"), "tit-for-tat"])  # no cache
    assert again.log == [] and set(tables["decisions"]["status"]) == {"ok"}


def test_a_person_who_never_answers_validly_fails_the_decision(tmp_path):
    human = _human(tmp_path / "seats")
    spec = make_cell("NoMechanism", "prisoners_dilemma", [human, "always-cooperate"])

    def stubborn(question: Question) -> str:
        against_bot = question.data["position"]["agents"] == ["human/alice(IO)", "bot/always-cooperate"]
        return "cooperate, obviously" if against_bot else first_choice(question)

    with ScriptedPerson(tmp_path / "seats", stubborn).sitting():
        tables, stats = play_spec(spec, [human, "always-cooperate"])
    failed = tables["decisions"].filter(pl.col("status") == "failed")
    assert failed.height == 1 and failed["parsed"].null_count() == 1 and failed["response"].to_list() == ["cooperate, obviously"]
    assert set(failed["n_attempts"]) == {MAX_ATTEMPTS} and failed["agent"].unique().to_list() == ["human/alice(IO)"]
    assert stats.failed_decisions == failed.height


@pytest.mark.parametrize("mechanism", [m.name for m in MECHANISMS])
def test_every_mechanism_seats_a_person(tmp_path, mechanism):
    human = _human(tmp_path / "seats")
    params = {"num_rounds": 1} if mechanism.startswith("Re") else {}
    spec = make_cell(mechanism, "prisoners_dilemma", [human, "tit-for-tat"], **params)
    with ScriptedPerson(tmp_path / "seats").sitting() as person:
        tables, stats = play_spec(spec, [human, "tit-for-tat"])
    mine = tables["decisions"].filter(pl.col("agent") == "human/alice(IO)")
    assert mine.height == len(person.log) > 0 and set(mine["status"]) == {"ok"} and stats.failed_decisions == 0
    assert {q.data["kind"] for q, _, _ in person.log} == set(mine["kind"])


@pytest.mark.parametrize("game", SHIPPED_GAMES)
def test_every_game_seats_a_person(tmp_path, game):
    human = _human(tmp_path / "seats")
    spec = make_cell("NoMechanism", game, [human, "always-defect"])
    with ScriptedPerson(tmp_path / "seats").sitting() as person:
        tables, _ = play_spec(spec, [human, "always-defect"])
    mine = tables["decisions"].filter(pl.col("agent") == "human/alice(IO)")
    assert mine.height == len(person.log) > 0 and set(mine["action_token"]) == {"A0"}  # 100 % on A0 draws A0


def test_gossip_donation_seats_a_person(tmp_path, monkeypatch):
    monkeypatch.setenv("COOPEVAL_HUMAN_SEATS", str(tmp_path / "seats"))
    (cell,) = study_cells("gossip", {"seed": 1, "gossip": {"testbeds": ["donation"], "conditions": ["align"], "models": [{"model": "human/alice"}]}})
    with ScriptedPerson(tmp_path / "seats").sitting() as person:
        tables, _ = play_study_cell("gossip", cell)
    kinds = {q.data["kind"] for q, _, _ in person.log}
    assert len(person.log) == tables["decisions"].height == 72 and len(kinds) == 2
    assert set(tables["decisions"]["status"]) == {"ok"}
    gossip = [json.loads(text) for q, text, _ in person.log if "tone" in text]
    assert gossip and {g["tone"] for g in gossip} == {"praising"}  # the first tone button
    assert set(tables["gossip_rounds"]["second_message"].drop_nulls()) == {"fair enough"}


def test_a_question_says_where_it_is_from_what_its_keys_mean_and_the_points_so_far(tmp_path):
    human = _human(tmp_path / "seats")
    spec = make_cell("Repetition", "prisoners_dilemma", [human, "tit-for-tat"], num_rounds=2)
    with ScriptedPerson(tmp_path / "seats", _defect_first_refused).sitting() as person:
        play_spec(spec, [human, "tit-for-tat"])
    contexts = {(tuple(q.data["position"]["agents"]), q.data["position"]["seat"], q.data["position"]["round"], q.data["attempt"]):
                q.data["context"] for q, _, _ in person.log}  # fmt: skip
    me, bot = "human/alice(IO)", "bot/tit-for-tat"
    labels = {"A0": "Cooperate", "A1": "Defect"}
    # round 2 against the bot from seat 1: D vs C in round 1 gave 3 points (PD payoffs 2/0/3/1)
    assert contexts[((me, bot), 0, 2, 0)] == {
        "where": "Prisoner's Dilemma under Repetition · you are seat 1 of 2, against seat 2: bot/tit-for-tat · round 2",
        "labels": labels, "hints": {}, "points": 3.0,
    }  # fmt: skip
    # the bot against me: I sit in seat 2; round 1, nothing scored yet
    assert contexts[((bot, me), 1, 1, 0)]["where"] == (
        "Prisoner's Dilemma under Repetition · you are seat 2 of 2, against seat 1: bot/tit-for-tat · round 1"
    )
    assert contexts[((bot, me), 1, 1, 0)]["points"] == 0.0
    # self-play: the opponent is me, in the other seat; D vs D in round 1 gave 1 point
    assert contexts[((me, me), 1, 2, 0)]["where"].endswith("you are seat 2 of 2, against seat 1: human/alice(IO) (you) · round 2")
    assert contexts[((me, me), 1, 2, 0)]["points"] == 1.0
    # the re-ask carries the refusal that caused it; a first attempt carries none
    expected = check_answer(ActionDistribution(("A0", "A1")), '{"A0": 60, "A1": 30}').error
    (reask,) = [q for q, _, _ in person.log if q.data["attempt"] == 1]
    assert reask.data["refused"] == {"text": '{"A0": 60, "A1": 30}', "error": expected}
    assert all(q.data["refused"] is None for q, _, _ in person.log if q.data["attempt"] == 0)


def test_a_vote_shows_each_contracts_terms_beside_its_key(tmp_path):
    human = _human(tmp_path / "seats")
    spec = make_cell("Contracting", "prisoners_dilemma", [human, "tit-for-tat"])
    with ScriptedPerson(tmp_path / "seats").sitting() as person:
        play_spec(spec, [human, "tit-for-tat"])
    votes = [q for q, _, _ in person.log if q.data["kind"] == "contract_vote"]
    assert votes
    for vote in votes:
        labels = vote.data["context"]["labels"]
        (prompt,) = vote.data["messages"]
        for key in ("C1", "C2"):
            assert labels[key].startswith(f"{key} (proposed by Player ") and labels[key] in prompt["content"]
        # the person's own design (first_choice: 0 on every action) is written out term by term
        assert "- A0 (Cooperate): " in labels["C1"] and "- A1 (Defect): " in labels["C1"]



def test_a_reask_posted_after_a_restart_still_carries_the_refusal(tmp_path):
    """Issue 46 (the page): the run is stopped while the re-ask waits; the resumed run replays the
    refused attempt from the response cache (no call to the agent) and posts the re-ask again:
    a new agent, with no memory of the refusal, still shows it."""
    import asyncio

    from coopeval.agents.protocol import DecisionRequest

    seats, fmt = tmp_path / "seats", ActionDistribution(("A0", "A1"))
    position = {"seed": 1, "game": "prisoners_dilemma", "mechanism": "NoMechanism", "round": 1, "seat": 0, "kind": "action"}
    first = DecisionRequest(({"role": "user", "content": "Choose."},), fmt, state={"attempt": 0}, position=position)
    reask = DecisionRequest(({"role": "user", "content": "Choose again."},), fmt, state={"attempt": 1}, position=position)
    refused = '{"A0": 60, "A1": 30}'
    with ScriptedPerson(seats, lambda q: refused, max_answers=1).sitting():
        asyncio.run(_human(seats).generate(first))
    expected = {"text": refused, "error": check_answer(fmt, refused).error}
    with ScriptedPerson(seats, lambda q: '{"A0": 0, "A1": 100}').sitting() as person:
        asyncio.run(_human(seats).generate(reask))  # the restarted run's agent
    ((question, _, verdict),) = person.log
    assert question.data["attempt"] == 1 and question.data["refused"] == expected and verdict["valid"] is True


def test_a_contracts_questions_say_which_seat_what_each_number_means_and_what_is_signed(tmp_path):
    """Issue 46 (the page): a design is asked once per seat before any match-up, so its header
    names that seat of the game (not "seat 1 of 1"); each number of the contract has a hint in
    the words of Contracting's rules; the signature carries the contract being signed."""
    human = _human(tmp_path / "seats")
    spec = make_cell("Contracting", "public_goods", [human, "tit-for-tat"])
    with ScriptedPerson(tmp_path / "seats").sitting() as person:
        play_spec(spec, [human, "tit-for-tat"])
    designs = [q for q, _, _ in person.log if q.data["kind"] == "contract_design"]
    assert sorted(q.data["position"]["seat"] for q in designs) == [0, 1, 2]  # one per seat of the three-player game
    for question in designs:
        context, seat = question.data["context"], question.data["position"]["seat"] + 1
        assert context["where"] == (f"Public Goods under Contracting · your contract proposal for seat {seat} of 3, "
                                    f"used in every match-up where you sit in seat {seat} · before play")  # fmt: skip
        assert context["hints"]["A0"].startswith(f"Points X (a whole number) attached to {context['labels']['A0']} (A0): a player "
                                                 "who plays it receives X points, paid in equal shares by the other players, if X "
                                                 "is above 0; pays |X| points, shared equally among the other players, if X is below 0")  # fmt: skip
        assert set(context["hints"]) == {field["key"] for field in question.data["form"]["fields"]}
    signs = [q for q, _, _ in person.log if q.data["kind"] == "sign"]
    assert signs
    for question in signs:
        terms = question.data["context"]["labels"]["sign"]
        head, contract = terms.split("\n", 1)
        assert head.startswith("The contract to sign (proposed by Player ")
        assert f"proposed by Player {head.removeprefix('The contract to sign (proposed by Player ').removesuffix('):')}:\n{contract}\n" in (
            question.data["messages"][0]["content"])  # fmt: skip
        assert question.data["context"]["hints"]["sign"].startswith("yes: sign this contract;")


def test_a_mediator_designs_choices_say_what_each_number_of_delegators_means(tmp_path):
    human = _human(tmp_path / "seats")
    with ScriptedPerson(tmp_path / "seats").sitting() as person:
        play_spec(make_cell("Mediation", "prisoners_dilemma", [human, "tit-for-tat"]), [human, "tit-for-tat"])
    designs = [q for q, _, _ in person.log if q.data["kind"] == "mediator_design"]
    assert sorted(q.data["position"]["seat"] for q in designs) == [0, 1]
    for question in designs:
        seat = question.data["position"]["seat"] + 1
        assert question.data["context"]["where"] == (f"Prisoner's Dilemma under Mediation · your mediator proposal for seat {seat} "
                                                     f"of 2, used in every match-up where you sit in seat {seat} · before play")  # fmt: skip
        assert question.data["context"]["hints"] == {
            "1": "If 1 of the 2 players delegates to the mediator: the action it plays for that player",
            "2": "If 2 of the 2 players delegate to the mediator: the action it plays for each of the 2",
        }
