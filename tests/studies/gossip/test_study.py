"""GossipStudy end to end with bots and a fake LLM: oracles, every testbed and condition,
failures, cache resume, cells and config errors (issue 10 "Done means")."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from coopeval.cache.response_cache import ResponseCache
from coopeval.studies.gossip.config import GossipConfigError, validate_gossip_config
from coopeval.studies.gossip.records import TABLES
from coopeval.studies.gossip.study import GossipStudy, cell_hash
from tests.helpers import play_study_cell, study_cells
from tests.studies.gossip.fakes import FakeGossipLLM

STUDY = GossipStudy()


def _cells(**section: Any) -> list[dict[str, Any]]:
    return STUDY.cells({"seed": 1, "gossip": section})


def _play(cell: dict[str, Any], cache: ResponseCache | None = None, agent: Any = None) -> dict[str, pl.DataFrame]:
    """Play through the shared helper; ``agent`` stands in for the population's model."""
    return play_study_cell("gossip", cell, {agent.name: agent} if agent is not None else None, cache=cache)[0]


def _one(testbed: str, condition: str, model: str, **extra: Any) -> dict[str, Any]:
    section = {"testbeds": [testbed], "conditions": [condition], "models": [{"model": model}], **extra}
    (cell,) = study_cells("gossip", {"seed": 1, "gossip": section})
    return cell


def test_always_cooperate_oracle() -> None:
    tables = _play(_one("donation", "align", "bot/always-cooperate", matching="align_sweep"))
    agents = tables["gossip_agent_metrics"]
    g = dict(zip(agents["agent"], agents["discounted_return"], strict=False))
    assert all(abs(g[n] - 15.3346) < 5e-5 for n in ("John", "Jack", "Luke", "Alice", "Charlie"))
    assert all(abs(g[n] - 15.5675) < 5e-5 for n in ("Kate", "Emma", "Mary", "Bob"))
    assert set(agents["return"]) == {16.0} and set(agents["reward_per_round"]) == {2.0}
    run = tables["gossip_run_metrics"].row(0, named=True)
    assert run["discounted_return_mean"] == pytest.approx(15.4381, abs=5e-5)
    assert run["gini"] == pytest.approx(0.0037, abs=5e-5)
    rounds = tables["gossip_rounds"]
    assert rounds.height == 36 and set(rounds["status"]) == {"ok"}
    assert rounds["donation_ratio"][0] == pytest.approx(0.1)
    assert tables["llm_calls"].height == 72 and set(tables["llm_calls"]["study"]) == {"gossip"}


def test_always_defect_oracle() -> None:
    tables = _play(_one("donation", "align", "bot/always-defect", matching="align_sweep"))
    agents = tables["gossip_agent_metrics"]
    assert set(agents["discounted_return"]) == {0.0} and set(agents["image_score"]) == {-4.0}
    assert math.isnan(tables["gossip_run_metrics"]["gini"][0])


def test_no_gossip_halves_calls() -> None:
    tables = _play(_one("donation", "no_gossip", "bot/always-cooperate"))
    assert tables["llm_calls"].height == 36
    assert tables["gossip_rounds"]["second_message"].null_count() == 36


@pytest.mark.parametrize(
    "testbed, rounds, calls",
    [("donation", 36, 72), ("pd", 10, 40), ("trust", 10, 40), ("market", 36, 108)],
)
def test_every_testbed_plays(testbed: str, rounds: int, calls: int) -> None:
    tables = _play(_one(testbed, "align", "bot/honest-gossiper", matching="align_sweep"))
    assert tables["gossip_rounds"].height == rounds
    assert tables["llm_calls"].height == calls
    for name, schema in TABLES.items():
        assert dict(tables[name].schema) == schema


