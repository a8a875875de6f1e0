"""``coopeval check-answer`` for every decision kind of the gossip and evolution studies (issue 21
item 13): the same parser and limits as a run, context from flags, amounts in units."""

from __future__ import annotations

import json

import pytest

from coopeval.cli import build_parser, main
from coopeval.studies.evolution.donations import donation_format_for
from coopeval.studies.evolution.settings import EvolutionSettings
from coopeval.studies.gossip import formats as gossip
from tests.helpers import play_study_cell, study_cells


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict | None, str]:
    code = main(["check-answer", *argv])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def _kind_choices() -> set[str]:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    check = sub.choices["check-answer"]  # type: ignore[attr-defined]
    return set(next(a for a in check._actions if a.dest == "kind").choices)


def test_every_kind_a_study_records_is_a_check_answer_kind() -> None:
    """Plays one bot cell of each gossip testbed (with gossip, reflection call and binary signal)
    and an evolution run of both protocols, and checks every recorded decision kind is offered."""
    config = {
        "seed": 1,
        "gossip": {
            "testbeds": ["donation", "pd", "trust", "market"],
            "conditions": ["reflection_call", "binary_convention"],
            "models": [{"model": "bot/always-cooperate"}],
            "testbed_params": {"donation": {"n": 4}, "pd": {"n": 4}, "trust": {"n": 4}, "market": {"n_sellers": 2, "n_buyers": 2}},
        },
        "evolution": {"protocols": ["vh", "horibe"], "models": [{"model": "bot/evo-reciprocal"}], "n_agents": 4, "generations": 1},
    }
    kinds: set[str] = set()
    for study in ("gossip", "evolution"):
        for cell in study_cells(study, config):
            tables, _ = play_study_cell(study, cell)
            kinds |= set(tables["decisions"]["kind"].to_list())
    assert {"donor_action", "gossip", "investor_action", "responder_action", "seller_action", "strategy", "donation"} <= kinds
    assert kinds <= _kind_choices()


def test_vh_thousands_and_the_all_in_amount(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--kind", "donation", "--protocol", "vh", "--holdings", "2414.797", "Answer: 1,207.40"], capsys)
    assert code == 0 and out is not None and out["parsed"]["amount"] == pytest.approx(1207.4) and "percent" not in out["parsed"]
    # The prompt shows 182.97 for holdings 182.96875: that figure is accepted and gives everything.
    code, out, _ = run(["--kind", "donation", "--protocol", "vh", "--holdings", "182.96875", "Answer: 182.97"], capsys)
    assert code == 0 and out is not None and out["parsed"]["amount"] == 182.96875
    code, out, _ = run(["--kind", "donation", "--protocol", "vh", "--holdings", "10", "Answer: 1,5"], capsys)
    assert code == 1 and out is not None and out["parsed"] is None and "1,5" in out["error"]


def test_horibe_percent_of_current_and_of_endowment(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--kind", "donation", "--protocol", "horibe", "--holdings", "40", "Justification: fair. Answer: 25%"], capsys)
    assert code == 0 and out is not None and out["parsed"]["percent"] == 25.0 and out["parsed"]["amount"] == 10.0
    # percent_base endowment: 5 units held of an endowment of 10 allow at most 50 % (of 10).
    argv = ["--kind", "donation", "--protocol", "horibe", "--percent-base", "endowment", "--holdings", "5"]
    code, out, _ = run([*argv, "Answer: 30"], capsys)
    assert code == 0 and out is not None and out["parsed"]["amount"] == pytest.approx(3.0)
    code, out, _ = run([*argv, "Answer: 60"], capsys)
    assert code == 1 and out is not None and out["parsed"] is None
    fmt = donation_format_for(EvolutionSettings.from_params({"protocol": "horibe", "percent_base": "endowment"}), 5.0)
    assert (fmt.unit, fmt.limit) == ("percent", 50.0)


def test_matrix_probe_defaults_to_the_probe_resources(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--kind", "matrix_probe", "--protocol", "horibe", "Answer: 30"], capsys)
    assert code == 0 and out is not None and out["parsed"]["amount"] == pytest.approx(3.0)


def test_gossip_kinds_use_the_study_formats(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--kind", "buyer_action", '{"justification": "ok", "buyer_action": "NONE"}'], capsys)
    assert code == 0 and out is not None and out["parsed"] == {"justification": "ok", "buyer_action": "none"}
    code, out, _ = run(["--kind", "responder_action", "--received", "15", '{"justification": "ok", "responder_action": 15.5}'], capsys)
    assert code == 1 and out is not None and "between 0 and 15" in out["error"]
    assert gossip.responder_format(15.0).high == 15.0


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--kind", "donation", "--holdings", "3"], "--protocol"),
        (["--kind", "donation", "--protocol", "vh"], "--holdings"),
        (["--kind", "investor_action"], "--resources"),
        (["--kind", "donation", "--protocol", "xx", "--holdings", "3"], "--protocol"),
        (["--kind", "donation", "--protocol", "vh", "--variant", "bad", "--holdings", "3"], "--variant"),
        (["--kind", "donation", "--protocol", "horibe", "--percent-base", "endowment", "--endowment", "-3", "--holdings", "10"], "--endowment"),
        (["--kind", "donation", "--protocol", "vh", "--holdings", "inf"], "--holdings"),
        (["--kind", "donation", "--protocol", "vh", "--holdings", "nan"], "--holdings"),
        (["--kind", "investor_action", "--resources", "nan"], "--resources"),
        (["--kind", "responder_action", "--received", "-1"], "--received"),
        (["--kind", "matrix_probe", "--protocol", "vh", "--variant", "costly_punishment"], "--variant"),
    ],
)
def test_missing_or_bad_context_is_a_usage_error_naming_the_flag(
    argv: list[str], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run([*argv, "Answer: 1"], capsys)
    assert code == 2 and out is None and flag in err
