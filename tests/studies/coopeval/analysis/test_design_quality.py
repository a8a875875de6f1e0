"""NS / WD checks of mediator and contract designs (docs/protocol/design-checks.md#ns-wd), on hand-computed cases and on a few
designs submitted in the released run1 data (reasoned by hand in the comments)."""

from __future__ import annotations

import itertools
import json

import pytest

from coopeval.games import Game, get_game
from coopeval.games.designs import (
    contract_ns,
    contract_payoffs,
    contract_wd,
    design_checks,
    mediator_ns,
    mediator_payoffs,
    mediator_wd,
    parse_contract,
    parse_mediator,
)
from coopeval.studies.coopeval.reference.importer.layout import reference_enum_members
from tests.shared_data import RUN1_SAMPLE

PD, PGG, TD, TG, SH = (get_game(k) for k in ("prisoners_dilemma", "public_goods", "travellers_dilemma", "trust_game", "stag_hunt"))


# ----------------------------------------------------------------------------------------------
# Contracts


def test_contract_payoffs_transfer_rule() -> None:
    # PD (C, D) with {C: 0, D: −2}: D pays 2 to C → C: 0 + 2 = 2, D: 3 − 2 = 1
    assert contract_payoffs(PD, {"A0": 0, "A1": -2}, (0, 1)) == (2.0, 1.0)
    # PGG (C, C, F) with {C: 1, F: 0}: each C gets +1 and pays 1/2 to the other C
    # C: 1.0 + 1 − 1/2 = 1.5 ; F: 2.0 − (1 + 1)/2 = 1.0
    assert contract_payoffs(PGG, [1, 0], (0, 0, 1)) == (1.5, 1.5, 1.0)


@pytest.mark.parametrize(
    ("game", "contract", "ns", "wd"),
    [
        # PD {C: 0, D: −2}: CC = 2; D vs C: 3 − 2 = 1 → NS. vs C: C 2 > D 1; vs D: C 0 + 2 = 2 > D 1 − 2 + 2 = 1 → WD
        (PD, {"A0": 0, "A1": -2}, True, True),
        # PD {C: 1, D: 0}: CC = 2 + 1 − 1 = 2; D vs C: 3 − 1 = 2 (no gain) → NS; vs C: 2 = 2, vs D: 1 = 1 → never strictly better
        (PD, {"A0": 1, "A1": 0}, True, False),
        # PD {C: 2, D: 0}: D vs C: 3 − 2 = 1 < 2 → NS; vs D: C 0 + 2 = 2 > 1 → WD
        (PD, {"A0": 2, "A1": 0}, True, True),
        # no contract: D vs C gives 3 > 2
        (PD, {"A0": 0, "A1": 0}, False, False),
        # PGG {C: 1, F: 0}: with k other contributors, C gives 0.5(k+1) + 1 − k/2 = 1.5 and F gives 1 + 0.5k − k/2 = 1
        (PGG, {"A0": 1, "A1": 0}, True, True),
        (PGG, {"A0": 0, "A1": 0}, False, False),
        # TD {2: 0, 3: 0, 4: 0, 5: 10}: claiming 5 earns ≥ 0 + 10 − c[y], any other claim ≤ 6 − c[y]
        (TD, {"A0": 0, "A1": 0, "A2": 0, "A3": 10}, True, True),
        # Trust {G: 6, K: 0}: P2 deviating to K gets 20 − 6 = 14 > 10
        (TG, {"A0": 6, "A1": 0}, False, False),
    ],
)
def test_contract_hand_cases(game: Game, contract: dict[str, int], ns: bool, wd: bool) -> None:
    assert contract_ns(game, contract) is ns
    assert contract_wd(game, contract) is wd


def test_contract_tolerance() -> None:
    # PD {C: 1 − ε, D: 0}: defecting against C gains ε; ε = 1e-12 is within the 1e-9 tolerance, 1e-6 is not
    assert contract_ns(PD, {"A0": 1 - 1e-12, "A1": 0})
    assert not contract_ns(PD, {"A0": 1 - 1e-6, "A1": 0})