def test_market_extras_and_trust_amounts() -> None:
    run = _play(_one("market", "align", "bot/always-cooperate"))["gossip_run_metrics"].row(0, named=True)
    assert run["deal_rate"] == 1.0 and run["share_Hc"] == 1.0 and run["welfare_per_round"] == 5.0
    trust = _play(_one("trust", "align", "bot/always-cooperate", matching="align_sweep"))["gossip_rounds"]
    assert trust["first_amount"][0] == 5.0 and trust["second_amount"][0] == 10.0  # invest all, return 2I


@pytest.mark.parametrize(
    "condition",
    ["no_equilibrium", "no_reflection", "binary_no_convention", "binary_convention", "tone_hidden", "finite", "collusive", "max"],
)
def test_conditions_with_fake_llm(condition: str) -> None:
    llm = FakeGossipLLM()
    tables = _play(_one("donation", condition, "fake/gossip"), agent=llm)
    rounds = tables["gossip_rounds"]
    assert set(rounds["status"]) == {"ok"}
    prompts = [json.loads(p)[0]["content"] for p in tables["llm_calls"]["prompt"]]
    text = "\n".join(prompts)
    if condition == "no_equilibrium":
        assert "Equilibrium reasoning" not in text
    if condition == "no_reflection":
        assert "My reasoning then" not in text
    if condition == "binary_convention":
        assert "1 means the agent behaved well" in text and set(rounds["second_signal"].drop_nulls()) <= {0, 1}
    if condition == "binary_no_convention":
        assert "behaved well" not in text and "signal" in text
    if condition == "tone_hidden":
        assert "about John: [" not in text
    if condition == "finite":
        assert "exactly 36 rounds" in text and "36.0" not in text
    if condition == "max":
        assert rounds.height == 8
        assert rounds.filter(pl.col("second_agent") == "Max")["second_message"].to_list() == ["No comment"] * 4
        run = tables["gossip_run_metrics"].row(0, named=True)
        assert not math.isnan(run["coop_toward_attackers"])
    if condition == "collusive":
        run = tables["gossip_run_metrics"].row(0, named=True)
        assert not math.isnan(run["utility_gap"])
        attackers = set(rounds.filter(pl.col("first_kind") == "attacker")["first_agent"])
        assert len(attackers) == 2
        assert set(rounds.filter(pl.col("first_kind") == "attacker")["first_action"]) == {"defect"}


def test_discriminators_stop_cooperating_with_max() -> None:
    rounds = _play(_one("donation", "max", "bot/discriminator"))["gossip_rounds"]
    toward_max = rounds.filter(pl.col("second_agent") == "Max")
    assert toward_max["first_action"].to_list() == ["defect"] * 4
    assert toward_max["second_index"].to_list() == [2, 4, 6, 8]
    coop = _play(_one("donation", "max", "bot/always-cooperate"))["gossip_rounds"]
    assert coop.filter(pl.col("second_agent") == "Max")["first_action"].to_list() == ["cooperate"] * 4


def test_collusive_attackers_praise_each_other_and_criticise_others() -> None:
    rounds = _play(_one("donation", "collusive", "bot/always-cooperate"))["gossip_rounds"]
    by_attacker = rounds.filter(pl.col("second_kind") == "attacker")
    for row in by_attacker.iter_rows(named=True):
        assert row["second_tone"] == ("praising" if row["first_kind"] == "attacker" else "criticism")


def test_failed_decisions_are_recorded_never_substituted() -> None:
    bad = FakeGossipLLM(bad=True)
    tables = _play(_one("donation", "align", "fake/gossip"), agent=bad)
    assert set(tables["gossip_rounds"]["status"]) == {"failed_action"}
    assert tables["gossip_rounds"]["first_action"].null_count() == 36
    assert tables["llm_calls"].height == 36 * 6
    assert set(tables["decisions"]["status"]) == {"failed"}
    assert tables["gossip_agent_metrics"]["n_interactions"].sum() == 0


def test_resume_after_kill_makes_no_repeated_calls(tmp_path: Path) -> None:
    cell = _one("donation", "align", "fake/gossip")
    cache = ResponseCache(tmp_path / "cache")
    try:
        with pytest.raises(FakeGossipLLM.Interrupted):
            _play(cell, cache, FakeGossipLLM(fail_after=30))
        resumed = FakeGossipLLM()
        first = _play(cell, cache, resumed)
        assert resumed.calls == 72 - 30
        replay = FakeGossipLLM()
        second = _play(cell, cache, replay)
        assert replay.calls == 0
    finally:
        cache.close()
    for name in ("gossip_rounds", "gossip_agent_metrics", "decisions"):
        assert first[name].equals(second[name])


def test_cells_enumeration_and_hash() -> None:
    cells = _cells(
        testbeds=["donation", "pd"], conditions=["align", "no_gossip", "gamma_sweep"],
        models=[{"model": "bot/always-cooperate"}, {"model": "bot/always-defect"}], replicates=2,
    )
    assert len(cells) == 2 * (2 + 5) * 2 * 2
    assert len({c["cell_id"] for c in cells}) == len(cells)
    for c in cells:
        spec = {k: v for k, v in c.items() if k not in ("cell_id", "path")}
        assert cell_hash(spec) == c["cell_id"] and c["path"].endswith(c["cell_id"])
    gammas = {c["testbed_params"]["gamma"] for c in cells if c["condition"]["name"].startswith("gamma=")}
    assert gammas == {0.1, 0.2, 0.5, 0.9, 0.99}
    a = _cells(matching="align_sweep")[0]["cell_id"]
    b = _cells(matching="random_alternating")[0]["cell_id"]
    assert a != b and a == _cells(matching="align_sweep")[0]["cell_id"]


@pytest.mark.parametrize(
    "section, key",
    [
        ({"testbeds": ["donation", "chess"]}, "gossip.testbeds[1]"),
        ({"conditions": ["align", "telepathy"]}, "gossip.conditions[1]"),
        ({"tone_set": "emoji"}, "gossip.tone_set"),
        ({"matching": "shuffle"}, "gossip.matching"),
        ({"testbed_params": {"donation": {"n": 13}}}, "gossip.testbed_params.donation.n"),
        ({"testbeds": ["trust", "market"], "conditions": ["max"]}, "gossip.conditions"),
        ({"testbed_params": {"donation": {"n": 3}}, "conditions": ["collusive"]}, "gossip.testbed_params.donation.n"),
        ({"models": [{"model": "bot/tit-for-tat"}]}, "gossip.models[0].model"),
        ({"models": [{"model": "local/smollm2-135m", "params": {"structured_output": "gbnf"}}]}, "gossip.models[0].params.structured_output"),
        # one name for two populations would pool them into one row of every table
        ({"models": [{"model": "bot/always-cooperate", "label": "a"}, {"model": "bot/always-defect", "label": "a"}]}, "gossip.models[1]: duplicates gossip.models[0] (bot/a)"),
        ({"models": [{"model": "bot/always-cooperate"}, {"model": "bot/always-cooperate"}]}, "gossip.models[1]: duplicates"),
        ({"condition_defs": {"x": {"signal": "smoke"}}, "conditions": ["x"]}, "gossip.condition_defs.x"),
    ],
)
def test_bad_config_names_the_key(section: dict[str, Any], key: str) -> None:
    with pytest.raises(GossipConfigError) as info:
        validate_gossip_config(section)
    assert str(info.value).startswith(key), str(info.value)


def test_defaults() -> None:
    data = validate_gossip_config({})
    assert data["matching"] == "random_alternating" and data["testbeds"] == ["donation"]
    assert data["gamma_grid"] == [0.1, 0.2, 0.5, 0.9, 0.99]


def test_memory_cap_warns() -> None:
    cell = _one("donation", "align", "bot/always-cooperate", log_cap=5)
    with pytest.warns(UserWarning, match="cap"):
        tables = _play(cell)
    last = json.loads(tables["llm_calls"]["prompt"][-1])[0]["content"]
    assert "older entries not shown" in last


ALL_CONDITIONS = [
    "align", "no_gossip", "no_equilibrium", "no_reflection", "binary_no_convention", "binary_convention",
    "tone_hidden", "finite", "infinite",
]