def test_contract_validation() -> None:
    with pytest.raises(ValueError, match="exactly the 2 base actions"):
        parse_contract(PD, {"A0": 1})
    with pytest.raises(ValueError, match="not a finite number"):
        parse_contract(PD, {"A0": True, "A1": 0})
    with pytest.raises(ValueError, match="out of range"):
        parse_contract(PD, {"A0": 1, "A2": 0})
    assert parse_contract(TD, [0, 1, 2, 3]) == (0.0, 1.0, 2.0, 3.0)


# ----------------------------------------------------------------------------------------------
# Mediators


def test_mediator_payoffs_resolution() -> None:
    m = {1: "A1", 2: "A0"}
    assert mediator_payoffs(PD, m, (2, 2)) == (2.0, 2.0)  # both delegate → mapping[2] = C
    assert mediator_payoffs(PD, m, (2, 0)) == (3.0, 0.0)  # lone delegator → mapping[1] = D
    assert mediator_payoffs(PD, m, (1, 0)) == (3.0, 0.0)  # nobody delegates: base game
    with pytest.raises(ValueError, match=r"outside 0\.\.2"):
        mediator_payoffs(PD, m, (3, 0))


@pytest.mark.parametrize(
    ("game", "mapping", "ns", "wd"),
    [
        # PD {1: D, 2: C}: deviating from (M, M) meets D → C gets 0, D gets 1 < 2 → NS.
        # Delegating vs C: better everywhere (3>2, 1>0, 2>0); vs D: 3=3, 1=1, 2>1 → WD
        (PD, {1: "A1", 2: "A0"}, True, True),
        # PD {1: C, 2: C}: deviating to D meets C → 3 > 2
        (PD, {1: "A0", 2: "A0"}, False, False),
        # mapping[N] not cooperative → both false by definition
        (PD, {1: "A1", 2: "A1"}, False, False),
        # PGG {1: F, 2: F, 3: C}: deviating makes the other two free-ride → 1.0 (F) or 0.5 (C) < 1.5; WD as in PD
        (PGG, {1: "A1", 2: "A1", 3: "A0"}, True, True),
        # PGG {1: F, 2: C, 3: C}: deviating to F leaves two contributors → 2.0 > 1.5
        (PGG, {1: "A1", 2: "A0", 3: "A0"}, False, False),
        # TD {1: claim 2, 2: claim 5}: any deviation meets claim 2 → ≤ 2 < 5 → NS; but against a claim of 5
        # claiming 4 earns 6 while delegating alone plays 2 and earns 4 → not WD
        (TD, {1: "A0", 2: "A3"}, True, False),
        # Trust {1: K, 2: G}: deviations meet K → P1 ≤ 4, P2 ≤ 4 < 10 → NS; P1 vs P2 playing G: delegating
        # alone plays K (6) < G (10) → not WD
        (TG, {1: "A1", 2: "A0"}, True, False),
    ],
)
def test_mediator_hand_cases(game: Game, mapping: dict[int, str], ns: bool, wd: bool) -> None:
    assert mediator_ns(game, mapping) is ns
    assert mediator_wd(game, mapping) is wd


@pytest.mark.parametrize("game", [TD, TG, SH])
def test_no_weakly_dominant_mediator_exists(game: Game) -> None:
    # Paper Fig. 18: for Traveller's and Trust no mediator design is WD (theoretically impossible)
    for values in itertools.product(range(game.n_actions), repeat=game.n_players):
        mapping = {d + 1: v for d, v in enumerate(values)}
        assert not mediator_wd(game, mapping)


def test_exactly_one_weakly_dominant_mediator_in_pd_and_pgg() -> None:
    for game in (PD, PGG):
        wd = [values for values in itertools.product(range(game.n_actions), repeat=game.n_players)
              if mediator_wd(game, {d + 1: v for d, v in enumerate(values)})]
        # the grim mediator: defect unless everyone delegates
        assert wd == [tuple([1] * (game.n_players - 1) + [0])]


def test_mediator_validation() -> None:
    with pytest.raises(ValueError, match=r"exactly 1\.\.2"):
        parse_mediator(PD, {1: "A0"})
    with pytest.raises(ValueError, match="A2"):
        parse_mediator(PD, {1: "A2", 2: "A0"})  # the delegate token is not a base action
    assert parse_mediator(PD, {"1": "A1", "2": 0}) == {1: 1, 2: 0}