@pytest.mark.parametrize("testbed", ["pd", "trust", "market"])
@pytest.mark.parametrize("condition", ALL_CONDITIONS)
def test_other_testbeds_under_every_condition(testbed: str, condition: str) -> None:
    tables = _play(_one(testbed, condition, "fake/gossip"), agent=FakeGossipLLM())
    rounds = tables["gossip_rounds"]
    assert set(rounds["status"]) == {"ok"}
    assert rounds.height == {"pd": 10, "trust": 10, "market": 36}[testbed]
    assert tables["decisions"]["decision_id"].n_unique() == tables["decisions"].height


@pytest.mark.parametrize("condition", ["max", "collusive", "collusive_llm_messages", "max_no_gossip"])
def test_pd_attackers(condition: str) -> None:
    tables = _play(_one("pd", condition, "fake/gossip"), agent=FakeGossipLLM())
    rounds = tables["gossip_rounds"]
    if condition.startswith("max"):
        assert rounds["first_agent"].to_list() == ["Max"] * 4
        assert rounds["second_action"].is_not_null().all() and set(rounds["first_action"]) == {"D"}


def test_llm_written_attacker_messages_keep_the_forced_tone() -> None:
    llm = FakeGossipLLM()
    tables = _play(_one("donation", "collusive_llm_messages", "fake/gossip"), agent=llm)
    rounds = tables["gossip_rounds"].filter(pl.col("second_kind") == "attacker")
    for row in rounds.iter_rows(named=True):
        assert row["second_tone"] == ("praising" if row["first_kind"] == "attacker" else "criticism")
    prompts = [json.loads(p)[0]["content"] for p in tables["llm_calls"]["prompt"]]
    assert any('in the tone "criticism"' in p for p in prompts)


def test_decision_ids_unique_across_conditions() -> None:
    a = _play(_one("donation", "align", "bot/always-cooperate"))["decisions"]
    b = _play(_one("donation", "tone_hidden", "bot/always-cooperate"))["decisions"]
    assert not set(a["decision_id"]) & set(b["decision_id"])


@pytest.mark.parametrize("condition", ["max", "collusive"])
def test_attackers_decision_ids_differ_between_the_cells_of_two_models(condition: str) -> None:
    """The attackers (bot/max, bot/collusive-attacker) play alike beside every model; their
    decisions in two models' cells still get two ids (issue 41 item 1), while the honest
    model's ids stay the hash of the position without the population (unchanged cache keys)."""
    a = _play(_one("donation", condition, "bot/always-cooperate"))["decisions"]
    b = _play(_one("donation", condition, "bot/always-defect"))["decisions"]
    attackers = a.filter(pl.col("agent") != "bot/always-cooperate")
    assert attackers.height > 0
    assert set(attackers["agent"]) == set(b.filter(pl.col("agent") != "bot/always-defect")["agent"])
    assert not set(a["decision_id"]) & set(b["decision_id"])
    assert a["decision_id"].n_unique() == a.height


CONFIGS = Path(__file__).resolve().parents[3] / "config"
PAPER_CONFIG = CONFIGS / "paper.yaml"


@pytest.mark.parametrize("name", ["smoke", "config", "paper"])
def test_example_sections_validate(name: str) -> None:
    import yaml

    config = yaml.safe_load((CONFIGS / f"{name}.yaml").read_text())
    cells = STUDY.cells(config)
    assert cells
    if name == "smoke":
        assert {c["testbed"] for c in cells} == {"donation", "pd", "trust", "market"}
        assert not any(c["condition"]["attacker"] != "none" for c in cells if c["testbed"] in ("trust", "market"))


def test_smoke_section_plays_with_oracles() -> None:
    import yaml

    cells = STUDY.cells(yaml.safe_load((CONFIGS / "smoke.yaml").read_text()))
    runs = []
    for cell in cells:
        runs.append(_play(cell)["gossip_run_metrics"])
    frame = pl.concat(runs)
    donation = frame.filter((pl.col("testbed") == "donation") & (pl.col("condition") == "align"))
    coop = donation.filter(pl.col("model") == "bot/always-cooperate").row(0, named=True)
    assert coop["discounted_return_mean"] == pytest.approx(15.4381, abs=5e-5) and coop["gini"] == pytest.approx(0.0037, abs=5e-5)
    defect = donation.filter(pl.col("model") == "bot/always-defect").row(0, named=True)
    assert defect["discounted_return_mean"] == 0 and math.isnan(defect["gini"])


def test_separate_reflection_call() -> None:
    tables = _play(_one("donation", "reflection_call", "fake/gossip"), agent=FakeGossipLLM())
    assert tables["llm_calls"].height == 36 * 3
    assert set(tables["decisions"]["kind"]) == {"reflection", "donor_action", "gossip"}
    actions = [json.loads(p)[0]["content"] for p, k in zip(tables["llm_calls"]["prompt"], tables["llm_calls"]["kind"], strict=False) if k == "donor_action"]
    assert all("Your reflection before this decision: I should weigh my reputation." in a for a in actions)


def test_third_party_praise_flag() -> None:
    rounds = _play(_one("donation", "collusive_third_party", "bot/always-cooperate"))["gossip_rounds"]
    against_honest = rounds.filter((pl.col("second_kind") == "attacker") & (pl.col("first_kind") == "honest"))
    assert against_honest.height and all("By contrast" in m for m in against_honest["second_message"])


def test_memory_is_first_person_with_own_justification_and_donor_stock_ratio() -> None:
    tables = _play(_one("donation", "align", "bot/honest-gossiper", matching="align_sweep"))
    prompts = [json.loads(p)[0]["content"] for p in tables["llm_calls"]["prompt"]]
    # round 3 donor prompt (John) holds his round-1 donor and round-2 recipient entries
    third = prompts[4]
    assert "1. Round 1: I was the donor and Kate the recipient" in third
    assert "I paid 1 unit(s) (10% of my units)" in third and "My reasoning then: scripted" in third
    assert "2. Round 2: I was the recipient and Jack the donor" in third and "(10% of Jack's units)" in third
    assert "Round 1, Kate about John: [praising]" in third


def test_pd_full_cooperation_returns() -> None:
    tables = _play(_one("pd", "align", "bot/always-cooperate", matching="align_sweep"))
    agents = tables["gossip_agent_metrics"]
    expected = 4 * (1 + 0.99 + 0.99**2 + 0.99**3)
    assert all(abs(g - expected) < 1e-9 for g in agents["discounted_return"])
    assert set(agents["image_score"]) == {4.0} and set(agents["return"]) == {16.0}
    rounds = tables["gossip_rounds"]
    assert rounds["first_tone"].is_not_null().all() and rounds["second_tone"].is_not_null().all()


class OnePlayerOnly(FakeGossipLLM):
    """A stateful fake: remembers the first player it answers for and refuses any other."""

    def __init__(self) -> None:
        super().__init__()
        self.player: str | None = None

    def for_seat(self) -> OnePlayerOnly:
        import copy

        return copy.deepcopy(self)

    async def generate(self, request: Any) -> Any:
        player = str(request.position["player"])
        self.player = self.player or player
        assert self.player == player, f"one agent instance answered for {self.player} and {player}"
        return await super().generate(request)


def test_every_population_member_has_its_own_agent_instance() -> None:
    """Issue 13 kind 9: a stateful agent would see every member's turns if they shared it."""
    tables = _play(_one("donation", "align", "fake/gossip"), agent=OnePlayerOnly())
    assert tables["decisions"].height > 0 and tables["decisions"]["agent"].n_unique() == 1