def test_design_checks_on_stored_json() -> None:
    assert design_checks(PD, "mediator", '{"1": "A1", "2": "A0"}') == {"NS": True, "WD": True}
    assert design_checks(PD, "contract", {"A0": 0, "A1": -1}) == {"NS": True, "WD": False}
    with pytest.raises(ValueError, match="design_kind"):
        design_checks(PD, "treaty", "{}")


# ----------------------------------------------------------------------------------------------
# Designs submitted in run1, reasoned by hand


def _run1_design(experiment: str, designer: str) -> dict[str, object]:
    path = RUN1_SAMPLE / experiment / ("contract_design.json" if experiment.startswith("contracting") else "mediator_design.json")
    return json.loads(path.read_text())[designer]  # type: ignore[no-any-return]


def _tokens(game: Game, contract: dict[str, int]) -> dict[str, int]:
    return {f"A{reference_enum_members(game).index(k.split('.', 1)[1])}": v for k, v in contract.items()}


@pytest.mark.parametrize(
    ("experiment", "designer", "game", "ns", "wd"),
    [
        # PD {C: 0, D: −1} (Claude P2): D vs C gives 3 − 1 = 2 = CC → NS (no strict gain);
        # vs C: 2 = 2, vs D: C 0 + 1 = 1 = D 1 − 1 + 1 → never strictly better → not WD
        ("contracting_prisoners_dilemma", "anthropic/claude-sonnet-4.5(CoT)#P2", PD, True, False),
        # TD {2: −10, 3: −5, 4: −2, 5: 0} (Claude P2): deviations earn at most 6 − 2 = 4 < 5 → NS; claiming 5
        # never does worse: each lower claim's penalty covers its base-payoff gain (equality only
        # for claim 4 vs 4: 2 = 4 − 2), and claim 5 is strictly better against a claim of 2 → WD
        ("contracting_travellers_dilemma", "anthropic/claude-sonnet-4.5(CoT)#P2", TD, True, True),
        # Trust {G: 0, K: −10} (Claude P2): P2 keeping earns 20 − 10 = 10 = GG → NS; vs P1 K, P2 giving earns 2 + 10
        # > 4 − 10 + 10 → WD for P2, and P1: G 10 > K −4, G 0 + 10 > K 4 → WD
        ("contracting_trust_game", "anthropic/claude-sonnet-4.5(CoT)#P2", TG, True, True),
        # Trust {G: 6, K: 0} (Claude P1): P2 keeping earns 20 − 6 = 14 > 10 → neither
        ("contracting_trust_game", "anthropic/claude-sonnet-4.5(CoT)#P1", TG, False, False),
    ],
)
def test_run1_contracts(experiment: str, designer: str, game: Game, ns: bool, wd: bool) -> None:
    contract = _tokens(game, _run1_design(experiment, designer)["contract"])  # type: ignore[arg-type]
    assert contract_ns(game, contract) is ns
    assert contract_wd(game, contract) is wd


@pytest.mark.parametrize(
    ("experiment", "designer", "game", "ns", "wd"),
    [
        # PD {1: D, 2: C} (Gemini-R P1): the grim mediator → NS and WD (see the hand case above)
        ("mediation_prisoners_dilemma", "google/gemini-3-flash-preview(CoT)#P1", PD, True, True),
        # PD {1: C, 2: C} (GPT-4o P1): defecting against the lone delegator's C earns 3 > 2
        ("mediation_prisoners_dilemma", "openai/gpt-4o-2024-05-13(CoT)#P1", PD, False, False),
    ],
)
def test_run1_mediators(experiment: str, designer: str, game: Game, ns: bool, wd: bool) -> None:
    pairs = _run1_design(experiment, designer)["mediator"]
    mapping = {k: reference_enum_members(game).index(v.split(".", 1)[1]) for k, v in pairs}  # type: ignore[union-attr]
    assert mediator_ns(game, mapping) is ns
    assert mediator_wd(game, mapping) is wd