def test_a_voided_round_keeps_the_discount_index_of_later_rewards() -> None:
    """A failed action voids its round but stays one of both agents' interactions (reward 0):
    G_i = Σ_k γ^k r_i^(k) over every scheduled interaction, recomputed here from the round rows."""
    voided = frozenset({2, 5, 11})
    tables = _play(_one("donation", "align", "fake/gossip"), agent=FakeGossipLLM(bad_rounds=voided))
    rounds = tables["gossip_rounds"].sort("round")
    assert set(rounds.filter(pl.col("status") == "failed_action")["round"]) == voided
    gamma = 0.99
    expected: dict[str, float] = {}
    skipping: dict[str, float] = {}
    index: dict[str, int] = {}
    played: dict[str, int] = {}
    for row in rounds.iter_rows(named=True):
        for agent, reward in ((row["first_agent"], row["first_reward"]), (row["second_agent"], row["second_reward"])):
            ok = row["status"] != "failed_action"
            r = float(reward) if ok else 0.0
            expected[agent] = expected.get(agent, 0.0) + gamma ** index.get(agent, 0) * r
            index[agent] = index.get(agent, 0) + 1
            if ok:
                skipping[agent] = skipping.get(agent, 0.0) + gamma ** played.get(agent, 0) * r
                played[agent] = played.get(agent, 0) + 1
    metrics = tables["gossip_agent_metrics"]
    for row in metrics.iter_rows(named=True):
        assert row["discounted_return"] == pytest.approx(expected[row["agent"]], abs=1e-12)
        assert row["n_interactions"] == played[row["agent"]]
        assert row["n_voided"] == index[row["agent"]] - played[row["agent"]]
    assert metrics["n_voided"].sum() == 2 * len(voided)
    assert any(abs(expected[a] - skipping[a]) > 1e-6 for a in expected)  # the index matters here


def test_paper_grid_is_the_one_the_paper_ran() -> None:
    """Tables 1-2 come from code that keeps the tone out of the log: the grid runs `tone_hidden`
    and `no_gossip` on the donation game; DeepSeek-V3.1 Reasoner is V3.1 with reasoning on, not R1
    (issue 21 item 9)."""
    import yaml

    cells = STUDY.cells(yaml.safe_load(PAPER_CONFIG.read_text()))
    donation = {(c["condition"]["name"], c["model"].get("label")) for c in cells if c["testbed"] == "donation"}
    labels = {label for _, label in donation}
    assert len(labels) == 8
    assert all((cond, label) in donation for cond in ("tone_hidden", "no_gossip") for label in labels)
    assert not any(c["condition"]["show_tone"] for c in cells if c["condition"]["name"] == "tone_hidden")
    reasoner = {c["model"]["model"]: c["model"]["params"] for c in cells if c["model"].get("label") == "deepseek-v3.1-reasoner"}
    assert reasoner == {"openrouter/deepseek/deepseek-chat-v3.1": {"extra_body": {"reasoning": {"enabled": True}}}}
    assert {c["replicate"] for c in cells} == {1, 2, 3, 4, 5} and {c["matching"] for c in cells} == {"align_sweep"}


def test_default_run_gives_every_gossip_figure_data() -> None:
    """config/config.yaml is sized so that each figure has something to show (issue 21 item 10):
    at least two honest decisions toward Max (one point per Max interaction index), a γ sweep of
    two values on both sides of c/b = 0.2, attackers, and the gossip on/off contrast."""
    import yaml

    cells = STUDY.cells(yaml.safe_load((CONFIGS / "config.yaml").read_text()))
    tables = {c["condition"]["name"]: _play({**c, "model": {"model": "bot/always-cooperate"}}) for c in cells}
    toward_max = tables["max"]["gossip_rounds"].filter(pl.col("second_agent") == "Max")
    assert toward_max["second_index"].n_unique() >= 2
    gammas = sorted(c["condition"]["gamma"] for c in cells if c["condition"]["name"].startswith("gamma="))
    assert len(gammas) >= 2 and gammas[0] < 0.2 < gammas[-1]
    assert {"align", "no_gossip"} <= set(tables)
    assert (tables["max"]["gossip_agent_metrics"]["kind"] != "honest").any()
